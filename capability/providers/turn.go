package providers

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spear-shell/spear-shell/audit"
	"github.com/spear-shell/spear-shell/policy"
	"github.com/spear-shell/spear-shell/policy/lock"
)

// Settings is what the caller knows of the turn before anything is loaded.
type Settings struct {
	Getenv       func(string) string // spear-shell's environment
	Cwd          string
	ManifestPath string // --manifest or SPEAR_TURN_MANIFEST; "" = none
	Session      bool   // a stdin session: providers stay up; turn_ended at Close
	Inside       bool   // started inside a spear-shell's real shell: offer nothing, say why
	Unconfined   bool   // Inside, and that real shell has no isolation boundary (SPEAR_ISOLATION=none)
	Isolation    string // how the real shell runs, e.g. "bwrap", "none (SPEAR_ISOLATION=none)"
	Isolated     bool

	// WritableRoots are directories the agent can write besides the workspace and the
	// manifest's writable list (the turn's temporary directory). No program spear-shell
	// starts may lie in, or be reached through a symlink in, any of them.
	WritableRoots []string
	// CheckTrusted says why path cannot be trusted when roots (absolute, as given) are the
	// writable roots: it, or a symlink on its way, lies in one. nil: nothing is trusted, and
	// no provider, approver or schema helper is started.
	CheckTrusted func(path string, roots []string) error
	// Self and Environ start the turn's keeper (SPEC 12): this binary and the environment it
	// runs in. Self "" means no keeper: every answer starts its providers itself.
	Self        string
	Environ     []string
	StateParent string // where default state_dirs live (SPEC 9); "" = none can be kept
	Face        string // "mcp" when the MCP face answers: on every record it writes (SPEC 7)
	// Keeper is the turn's keeper loading the turn: it writes none of the turn's records
	// (turn_started, provider_registered, ...), only its own (SPEC 12); the answer that
	// started it writes them, whichever of the two loads the turn first.
	Keeper bool
}

// NothingOffered is what the turn is told when nothing is offered; it never names a provider.
const NothingOffered = "no external capabilities are offered to this turn"

// TurnEnded is what every answer of a turn says after --end-turn (SPEC 12): nothing is started.
const TurnEnded = "the turn has ended"

// Offered is one provider offered to the turn.
type Offered struct {
	Config   *policy.Provider
	ReadOnly bool           // general turn: its WRITE tools are hidden
	Locked   *lock.Provider // the lock's entry that approves it; nil when no lock governs
}

// Turn is a turn's provider core as one process loads it: what the turn may reach, where it
// is recorded and kept, and which providers it is offered. Load sets its fields, which are only
// read after; Log, State and the trust checks may be used from several goroutines, PinOf and
// PinFamily from one at a time (capability serialises its answers).
type Turn struct {
	Settings Settings

	None string // non-empty: every answer is no-capabilities, with this reason

	Manifest *policy.Manifest // nil: no valid manifest (None says why)
	Registry *policy.Registry
	Redactor *audit.Redactor
	Audit    *audit.Logger // nil: the trail cannot be written, for the reason AuditErr gives
	AuditErr error
	State    *State // nil: the turn's state cannot be kept
	// PerTurn is what is kept per session and turn whatever the configuration (SPEC 12): the
	// ended mark, the pinned scope, turn_started said once, and the keepers started (turnstate.go).
	// It is State itself when the manifest names a state_dir; nil exactly when State is.
	PerTurn *State
	Offer   policy.Offer
	Offered []Offered // in registry order

	Key string // session, turn, manifest, configuration and lock, hashed: a keeper serves only its own

	Lock *Lock // the operator's lock (lock.go)

	envFiles envStamps // the env_files servers were started with, as they were (envstamp.go)

	scopePin string // the turn's pinned workspace and project (scope.go), once known

	pins        map[string]string   // capability id -> pinned hash, once read whole (pins.go)
	pinSearches int                 // pins looked up in the file itself (pins.go)
	pinSeen     map[string]pinFound // what those searches found, by id (pins.go)
}

