package envelope

import "path/filepath"

// Step is one step of a matched envelope, as the input spells it (Match.Steps).
type Step struct {
	Kind StepKind
	Text string   // StepForward: the envelope's text that runs in the real shell
	Argv []string // StepOutside: what spear-shell runs itself, outside the boundary
}

// Steps are what envelope m runs, in the order the terminal meant: the envelope's own parts in
// the real shell, the command in its place, a part the boundary would hide outside it. A
// StepRequire ends the envelope there, with the status so far, unless that status is 0.
func (m *Match) Steps() []Step {
	steps := make([]Step, len(m.Envelope.plan.steps))
	for i, st := range m.Envelope.plan.steps {
		steps[i] = Step{Kind: st.kind, Argv: st.argv}
		if st.kind == StepForward {
			steps[i].Text = m.src[m.mapOff(st.start):m.mapOff(st.end)]
		}
	}
	return steps
}

// Fresh tells whether the command runs in a fresh shell process (`exec SELF -c CMD`), and self
// is the value of the SELF slot ("" when there is none).
func (m *Match) Fresh() (self string, fresh bool) {
	return m.self(), m.Envelope.plan.fresh
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
		case st.kind == StepCommand:
			after = true
		case after && st.kind == StepOutside && outside != nil:
			code = outside(st.argv)
		}
	}
	return code
}
