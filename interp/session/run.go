package session

import (
	"errors"
	"io"
	"strings"

	"github.com/spear-shell/spear-shell/interp"
	"github.com/spear-shell/spear-shell/interp/envelope"
	"github.com/spear-shell/spear-shell/interp/realshell"
)

// Handlers answer what the shell layer recognises; they print the answer themselves and return
// its exit status.
type Handlers struct {
	Answer func(inv *interp.Invocation) int
	Refuse func(code, reason string) int

	// Envelope, when set, is asked first about every unit of a session: a unit that is one of
	// the turn's terminal's envelopes comes back with its command's analysis (package interp/envelope).
	Envelope func(unit string) (*envelope.Match, interp.Analysis)
	// Outside runs a part of an envelope that needs what the boundary hides (tmux wait -S
	// done) in spear-shell's own environment, and returns its exit status.
	Outside func(argv []string) int
	// Shell is the real shell's path, for the fresh process of `exec SELF -c CMD`.
	Shell string
	// Interrupted tells whether a Ctrl-C came while the unit ran: bash -i then gives up the
	// rest of the command line, so no answer and no part of an envelope of ours runs after it
	// (an envelope's `tmux wait -S done` would tell the harness that a later command ended).
	// nil: never (RunTerminal sets it).
	Interrupted func() bool
}

// givenUp tells whether a Ctrl-C gave up the unit being run.
func (h Handlers) givenUp() bool { return h.Interrupted != nil && h.Interrupted() }

// RunSegments runs an analysed -c string that mixes forwarded commands and answers: forwarded
// segments go to sh in order, each answer waits until what came before it has run. It returns the
// exit status of the whole string.
func RunSegments(a interp.Analysis, sh *realshell.Shell, h Handlers) int {
	runSegments(a.Segments, sh, h, false)
	return sh.Close()
}

// runSegments reports false once the shell has ended. inList: the segments are a command on the
// left of && or || (an envelope's), where set -e does not act, so forwarded parts and answers'
// statuses are sent as bash runs commands there.
func runSegments(segs []interp.Segment, sh *realshell.Shell, h Handlers, inList bool) bool {
	forward, setStatus := sh.Forward, sh.SetStatus
	if inList {
		forward, setStatus = sh.ForwardInList, sh.SetStatusInList
	}
	for _, seg := range segs {
		if seg.Invocation == nil {
			if hasCommands(seg.Forward) {
				forward(seg.Forward)
			}
			continue
		}
		if !sh.Sync() {
			return false
		}
		if h.givenUp() {
			return true
		}
		setStatus(h.Answer(seg.Invocation))
	}
	return true
}

// RunSession reads units from r until EOF or until the shell ends (exit, set -e), forwarding and
// answering them in order. Forwarded units that arrive together are written to the shell without
// waiting for each other.
func RunSession(r io.Reader, sh *realshell.Shell, h Handlers) int {
	units := interp.NewUnitReader(r)
	units.Shell = h.Shell
	for {
		unit, err := units.Next()
		if units.AtEnd() {
			sh.Ending()
			if units.CutShort() {
				sh.CutShort()
			}
		}
		if unit != "" && !runUnit(unit, sh, h) {
			return sh.Close()
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				sh.SetStatus(1)
			}
			return sh.Close()
		}
		if sh.Ended() {
			return sh.Close()
		}
		// Units that arrived together go to the shell together; a unit with nothing after it
		// yet goes at once, so output streams as commands are typed.
		if !units.LineReady() {
			sh.Flush()
		}
	}
}

// runUnit runs one unit of a session and reports false once the shell has ended.
func runUnit(unit string, sh *realshell.Shell, h Handlers) bool {
	if h.Envelope != nil {
		if m, a := h.Envelope(strings.TrimSuffix(unit, "\n")); m != nil {
			return runEnvelopeUnit(m, a, sh, h)
		}
	}
	a := interp.Analyze(unit)
	switch a.Verdict {
	case interp.Forward:
		// A comment line goes too: bash -s reads it, and its history keeps it.
		if strings.TrimLeft(unit, " \t\n") != "" {
			sh.Forward(unit)
			// A command of a terminal session reads the terminal: the next line is not read
			// until it has finished, as bash does.
			if sh.Terminal() {
				return sh.Sync()
			}
		}
	case interp.Refuse:
		if !sh.Sync() {
			return false
		}
		sh.SetStatus(h.Refuse(a.Code, a.Reason))
	case interp.Answer:
		return runSegments(a.Segments, sh, h, false)
	}
	return true
}

// hasCommands tells whether text holds anything but blank lines and comments: bash refuses an
// empty group, and sending nothing is what bash does with such lines anyway.
func hasCommands(text string) bool {
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimLeft(line, " \t")
		if line != "" && line[0] != '#' {
			return true
		}
	}
	return false
}