// Load reads the manifest and the registry, opens the audit trail and the state, pins the
// turn's scope, and records the turn's facts once per turn (turn_started, the providers
// registered and rejected). early, when not nil, is called once the offered providers are
// known and before those records are written, so that their start overlaps the records; it is
// called only when both the state and the audit trail can be kept. Load always returns a Turn:
// when nothing can be answered, None says why.
func Load(s Settings, early func(*Turn)) *Turn {
	t, r := resolve(s)
	if !r.ok {
		return t
	}
	man, reg, stErr, scopeChanged := t.Manifest, t.Registry, r.stateErr, r.scopeChanged
	auditPath := man.Audit
	if auditPath == "" {
		auditPath = t.Settings.Getenv("SPEAR_AUDIT_FILE")
	}
	if auditPath == "" {
		auditPath = filepath.Join(policy.DefaultHome(t.Settings.Getenv), "audit.jsonl")
	}
	t.Audit, t.AuditErr = audit.Open(auditPath, man.Turn, man.Session, t.Redactor)
	if t.Audit != nil && s.Face != "" {
		t.Audit.SetFace(s.Face)
	}
	if t.AuditErr != nil {
		t.Audit = nil
	}

	for _, d := range t.Offer.Decisions {
		if !d.Offered {
			continue
		}
		for i := range reg.Providers {
			if p := &reg.Providers[i]; p.ID == d.Provider {
				entry, _ := t.Lock.Entry(p)
				t.Offered = append(t.Offered, Offered{Config: p, ReadOnly: d.ReadOnly, Locked: entry})
			}
		}
	}

	// A mark that cannot be read (replaced by a link, a directory) never reads as "not ended":
	// the turn then offers nothing, as when its state cannot be kept.
	ended := r.ended
	if r.markErr != nil && stErr == nil {
		stErr = r.markErr
	}
	if early != nil && stErr == nil && t.Audit != nil && !ended {
		early(t)
	}
	if t.State != nil && !s.Keeper {
		t.onceEvents(r.regErr)
		t.recordLock()
	}
	switch {
	case ended:
		t.None = TurnEnded
	case stErr != nil:
		t.None = NothingOffered + " (the turn's state cannot be kept: " + stErr.Error() + ")"
	case scopeChanged != "":
		t.None = NothingOffered + " (" + scopeChanged + ")"
	case len(t.Offered) == 0:
		t.None = NothingOffered
		if !s.Keeper && t.State.Once(FamilyFact+"-none") {
			_ = t.Log(audit.Event{Name: audit.EventFamilySelected, Mode: "none",
				Reason: t.Offer.Reason, Fields: map[string]any{
					"project": t.Offer.Project, "providers": DecisionsField(t.Offer.Decisions), "family": []string{},
					"lock": t.Lock.LockField()}})
		}
	}
	return t
}

// Resolve reads the manifest and the registry, opens the state and pins the turn's scope in
// it (scope.go), or compares the scope with the pin. It writes no audit record: a session, at
// its start, uses it alone.
func Resolve(s Settings) *Turn {
	t, _ := resolve(s)
	return t
}

// resolved is what resolve found besides the turn.
type resolved struct {
	ok           bool   // false: the turn offers nothing, for the reason t.None gives
	regErr       error  // the registry's problem, recorded in turn_started
	stateErr     error  // the state cannot be kept
	scopeChanged string // why the scope differs from the pin ("" when it does not)
	ended        bool   // the turn's ended mark is there (--end-turn)
	markErr      error  // the mark cannot be read
}

func resolve(s Settings) (*Turn, resolved) {
	if s.Getenv == nil {
		s.Getenv = func(string) string { return "" }
	}
	t := &Turn{Settings: s, Redactor: audit.NewRedactor(nil)}
	switch {
	case s.Inside:
		t.None = nestedReason(s.Unconfined)
		return t, resolved{}
	case s.ManifestPath == "":
		t.None = NothingOffered + " (no turn manifest: --manifest or SPEAR_TURN_MANIFEST)"
		return t, resolved{}
	}
	if !filepath.IsAbs(s.ManifestPath) && s.Cwd != "" {
		t.Settings.ManifestPath = filepath.Join(s.Cwd, s.ManifestPath) // --manifest as typed
	}
	man, err := policy.LoadManifest(t.Settings.ManifestPath, s.Cwd)
	if err == nil && man.WorkspaceDefaulted && s.Isolated {
		// The boundary makes the workspace writable: it must be the harness's word, never
		// wherever the command happens to run (SPEC 2.4).
		err = &policy.Problem{File: t.Settings.ManifestPath, Key: "workspace", Msg: "required with the isolation boundary on"}
	}
	if err != nil {
		t.None = NothingOffered + " (the turn manifest is invalid: " + err.Error() + ")"
		return t, resolved{}
	}
	t.Manifest = man
	if s.Isolated {
		if err := t.trustWorkspace(); err != nil {
			t.Manifest = nil
			t.None = NothingOffered + " (" + err.Error() + ")"
			return t, resolved{}
		}
	}
	getenv := s.Getenv
	home := policy.DefaultHome(getenv)
	capsFile := getenv("SPEAR_CAPABILITIES_FILE")
	reg, regErr := policy.Load(policy.Paths{Home: home, CapabilitiesFile: capsFile, AuditFile: getenv("SPEAR_AUDIT_FILE")})
	if reg == nil {
		reg = &policy.Registry{Home: home}
	}
	t.Registry = reg
	t.Redactor = audit.NewRedactor(reg.Secrets(t.OperatorsEnvFile))

	projects, caps := reg.Sources()
	t.Lock = ReadLock(LockPath(getenv), reg.LockRequired, s.CheckTrusted, t.writableRoots())
	keyed := [][]byte{man.Source, projects, caps}
	if t.Lock.Governs() {
		keyed = append(keyed, []byte("lock:"+t.Lock.Hash)) // a new lock is new turn state (SPEC 15)
	}
	t.Key = stateKey(man.Session, man.Turn, keyed...)
	ended, markErr, stErr := t.openStates()

	t.Offer = t.Lock.Gate(reg.Offer(man), reg)
	scopeChanged := ""
	// A registry that cannot be used resolves no project: that is not the turn's scope, and is
	// neither pinned nor compared (the offer is empty anyway, for that reason).
	if stErr == nil && regErr == nil {
		if scopeChanged = t.pinScope(t.Offer); scopeChanged != "" {
			t.Offer = t.Offer.Withdrawn(scopeChanged)
		}
	}
	return t, resolved{ok: true, regErr: regErr, stateErr: stErr, scopeChanged: scopeChanged, ended: ended, markErr: markErr}
}

