package main

// Envelopes (SPEC 3, 11): a -c string (or a session unit) that is exactly one of the turn's
// terminal's envelopes has its command judged alone, and its own parts run as the terminal
// meant them (package interp/envelope).

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/spear-shell/spear-shell/capability"
	"github.com/spear-shell/spear-shell/interp"
	"github.com/spear-shell/spear-shell/interp/envelope"
	"github.com/spear-shell/spear-shell/interp/invocation"
	"github.com/spear-shell/spear-shell/interp/realshell"
	"github.com/spear-shell/spear-shell/interp/sandbox"
)

// unmatchedHead is how much of an unmatched string the audit keeps.
const unmatchedHead = 256

// decideEnvelope decides text (a -c string or a session unit) under the turn's terminal: the match
// (nil when the text is not one of the terminal's envelopes, or no terminal is named) and the
// analysis of its command. Text that names spear-capability and matches none of the terminal's
// envelopes is recorded envelope_unmatched here, and is then judged as before.
func decideEnvelope(turn *capability.Turn, terminal, text string, login bool, self string) (*envelope.Match, interp.Analysis) {
	if terminal == "" || terminal == "none" {
		return nil, interp.Analysis{}
	}
	m := envelope.MatchEnvelope(terminal, text, envelope.Context{Login: login, IsSelf: isSelf(self)})
	if m == nil {
		if invocation.NameInText(text) {
			turn.EnvelopeUnmatched(terminal, envelope.Head(text, unmatchedHead))
		}
		return nil, interp.Analysis{}
	}
	if m.Envelope.Plain() {
		return nil, interp.Analysis{} // judged and run as any input (answers alone start no shell)
	}
	return m, interp.Analyze(m.Command)
}

// sessionEnvelopes is a session's Envelope hook, nil when the turn names no terminal. A unit is
// tried when it may name spear-capability, or may be an envelope with text of its own even
// without the name: Terminal-Bench's `; tmux wait -S done` must run outside the boundary for
// every command. The terminal is the one the scope pin read from the manifest at the session's
// start.
func sessionEnvelopes(turn *capability.Turn, login bool, self string) func(string) (*envelope.Match, interp.Analysis) {
	terminal := turn.Terminal()
	if terminal == "" || terminal == "none" {
		return nil
	}
	return func(unit string) (*envelope.Match, interp.Analysis) {
		if !invocation.MayInvoke(unit) && !envelope.MayBeEnvelope(terminal, unit) {
			return nil, interp.Analysis{}
		}
		return decideEnvelope(turn, terminal, unit, login, self)
	}
}

// runOutside runs a part of an envelope in spear-shell's own environment, outside the
// boundary (tmux wait -S done needs the tmux server's socket), and returns its status.
func runOutside(argv []string) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	err := cmd.Run()
	switch {
	case cmd.ProcessState != nil:
		return realshell.ExitStatus(cmd.ProcessState)
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
		if !filepath.IsAbs(path) || sandbox.IsStub(path) || self == "" {
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
