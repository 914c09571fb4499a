package session

import (
	"github.com/spear-shell/spear-shell/interp"
	"github.com/spear-shell/spear-shell/interp/envelope"
	"github.com/spear-shell/spear-shell/interp/realshell"
)

// RunEnvelope runs a -c string that is envelope m, whose command interp.Analyze answered as a, and
// returns the string's exit status.
func RunEnvelope(m *envelope.Match, a interp.Analysis, sh *realshell.Shell, h Handlers) int {
	runMatch(m, a, sh, h)
	return sh.Close()
}

// runEnvelopeUnit runs a session unit that is envelope m; it reports false once the shell has
// ended.
func runEnvelopeUnit(m *envelope.Match, a interp.Analysis, sh *realshell.Shell, h Handlers) bool {
	if a.Verdict == interp.Refuse {
		if !sh.Sync() {
			return false
		}
		sh.SetStatus(m.Refused(h.Refuse(a.Code, a.Reason), h.Outside))
		return true
	}
	if !runMatch(m, a, sh, h) {
		return false
	}
	// A command of a terminal session reads the terminal: the next line waits for it.
	if sh.Terminal() {
		return sh.Sync()
	}
	return true
}

// runMatch runs envelope m in sh, in the order the terminal meant (Match.Steps): the
// envelope's own parts in the real shell, the command's segments (a) in its place with the
// answers between them, a part the boundary would hide outside it. A failing left side of an &&
// chain ends the envelope there with its status, as the chain would; a Ctrl-C ends it where it
// came, as bash -i gives up the line (Handlers.Interrupted). It reports false once the shell has
// ended.
func runMatch(m *envelope.Match, a interp.Analysis, sh *realshell.Shell, h Handlers) bool {
	steps := m.Steps()
	for i, st := range steps {
		switch st.Kind {
		case envelope.StepForward:
			sh.Forward(st.Text)
		case envelope.StepRequire:
			status, ok := sh.SyncStatus()
			if !ok {
				return false
			}
			if status != 0 || h.givenUp() {
				return true
			}
		case envelope.StepOutside:
			if !sh.Sync() {
				return false
			}
			if h.givenUp() {
				return true // Ctrl-C gave the line up: the harness is told nothing ended
			}
			if h.Outside != nil {
				sh.SetStatus(h.Outside(st.Argv))
			}
		case envelope.StepCommand:
			if self, fresh := m.Fresh(); fresh {
				sh.Replace(h.Shell, self)
			}
			// On the left of && (`eval CMD && pwd -P >| F`), bash's set -e does not act
			// inside the command: its forwarded parts and answers run likewise.
			inList := i+1 < len(steps) && steps[i+1].Kind == envelope.StepRequire
			segs := a.Segments
			if a.Verdict != interp.Answer {
				segs = []interp.Segment{{Forward: m.Command}}
			}
			if !runSegments(segs, sh, h, inList) {
				return false
			}
			if h.givenUp() {
				return !sh.Ended()
			}
		}
	}
	return !sh.Ended()
}
