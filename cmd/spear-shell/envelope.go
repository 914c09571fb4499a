package main

// Envelopes (SPEC 3, 11): a -c string (or a session unit) that is exactly one of the turn's
// terminal's envelopes has its command judged alone, and its own parts run as the terminal
// meant them (interp/envelope*.go).

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/spear-shell/spear-shell/capability"
	"github.com/spear-shell/spear-shell/interp"
	"github.com/spear-shell/spear-shell/interp/realshell"
)

// unmatchedHead is how much of an unmatched string the audit keeps.
const unmatchedHead = 256

// Envelope is what a session needs to decide a unit under the turn's terminal: the match
// (nil when the unit is not one of the terminal's envelopes, or no terminal is named) and
// the analysis of its command. A unit that names spear-capability and matches none of the
// terminal's envelopes is recorded envelope_unmatched here, and is then judged as before.
func Envelope(turn *capability.Turn, terminal, unit string, login bool, self string) (*interp.Match, interp.Analysis) {
	if terminal == "" || terminal == "none" || !realshell.MayInvoke(unit) {
		return nil, interp.Analysis{}
	}
	m := interp.MatchEnvelope(terminal, unit, interp.Context{Login: login, IsSelf: isSelf(self)})
	if m == nil {
		if realshell.NameInText(unit) {
			turn.EnvelopeUnmatched(terminal, interp.Head(unit, unmatchedHead))
		}
		return nil, interp.Analysis{}
	}
	return m, interp.Analyze(m.Command)
}

// envelopeHandlers adds to h what an envelope's own parts need.
func envelopeHandlers(h interp.Handlers, rs *realshell.RealShell) interp.EnvelopeHandlers {
	return interp.EnvelopeHandlers{Handlers: h, Outside: runOutside, Shell: rs.Path}
}

// runOutside runs a part of an envelope in spear-shell's own environment, outside the
// boundary (tmux wait -S done needs the tmux server's socket), and returns its status.
func runOutside(argv []string) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	case errors.Is(err, exec.ErrNotFound):
		os.Stderr.WriteString("spear-shell: " + err.Error() + "\n")
		return 127
	}
	os.Stderr.WriteString("spear-shell: " + err.Error() + "\n")
	return 126
}

// isSelf tells whether path, absolute, resolves to the running binary self and is not the stub.
func isSelf(self string) func(string) bool {
	return func(path string) bool {
		if !filepath.IsAbs(path) || realshell.IsStub(path) || self == "" {
			return false
		}
		a, err := os.Stat(path)
		if err != nil {
			return false
		}
		b, err := os.Stat(self)
		return err == nil && os.SameFile(a, b)
	}
}
