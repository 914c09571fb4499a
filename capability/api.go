// Package capability answers recognised spear-capability invocations for one agent turn:
// it selects the turn's family of provider tools, lists, describes and invokes them after the
// checks of SPEC 5, frames and cleans what providers return, and audits every decision. It is
// layer 5 of the capability side, on the provider core (capability/providers, layer 2) and the
// clients of the keeper and the broker (capability/keeper, capability/broker, layer 4); it never
// imports anything under interp/, the MCP face or the importer.
package capability

import (
	"cmp"
	"context"
	"io"
	"sync"
	"time"

	"github.com/spear-shell/spear-shell/audit"
	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/capability/search"
)

// Request is one recognised invocation, as recognition hands it over.
type Request struct {
	Verb      string   // "list", "search", "describe" or "invoke"
	Targets   []string // describe: one or more "<id>/<tool>"; invoke: exactly one
	Arguments string   // invoke: the JSON object text
	Words     []string // search: at least one
	Limit     int      // search: 1-50 (0: the default, 20)
	Cursor    string   // search: as a previous page printed it, or ""
	Source    string   // the invocation's source text
}

// Settings is what the caller knows before anything is loaded: the turn's settings, and the
// schema helper that judges what the native validator does not.
type Settings struct {
	providers.Settings
	SchemaHelper string // the spear-shell-schema helper; "" = schema.HelperName beside the running executable
}

// Answer codes (SPEC 5).
const (
	CodeNotAlone          = "not-alone"
	CodeMalformed         = "malformed"
	CodeNoCapabilities    = "no-capabilities"
	CodeAuditUnavailable  = "audit-unavailable"
	CodeUnknown           = "unknown-capability"
	CodeUnavailable       = "unavailable"
	CodeNotDescribed      = "not-described"
	CodeInvalidArguments  = "invalid-arguments"
	CodeWriteRefused      = "write-refused"
	CodeDefinitionChanged = "definition-changed"
	CodeNotConfirmed      = "not-confirmed"
	CodeToolError         = "tool-error"
	CodeInvalidOutput     = "invalid-output"
	CodeTimeout           = "timeout"
	CodeNotRecognised     = "not-recognised"
	CodeInterrupted       = "interrupted"
)

// exitCodes is the SPEC 5 table, in one place.
var exitCodes = map[string]int{
	"":                    0,
	CodeToolError:         1,
	CodeInvalidOutput:     1,
	CodeNotAlone:          2,
	CodeMalformed:         2,
	CodeNoCapabilities:    3,
	CodeAuditUnavailable:  3,
	CodeUnknown:           3,
	CodeNotDescribed:      3,
	CodeInvalidArguments:  3,
	CodeWriteRefused:      3,
	CodeDefinitionChanged: 3,
	CodeNotConfirmed:      3,
	CodeUnavailable:       4,
	CodeTimeout:           4,
	CodeNotRecognised:     126,
	CodeInterrupted:       130,
}

// ExitCode maps an answer code to its exit status (SPEC 5); "" is success. An unknown code
// is treated as a refusal (3) so that a mistake can never look like success.
func ExitCode(code string) int {
	if c, ok := exitCodes[code]; ok {
		return c
	}
	return 3
}

// Turn is one agent turn as seen by one spear-shell process. It loads nothing until
// the first answer needs it. Its methods may be called from several goroutines; answers
// are serialised.
type Turn struct {
	s  Settings
	mu sync.Mutex

	loaded bool
	env    *turnEnv // nil until loaded
	closed bool

	seq int // answers so far; a provider is listed at most once an answer (relist.go)

	// startCtx is the context of an answer that needs the family, while it runs: the turn's
	// first load then starts the providers early (startEarly).
	startCtx context.Context

	// listOnly: the answer running only lists, in a process that answers nothing else
	// (--context), so each provider is stopped as soon as its tools are known and the
	// providers' exits overlap the wait for the slowest instead of following it.
	listOnly bool

	clock func() time.Time // nil: time.Now (relist.go)

	terminal string // the manifest's terminal as Pin read it; "" until then
}

// NewTurn returns a turn for s; it is cheap: nothing is read until the first need.
func NewTurn(s Settings) *Turn {
	if s.Getenv == nil {
		s.Getenv = func(string) string { return "" }
	}
	return &Turn{s: s}
}

