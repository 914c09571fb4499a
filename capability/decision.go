package capability

import (
	"encoding/json"
	"fmt"

	"github.com/spear-shell/spear-shell/mcpstdio"
	"github.com/spear-shell/spear-shell/policy"
)

// The answers decide once and render twice: the deciding code (show.go, search.go,
// invoke.go) fills one of these values in the answer, with every audit record written, and
// then the shell's renderer (render.go) prints it as text, or the MCP face (capability/mcpface)
// renders it as an MCP result. Neither renderer decides anything.

// Refusal is a code with its reason: the line `spear-capability: CODE: REASON`.
type Refusal struct {
	Code, Reason string
}

// Line is the refusal as the shell prints it (without the newline).
func (r Refusal) Line() string { return "spear-capability: " + r.Code + ": " + r.Reason }

// Entry is one capability of the family as the turn is shown it. Description, Input and
// Output are the provider's, not yet cleaned: each renderer cleans and bounds them.
type Entry struct {
	ID, Provider, Tool string
	Class              string // READ or WRITE, from the configuration only
	Description        string
	Input, Output      json.RawMessage // compact; Output nil when absent
	WritePolicy        string          // the provider's write policy (refuse, confirm, allow)
	PermissionMode     string          // the manifest's
	Gate               policy.Gate     // what a call meets now: run, ask, auto-approved or refuse
}

// NeedsConfirmation says whether a call would ask the approver.
func (e Entry) NeedsConfirmation() bool { return e.Gate == policy.GateAsk }

// Down is a provider left out for the rest of the turn, and what the turn is told of it.
type Down struct {
	Provider, Reason string
	// ForNow: a shared entry whose server is down (SPEC 14), back once the broker restarts it;
	// otherwise the provider is out for the rest of the turn.
	ForNow bool
}

// Line is how a listing says it: one sentence.
func (d Down) Line() string {
	if d.ForNow {
		return fmt.Sprintf("Provider %s is unavailable for now: %s.", d.Provider, d.Reason)
	}
	return fmt.Sprintf("Provider %s is unavailable for the rest of this turn: %s.", d.Provider, d.Reason)
}

// Listing is what the turn is shown: `list`, --context, and the face's tools/list.
type Listing struct {
	Mode     string // "whole" or "index"
	Entries  []Entry
	Unusable []string // per provider, a sentence on the tools it lists that cannot be called
	Down     []Down
}

// SearchPage is one page of a search (SPEC 2.6). Its entries carry ID, Provider, Tool, Class
// and the description's first line only.
type SearchPage struct {
	Words    []string
	Limit    int
	Entries  []Entry
	First    int    // the position of the first entry among the matches
	Admitted int    // the family's size
	Matched  int    // how many match any word
	Next     string // the cursor of the next page; "" on the last
	Down     []Down
}

// Described is one id of a describe: its entry, or its refusal.
type Described struct {
	Target        string
	Entry         *Entry   // nil when refused
	SchemaProblem string   // why the input schema cannot be used, when it cannot
	Refusal       *Refusal // nil when described
}

// CallOutcome is an invocation that reached its call: the provider's answer or what became of
// the call, recorded under AuditID.
type CallOutcome struct {
	Capability, Provider string
	AuditID              string
	Code, Reason         string               // "" when the call succeeded
	Result               *mcpstdio.CallResult // nil when the provider gave none
	Body                 string               // the result as text, cleaned and bounded (ResultLimit)
	Full                 int                  // the text's size before the bound
	Framed               bool                 // the shell frames Body (a result, tool-error, invalid-output)
}

// Preflight is whether an invocation would go ahead now (spear_preflight).
type Preflight struct {
	Capability string
	Decision   string // "ok", "needs-confirmation" or the refusal code
	Reason     string // for a refusal
}

// Preflight decisions besides the refusal codes.
const (
	PreflightOK                = "ok"
	PreflightNeedsConfirmation = "needs-confirmation"
)