// Provider returns the offered provider id, if it is offered.
func (t *Turn) Provider(id string) (Offered, bool) {
	for _, o := range t.Offered {
		if o.Config.ID == id {
			return o, true
		}
	}
	return Offered{}, false
}

// onceEvents records the turn-level facts once per turn, whichever process comes first.
func (t *Turn) onceEvents(regErr error) {
	if t.PerTurn.Once(audit.EventTurnStarted) {
		f := map[string]any{
			"isolated": t.Settings.Isolated, "isolation": t.Settings.Isolation, "task": t.Manifest.Task,
			"workspace": t.Manifest.Workspace, "project": t.Offer.Project, "permission_mode": t.Manifest.PermissionMode,
			"runtime": t.Manifest.Runtime, "pid": os.Getpid(),
		}
		if t.Manifest.Pass != "" {
			f["pass"] = t.Manifest.Pass
		}
		if regErr != nil {
			f["registry_error"] = regErr.Error()
		}
		_ = t.Log(audit.Event{Name: audit.EventTurnStarted, Fields: f})
	}
	if t.State.Once("providers") {
		for _, p := range t.Registry.Providers {
			_ = t.Log(audit.Event{Name: audit.EventProviderRegistered, Provider: p.ID,
				Fields: map[string]any{"enabled": p.Enabled, "write": p.Write, "scope": scopeString(p.Scope)}})
		}
		for _, r := range t.Registry.Rejected {
			_ = t.Log(audit.Event{Name: audit.EventProviderRejected, Provider: r.ID, Reason: r.Reason})
		}
	}
	if t.Manifest.Runtime == "earlier" && t.State.Once(audit.EventRuntimeWithoutGateway) {
		_ = t.Log(audit.Event{Name: audit.EventRuntimeWithoutGateway,
			Reason: "runtime is earlier: this turn is offered no capabilities"})
	}
}

// Log writes one audit record of the turn; without a trail it says why.
func (t *Turn) Log(ev audit.Event) error {
	if t.Audit == nil {
		if t.AuditErr != nil {
			return t.AuditErr
		}
		return fmt.Errorf("audit: no turn")
	}
	return t.Audit.Log(ev)
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

// DecisionsField is the offer's decisions as the audit records them (the providers field).
func DecisionsField(ds []policy.Decision) []map[string]any {
	out := make([]map[string]any, 0, len(ds))
	for _, d := range ds {
		out = append(out, map[string]any{"id": d.Provider, "offered": d.Offered, "reason": d.Reason, "read_only": d.ReadOnly})
	}
	return out
}

// nestedReason is what a spear-shell started by another's real shell says: it answers nothing,
// and what to do instead. unconfined: that real shell has no boundary, so none is spoken of.
func nestedReason(unconfined bool) string {
	where := "this spear-shell runs inside another's isolation boundary (a nested spear-shell, started by a command such as exec SHELL -c)"
	if unconfined {
		where = "this spear-shell was started by another spear-shell's real shell (a nested spear-shell, started by a command such as exec SHELL -c)"
	}
	return where + " and answers nothing: " + NothingOffered + " here; type spear-capability in the command line the terminal sends, and if the terminal wraps that line (Codex runs exec SHELL -c), set the manifest's terminal (claude-code, codex, gemini or terminal-bench) so that the outer spear-shell answers it"
}
