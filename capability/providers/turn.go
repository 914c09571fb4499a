package capability

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/spear-shell/spear-shell/audit"
	"github.com/spear-shell/spear-shell/policy"
)

// What the turn is told when nothing is offered; never names a provider.
const nothingOffered = "no external capabilities are offered to this turn"

// turnEnv is everything loaded at the turn's first need.
type turnEnv struct {
	s Settings

	none string // non-empty: every answer is no-capabilities, with this reason

	man    *policy.Manifest
	reg    *policy.Registry
	red    *audit.Redactor
	log    *audit.Logger
	logErr error
	state  *stateDir
	offer  policy.Offer

	provs map[string]*prov // offered providers
	order []string         // their ids, registry order

	familyKnown bool   // this process knows the family's mode
	mode        string // "whole" or "index"

	schemas map[string]*compiled // by hash of the schema's bytes

	scopePin string // the turn's pinned workspace and project (scope.go), once known

	pins map[string]string // capability id -> pinned hash, once read

	closing sync.WaitGroup // providers being stopped in the background

	// early holds the providers started ahead of need (startEarly), by id, until ensure takes them.
	early map[string]chan startResult

	turnKey    string // session, turn, manifest and configuration, hashed: the keeper serves only its own
	keeperOnce sync.Once
	link       *keeperLink // nil: this process starts its providers itself
}

// load reads the manifest, the registry and opens the audit trail and the state, once.
func (t *Turn) load() {
	if t.loaded {
		return
	}
	t.loaded = true
	e, r := t.resolve()
	t.env = e
	if !r.ok {
		return
	}
	man, reg, stErr, scopeChanged := e.man, e.reg, r.stateErr, r.scopeChanged
	auditPath := man.Audit
	if auditPath == "" {
		auditPath = t.s.Getenv("SPEAR_AUDIT_FILE")
	}
	if auditPath == "" {
		auditPath = filepath.Join(policy.DefaultHome(t.s.Getenv), "audit.jsonl")
	}
	e.log, e.logErr = audit.Open(auditPath, man.Turn, man.Session, e.red)
	if e.logErr != nil {
		e.log = nil
	}

	for _, d := range e.offer.Decisions {
		if !d.Offered {
			continue
		}
		for i := range reg.Providers {
			if p := &reg.Providers[i]; p.ID == d.Provider {
				e.provs[p.ID] = &prov{cfg: p, readOnly: d.ReadOnly}
				e.order = append(e.order, p.ID)
			}
		}
	}

	if t.startCtx != nil && stErr == nil && e.log != nil {
		e.startEarly(t.startCtx, t.listOnly)
	}
	if e.state != nil {
		e.onceEvents(r.regErr)
	}
	switch {
	case stErr != nil:
		e.none = nothingOffered + " (the turn's state cannot be kept: " + stErr.Error() + ")"
	case scopeChanged != "":
		e.none = nothingOffered + " (" + scopeChanged + ")"
	case len(e.order) == 0:
		e.none = nothingOffered
		if e.state.once(familyFact + "-none") {
			_ = e.logEvent(audit.Event{Name: audit.EventFamilySelected, Mode: "none",
				Reason: e.offer.Reason, Fields: map[string]any{
					"project": e.offer.Project, "providers": decisionsField(e.offer.Decisions), "family": []string{}}})
		}
	}
}

// resolved is what resolve found besides the turn's environment.
type resolved struct {
	ok           bool   // false: the turn offers nothing, for the reason e.none gives
	regErr       error  // the registry's problem, recorded in turn_started
	stateErr     error  // the state cannot be kept
	scopeChanged string // why the scope differs from the pin ("" when it does not)
}

