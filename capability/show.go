package capability

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spear-shell/spear-shell/audit"
	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/policy"
)

// prelude runs the checks shared by every answer: load, no-capabilities, audit-unavailable.
// It returns a code to stop with, or "".
func (t *Turn) prelude(a *answer) string {
	t.load()
	e := t.env
	if e.None != "" {
		return a.refuse(CodeNoCapabilities, e.None)
	}
	if moved := e.Rescope(); moved != "" {
		return a.refuse(CodeNoCapabilities, providers.NothingOffered+" ("+moved+")")
	}
	if e.Audit == nil {
		return a.auditUnavailable(e.AuditErr)
	}
	return ""
}

// list answers `list` and --context (via says which): what the turn is shown, decided into
// a.listing.
func (t *Turn) list(ctx context.Context, a *answer, via string) string {
	if code := t.prelude(a); code != "" {
		if code == CodeNoCapabilities && via == "context" {
			a.printf("%s.\n", t.env.None)
		}
		return code
	}
	e := t.env
	if !t.family(ctx, a, e.order, nil) {
		return t.interrupted(a, "", "")
	}
	tools := e.visible()
	l := &Listing{Mode: e.mode, Entries: make([]Entry, len(tools)), Unusable: e.unusableLines(), Down: e.downList()}
	for i, tl := range tools {
		l.Entries[i] = e.entryOf(tl)
	}
	var down []string
	for _, d := range l.Down {
		down = append(down, d.Provider)
	}
	if err := e.Log(audit.Event{Name: audit.EventIndexExposed, Mode: e.mode,
		Fields: map[string]any{"via": via, "count": len(tools), "unavailable": down}}); err != nil {
		return a.auditUnavailable(err)
	}
	a.listing = l
	return ""
}

// entryOf is a capability as the turn is shown it.
func (e *turnEnv) entryOf(tl *tool) Entry {
	en := Entry{ID: tl.id, Provider: tl.prov.cfg.ID, Tool: tl.name, Class: tl.class, Description: tl.desc,
		Input: tl.input, Output: tl.output, PermissionMode: e.Manifest.PermissionMode, Gate: policy.GateRun}
	if tl.class != "READ" {
		en.WritePolicy = tl.prov.cfg.Write
		en.Gate = policy.WriteGate(tl.prov.cfg.Write, e.Manifest.PermissionMode)
	}
	return en
}

// downList is every provider left out for the rest of the turn, in registry order.
func (e *turnEnv) downList() []Down {
	var out []Down
	for _, id := range e.order {
		if p := e.provs[id]; p.down != "" {
			out = append(out, Down{Provider: id, Reason: p.down})
		} else if p.unavail != "" {
			out = append(out, Down{Provider: id, Reason: p.unavail, ForNow: true})
		}
	}
	return out
}

// writeNote tells a WRITE capability's policy in a listing.
func writeNote(en Entry) string {
	if en.Class != "WRITE" {
		return ""
	}
	return " (write policy " + en.WritePolicy + ": " + gateMeaning(en.Gate) + ")"
}

func gateMeaning(g policy.Gate) string {
	switch g {
	case policy.GateRun:
		return "calls run"
	case policy.GateAsk:
		return "each call runs only if the approver confirms it"
	case policy.GateAutoApproved:
		return "calls run, recorded as auto-approved"
	}
	return "calls are refused"
}

func indent(s, pre string) string {
	return pre + strings.ReplaceAll(s, "\n", "\n"+pre)
}

// describe answers `describe`: the known capabilities are described, the others refused,
// each decided into a.described.
func (t *Turn) describe(ctx context.Context, a *answer, targets []string) string {
	if code := t.prelude(a); code != "" {
		return code
	}
	e := t.env
	only := map[string][]string{}
	asked := map[string]bool{}
	var ids []string
	for _, tg := range targets {
		if id, name, ok := strings.Cut(tg, "/"); ok && e.provs[id] != nil && !asked[tg] {
			asked[tg] = true
			if _, seen := only[id]; !seen {
				ids = append(ids, id)
			}
			only[id] = append(only[id], name)
		}
	}
	if !t.family(ctx, a, ids, only) {
		return t.interrupted(a, "", "")
	}
	worst := ""
	for _, tg := range targets {
		tl, code, reason := t.lookup(tg)
		if code == "" && !e.pinMatches(tl) {
			code, reason = CodeDefinitionChanged, tg+": the tool's definition changed since this turn's family was selected"
		}
		if code != "" {
			ev := audit.Event{Code: code, Reason: reason, Capability: boundName(tg)}
			if c := a.refuseEv(ev); c == CodeAuditUnavailable {
				a.described = nil
				return c
			}
			a.described = append(a.described, Described{Target: tg, Refusal: &Refusal{code, reason}})
			if worst == "" || order(code) < order(worst) {
				worst = code
			}
			continue
		}
		if err := e.Log(audit.Event{Name: audit.EventDescribed, Provider: tl.prov.cfg.ID,
			Capability: tl.id, Class: tl.class, Mode: e.mode}); err != nil {
			a.described = nil
			return a.auditUnavailable(err)
		}
		_, _ = e.State.Create(providers.DescribedFact(tl.id), nil)
		en := e.entryOf(tl)
		a.described = append(a.described, Described{Target: tg, Entry: &en, SchemaProblem: e.schemas.Problem(tl.input)})
	}
	return worst
}

// describeMax bounds each of a description's parts (description, input and output schema),
// as ResultLimit bounds a result: a provider cannot flood the turn through its definitions.
const describeMax = ResultLimit

func prettyJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return clean(string(raw))
	}
	return clean(b.String())
}

// lookup finds a capability of the family: unknown-capability, then unavailable.
func (t *Turn) lookup(target string) (*tool, string, string) {
	e := t.env
	id, name, ok := strings.Cut(target, "/")
	unknown := fmt.Sprintf("%s: no such capability is offered to this turn", boundName(target))
	p := e.provs[id]
	if !ok || p == nil {
		return nil, CodeUnknown, unknown
	}
	if p.down != "" {
		return nil, CodeUnavailable, fmt.Sprintf("%s: provider %s is unavailable for the rest of this turn: %s", boundName(target), id, p.down)
	}
	if p.unavail != "" {
		return nil, CodeUnavailable, fmt.Sprintf("%s: provider %s is unavailable: %s", boundName(target), id, p.unavail)
	}
	tl := p.byName[name]
	if tl == nil {
		if _, pinned := e.pin(id, name); pinned && validToolName(name) {
			return nil, CodeDefinitionChanged, fmt.Sprintf("%s: the tool is no longer listed by its provider", boundName(target))
		}
		if why := p.unusableReason(target, name); why != "" {
			return nil, CodeUnknown, why
		}
		return nil, CodeUnknown, unknown
	}
	if !e.pinned(tl) {
		return nil, CodeUnknown, unknown + " (it is not part of this turn's family)"
	}
	return tl, "", ""
}

// order is a code's place in SPEC 5's order of checks.
func order(code string) int {
	for i, c := range []string{CodeNotAlone, CodeMalformed, CodeNoCapabilities, CodeAuditUnavailable, CodeUnknown,
		CodeUnavailable, CodeNotDescribed, CodeInvalidArguments, CodeWriteRefused, CodeDefinitionChanged,
		CodeNotConfirmed, CodeToolError, CodeInvalidOutput, CodeTimeout} {
		if c == code {
			return i
		}
	}
	return 100
}
