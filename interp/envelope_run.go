package interp

import (
	"path/filepath"

	"github.com/spear-shell/spear-shell/interp/realshell"
)

// RunEnvelope runs a -c string that is envelope m, whose command Analyze answered as a, and
// returns the string's exit status.
func RunEnvelope(m *Match, a Analysis, sh *realshell.Shell, h Handlers) int {
	m.Run(a, sh, h)
	return sh.Close()
}

// runEnvelopeUnit runs a session unit that is envelope m; it reports false once the shell has
// ended.
func runEnvelopeUnit(m *Match, a Analysis, sh *realshell.Shell, h Handlers) bool {
	if a.Verdict == Refuse {
		if !sh.Sync() {
			return false
		}
		sh.SetStatus(m.Refused(h.Refuse(a.Code, a.Reason), h.Outside))
		return true
	}
	if !m.Run(a, sh, h) {
		return false
	}
	// A command of a terminal session reads the terminal: the next line waits for it.
	if sh.Terminal() {
		return sh.Sync()
	}
	return true
}

// Run runs envelope m in sh, in the order the terminal meant: the envelope's own parts in the
// real shell, the command's segments (a) in its place with the answers between them, a part the
// boundary would hide outside it. A failing left side of an && chain ends the envelope there
// with its status, as the chain would. Run reports false once the shell has ended.
func (m *Match) Run(a Analysis, sh *realshell.Shell, h Handlers) bool {
	p := m.Envelope.plan
	for i, st := range p.steps {
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
			if h.Outside != nil {
				sh.SetStatus(h.Outside(st.argv))
			}
		case stepCommand:
			if p.fresh {
				sh.Replace(h.Shell, m.self())
			}
			// On the left of && (`eval CMD && pwd -P >| F`), bash's set -e does not act
			// inside the command: its forwarded parts and answers run likewise.
			inList := i+1 < len(p.steps) && p.steps[i+1].kind == stepRequire
			segs := a.Segments
			if a.Verdict != Answer {
				segs = []Segment{{Forward: m.Command}}
			}
			if !runCommand(segs, sh, h, inList) {
				return false
			}
		}
	}
	return !sh.Ended()
}

// runCommand is runSegments for the envelope's command; inList: it is on the left of && or ||,
// where set -e does not act, so forwarded parts and answers' statuses are sent as bash runs
// commands there.
func runCommand(segs []Segment, sh *realshell.Shell, h Handlers, inList bool) bool {
	if !inList {
		return runSegments(segs, sh, h)
	}
	for _, seg := range segs {
		if seg.Invocation == nil {
			if hasCommands(seg.Forward) {
				sh.ForwardInList(seg.Forward)
			}
			continue
		}
		if !sh.Sync() {
			return false
		}
		sh.SetStatusInList(h.Answer(seg.Invocation))
	}
	return true
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

// Files are the absolute paths in the envelope's file slots: files it writes for the terminal
// to read, which the boundary binds in at their host paths.
func (m *Match) Files() []string {
	var out []string
	for _, b := range m.bindings {
		if b.slot.kind == markFile && filepath.IsAbs(b.value) {
			out = append(out, b.value)
		}
	}
	return out
}

// Refused is what an envelope whose command was refused (exit status code) still does: nothing
// in the real shell, but the parts after the command that spear-shell runs itself outside the
// boundary, so that a harness waiting for Terminal-Bench's signal gets it. It returns the status.
func (m *Match) Refused(code int, outside func(argv []string) int) int {
	after := false
	for _, st := range m.Envelope.plan.steps {
		switch {
		case st.kind == stepCommand:
			after = true
		case after && st.kind == stepOutside && outside != nil:
			code = outside(st.argv)
		}
	}
	return code
}