// resolve reads the manifest and the registry, opens the state and pins the turn's scope in it
// (scope.go), or compares the scope with the pin. It writes no audit record: Pin, at a
// session's start, uses it alone.
func (t *Turn) resolve() (*turnEnv, resolved) {
	e := &turnEnv{s: t.s, provs: map[string]*prov{}, schemas: map[string]*compiled{}}
	e.red = audit.NewRedactor(nil)
	switch {
	case t.s.Inside:
		e.none = nestedReason(t.s.Unconfined)
		return e, resolved{}
	case t.s.ManifestPath == "":
		e.none = nothingOffered + " (no turn manifest: --manifest or SPEAR_TURN_MANIFEST)"
		return e, resolved{}
	}
	if !filepath.IsAbs(t.s.ManifestPath) && t.s.Cwd != "" {
		t.s.ManifestPath = filepath.Join(t.s.Cwd, t.s.ManifestPath) // --manifest as typed
		e.s.ManifestPath = t.s.ManifestPath
	}
	man, err := policy.LoadManifest(t.s.ManifestPath, t.s.Cwd)
	if err == nil && man.WorkspaceDefaulted && t.s.Isolated {
		// The boundary makes the workspace writable: it must be the harness's word, never
		// wherever the command happens to run (SPEC 2.4).
		err = &policy.Problem{File: t.s.ManifestPath, Key: "workspace", Msg: "required with the isolation boundary on"}
	}
	if err != nil {
		e.none = nothingOffered + " (the turn manifest is invalid: " + err.Error() + ")"
		return e, resolved{}
	}
	e.man = man
	if t.s.Isolated {
		if err := e.trustWorkspace(); err != nil {
			e.man = nil
			e.none = nothingOffered + " (" + err.Error() + ")"
			return e, resolved{}
		}
	}
	getenv := t.s.Getenv
	home := policy.DefaultHome(getenv)
	capsFile := getenv("SPEAR_CAPABILITIES_FILE")
	reg, regErr := policy.Load(policy.Paths{Home: home, CapabilitiesFile: capsFile})
	if reg == nil {
		reg = &policy.Registry{Home: home}
	}
	e.reg = reg
	e.red = audit.NewRedactor(reg.Secrets())

	var stErr error
	projects, caps := reg.Sources()
	e.turnKey = stateKey(man.Session, man.Turn, man.Source, projects, caps)
	if man.StateDir != "" {
		e.state, stErr = openState(man.StateDir, "")
	} else {
		if parent := t.s.StateParent; parent == "" {
			stErr = errors.New("no state parent: set XDG_RUNTIME_DIR or HOME")
		} else {
			e.state, stErr = openState(filepath.Join(parent, e.turnKey), parent)
		}
	}

	e.offer = reg.Offer(man)
	scopeChanged := ""
	// A registry that cannot be used resolves no project: that is not the turn's scope, and is
	// neither pinned nor compared (the offer is empty anyway, for that reason).
	if stErr == nil && regErr == nil {
		if scopeChanged = e.pinScope(e.offer); scopeChanged != "" {
			e.offer = e.offer.Withdrawn(scopeChanged)
		}
	}
	return e, resolved{ok: true, regErr: regErr, stateErr: stErr, scopeChanged: scopeChanged}
}

// startEarly starts every offered provider now when this turn has not selected its family
// yet: the first answer of a turn needs them all, and their start-up (a process, initialize,
// tools/list) then overlaps the turn's records and state instead of following them. ensure
// takes the results; Close stops those never taken.
func (e *turnEnv) startEarly(ctx context.Context, listOnly bool) {
	if _, ok, err := e.state.read(familyFact); err != nil || ok {
		return
	}
	e.early = make(map[string]chan startResult, len(e.order))
	for _, id := range e.order {
		if _, down, err := e.state.read(downName(id)); err != nil || down {
			continue
		}
		ch := make(chan startResult, 1)
		e.early[id] = ch
		p := e.provs[id]
		go func() { ch <- startAndList(ctx, e, p, listOnly) }()
	}
}

// takeEarly returns the channel of p's early start, if there was one; its result is ensure's.
func (e *turnEnv) takeEarly(p *prov) chan startResult {
	ch := e.early[p.cfg.ID]
	delete(e.early, p.cfg.ID)
	return ch
}

// dropEarly stops the providers started early that the answer did not take (it was refused
// before it needed them), so that no later answer inherits a start made under another context.
func (e *turnEnv) dropEarly() {
	for id, ch := range e.early {
		delete(e.early, id)
		e.closing.Add(1) // held until the start ends and closeLater holds its own
		go func() {
			defer e.closing.Done()
			e.closeLater((<-ch).client)
		}()
	}
}

