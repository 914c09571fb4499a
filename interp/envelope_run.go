package interp

import (
	"github.com/spear-shell/spear-shell/interp/realshell"
)

// EnvelopeHandlers is what running an envelope needs besides answering.
type EnvelopeHandlers struct {
	Handlers
	// Outside runs a part of the envelope that needs what the boundary hides (tmux wait -S
	// done) in spear-shell's own environment, and returns its exit status.
	Outside func(argv []string) int
	// Shell is the real shell's path, for the fresh process of `exec SELF -c CMD`.
	Shell string
}

// RunEnvelope runs a -c string that is envelope m, whose command Analyze answered as a, and
// returns the string's exit status.
func RunEnvelope(m *Match, a Analysis, sh *realshell.Shell, h EnvelopeHandlers) int {
	m.Run(a, sh, h)
	return sh.Close()
}

// Run runs envelope m in sh, in the order the terminal meant: the envelope's own parts in the
// real shell, the command's segments (a) in its place with the answers between them, a part the
// boundary would hide outside it. A failing left side of an && chain ends the envelope there
// with its status, as the chain would. Run reports false once the shell has ended.
func (m *Match) Run(a Analysis, sh *realshell.Shell, h EnvelopeHandlers) bool {
	p := m.Envelope.plan
	for _, st := range p.steps {
		switch st.kind {
		case stepForward:
			sh.Forward(m.src[m.mapOff(st.start):m.mapOff(st.end)])
		case stepRequire:
			status, ok := sh.SyncStatus()
			if !ok {
				return false
			}
			if status != 0 {
				return true
			}
		case stepOutside:
			if !sh.Sync() {
				return false
			}
			sh.SetStatus(h.Outside(st.argv))
		case stepCommand:
			if p.fresh {
				sh.Replace(h.Shell, m.self())
			}
			if a.Verdict == Forward {
				sh.Forward(m.Command)
				continue
			}
			if !runSegments(a.Segments, sh, h.Handlers) {
				return false
			}
		}
	}
	return !sh.Ended()
}

// mapOff maps an offset of the template's fixed text to the input's.
func (m *Match) mapOff(t int) int {
	shift := 0
	for _, b := range m.bindings {
		if b.slot.end <= t {
			shift += (b.end - b.start) - (b.slot.end - b.slot.start)
		}
	}
	return t + shift
}

// self is the value of the SELF slot ("" when there is none).
func (m *Match) self() string {
	for _, b := range m.bindings {
		if b.slot.kind == markSelf {
			return b.value
		}
	}
	return ""
}