// Answer answers one recognised invocation: it writes the answer to stdout and stderr and
// returns the exit code. Cancelling ctx (Ctrl-C) ends it with 130, audited "interrupted".
func (t *Turn) Answer(ctx context.Context, r Request, stdout, stderr io.Writer) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	a := t.begin(ctx, stdout, stderr)
	defer t.endStart()
	var code string
	switch r.Verb {
	case "list":
		code = t.list(ctx, a, "list")
	case "search":
		code = t.search(ctx, a, r.Words, cmp.Or(r.Limit, search.DefaultLimit), r.Cursor)
	case "describe":
		code = t.describe(ctx, a, r.Targets)
	case "invoke":
		code = t.invoke(ctx, a, r)
	default:
		code = a.refuse(CodeMalformed, "unknown verb "+quote(r.Verb)+"; use list, search, describe or invoke")
	}
	a.renderText()
	return a.finish(code)
}

// Refuse answers a recognition refusal (not-alone or malformed), audited when a turn exists.
func (t *Turn) Refuse(code, reason string, stderr io.Writer) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.seq++
	a := t.newAnswer(io.Discard, stderr)
	t.load()
	if e := t.env; e != nil && e.Audit != nil {
		// Recognition comes first in SPEC 5's order: the refusal stands even when it cannot be recorded.
		_ = e.Log(audit.Event{Name: audit.EventRefused, Code: code, Reason: reason})
	}
	a.errf(code, "%s", reason)
	return a.finish(code)
}

// Context prints what the turn is shown (--context); it exits 0 even when nothing is offered,
// so that a harness can put the text in the model's context unconditionally.
func (t *Turn) Context(ctx context.Context, stdout, stderr io.Writer) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.listOnly = !t.loaded && !t.s.Session // the first answer of a --context process
	defer func() { t.listOnly = false }()  // a later answer keeps what it starts
	a := t.begin(ctx, stdout, stderr)
	defer t.endStart()
	code := t.list(ctx, a, "context")
	a.renderText()
	if code == CodeNoCapabilities {
		a.errb.Reset()
		code = ""
	}
	if !t.s.Isolated && t.s.Isolation != "" {
		a.printf("note: the shell runs without isolation: %s\n", t.s.Isolation)
	}
	return a.finish(code)
}

// Prepare loads the turn now and, when its family is not selected yet, starts the offered
// providers under ctx as the turn's first answer would (startEarly), so that the caller's own
// set-up overlaps their start. The next answer, made with the same ctx, takes them; Close stops
// them otherwise.
func (t *Turn) Prepare(ctx context.Context) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	t.startCtx = ctx
	t.load()
	t.startCtx = nil
}

// Pin pins the turn's workspace and project in its state now (providers/scope.go), without loading the
// rest of the turn or writing an audit record: a session calls it before the agent's first
// command can run.
func (t *Turn) Pin() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed && !t.loaded {
		// Only the scope: a session with no invocation loads and records nothing more (SPEC 4).
		// The manifest it read also names the terminal, which the session asks about next.
		core := providers.Resolve(t.s.Settings)
		t.s.ManifestPath = core.Settings.ManifestPath
		if core.Manifest != nil {
			t.terminal = core.Manifest.Terminal
		}
	}
}

// begin starts an answer (t.mu held). A ctx lets the turn's first load start the providers
// early under it; endStart ends that.
func (t *Turn) begin(ctx context.Context, stdout, stderr io.Writer) *answer {
	t.seq++
	t.startCtx = ctx
	return t.newAnswer(stdout, stderr)
}

// endStart ends an answer's early starts: what it did not take is stopped.
func (t *Turn) endStart() {
	t.startCtx = nil
	if t.env != nil {
		t.env.dropEarly()
	}
}

// Close stops every provider (in parallel) and, in a session, records turn_ended.
func (t *Turn) Close(reason string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	t.closed = true
	if t.env == nil {
		return
	}
	t.env.dropEarly()
	t.env.stopAll()
	if t.s.Session && t.env.Audit != nil {
		_ = t.env.Log(audit.Event{Name: audit.EventTurnEnded, Reason: reason})
	}
}