// onceEvents records the turn-level facts once per turn, whichever process comes first.
func (e *turnEnv) onceEvents(regErr error) {
	if e.state.once(audit.EventTurnStarted) {
		f := map[string]any{
			"isolated": e.s.Isolated, "isolation": e.s.Isolation, "task": e.man.Task,
			"workspace": e.man.Workspace, "project": e.offer.Project, "permission_mode": e.man.PermissionMode,
			"runtime": e.man.Runtime, "pid": os.Getpid(),
		}
		if e.man.Pass != "" {
			f["pass"] = e.man.Pass
		}
		if regErr != nil {
			f["registry_error"] = regErr.Error()
		}
		_ = e.logEvent(audit.Event{Name: audit.EventTurnStarted, Fields: f})
	}
	if e.state.once("providers") {
		for _, p := range e.reg.Providers {
			_ = e.logEvent(audit.Event{Name: audit.EventProviderRegistered, Provider: p.ID,
				Fields: map[string]any{"enabled": p.Enabled, "write": p.Write, "scope": scopeString(p.Scope)}})
		}
		for _, r := range e.reg.Rejected {
			_ = e.logEvent(audit.Event{Name: audit.EventProviderRejected, Provider: r.ID, Reason: r.Reason})
		}
	}
	if e.man.Runtime == "earlier" && e.state.once(audit.EventRuntimeWithoutGateway) {
		_ = e.logEvent(audit.Event{Name: audit.EventRuntimeWithoutGateway,
			Reason: "runtime is earlier: this turn is offered no capabilities"})
	}
}

func (e *turnEnv) logEvent(ev audit.Event) error {
	if e.log == nil {
		if e.logErr != nil {
			return e.logErr
		}
		return fmt.Errorf("audit: no turn")
	}
	return e.log.Log(ev)
}

func scopeString(s policy.Scope) string {
	switch s.Kind {
	case "":
		return ""
	case "path":
		return "path " + s.Path
	}
	out := s.Kind
	for i, n := range s.Names {
		if i == 0 {
			out += " " + n
		} else {
			out += ", " + n
		}
	}
	return out
}

func decisionsField(ds []policy.Decision) []map[string]any {
	out := make([]map[string]any, 0, len(ds))
	for _, d := range ds {
		out = append(out, map[string]any{"id": d.Provider, "offered": d.Offered, "reason": d.Reason, "read_only": d.ReadOnly})
	}
	return out
}

// answer collects one answer's output so that it is printed, redacted, only after its
// audit records are written.
type answer struct {
	t      *Turn
	out    bytes.Buffer
	errb   bytes.Buffer
	stdout io.Writer
	stderr io.Writer
}

func (t *Turn) newAnswer(stdout, stderr io.Writer) *answer {
	return &answer{t: t, stdout: stdout, stderr: stderr}
}

func (a *answer) printf(format string, args ...any) { fmt.Fprintf(&a.out, format, args...) }

// note writes a notice line on stderr.
func (a *answer) note(format string, args ...any) {
	a.errb.WriteString("spear-capability: ")
	fmt.Fprintf(&a.errb, format, args...)
	a.errb.WriteByte('\n')
}

// errf writes the answer's `spear-capability: <code>: <reason>` line.
func (a *answer) errf(code, format string, args ...any) {
	a.note("%s: %s", code, fmt.Sprintf(format, args...))
}

// refuse records a refusal and says it; a refusal that cannot be recorded becomes
// audit-unavailable (SPEC 5 places the audit check before every later code).
func (a *answer) refuse(code, reason string) string {
	return a.refuseEv(audit.Event{Code: code, Reason: reason})
}

func (a *answer) refuseEv(ev audit.Event) string {
	ev.Name = audit.EventRefused
	if e := a.t.env; e != nil && e.man != nil {
		// no-capabilities precedes audit-unavailable in SPEC 5's order: recorded when possible.
		if err := e.logEvent(ev); err != nil && ev.Code != CodeNoCapabilities {
			return a.auditUnavailable(err)
		}
	}
	a.errf(ev.Code, "%s", ev.Reason)
	return ev.Code
}

func (a *answer) auditUnavailable(err error) string {
	a.out.Reset()
	a.errf(CodeAuditUnavailable, "the audit trail cannot be written, so nothing is answered: %v", err)
	return CodeAuditUnavailable
}

// finish prints the answer, redacted, and returns its exit code.
func (a *answer) finish(code string) int {
	red := audit.NewRedactor(nil)
	if a.t.env != nil && a.t.env.red != nil {
		red = a.t.env.red
	}
	if a.out.Len() > 0 {
		a.stdout.Write(red.Bytes(a.out.Bytes()))
	}
	if a.errb.Len() > 0 {
		a.stderr.Write(red.Bytes(a.errb.Bytes()))
	}
	return ExitCode(code)
}

func quote(s string) string { return strconv.Quote(clean(s)) }
