package capability

import (
	"github.com/spear-shell/spear-shell/audit"
	"github.com/spear-shell/spear-shell/policy"
)

// Terminal is the agent terminal whose envelopes the turn accepts (the manifest's terminal,
// SPEC 2.4). It reads the manifest alone, not the registry (or takes what Pin read): "none"
// without a valid manifest, and inside the boundary, where nothing is offered.
func (t *Turn) Terminal() string {
	if t.s.Inside || t.s.ManifestPath == "" {
		return policy.TerminalNone
	}
	t.mu.Lock()
	pinned := t.terminal
	t.mu.Unlock()
	if pinned != "" {
		return pinned
	}
	man, err := policy.LoadManifest(t.s.ManifestPath, t.s.Cwd)
	if err != nil {
		return policy.TerminalNone
	}
	return man.Terminal
}

// EnvelopeUnmatched records that a string holding the name matched none of the terminal's
// envelopes (envelope_unmatched, SPEC 3), with its first bytes (redacted and bounded by the
// audit), so that a terminal's new version shows in the audit. Nothing is said to the model:
// the string is then judged as before.
func (t *Turn) EnvelopeUnmatched(terminal, head string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.load()
	if e := t.env; e != nil && e.Audit != nil {
		_ = e.Log(audit.Event{Name: audit.EventEnvelopeUnmatched,
			Fields: map[string]any{"terminal": terminal, "head": head}})
	}
}
