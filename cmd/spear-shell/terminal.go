package main

import (
	"os"

	"golang.org/x/sys/unix"

	"github.com/spear-shell/spear-shell/interp"
	"github.com/spear-shell/spear-shell/interp/realshell"
)

// terminalSession returns the terminal of a terminal session (SPEC 4: -i, or stdin and stderr
// both terminals, as bash decides it is interactive), or nil for a piped session. It takes the
// terminal as controlling terminal when this process has none, and has g report Ctrl-C.
func terminalSession(a realshell.Args, stdin, stderr *os.File, g *guard) *interp.Terminal {
	if !a.Terminal && !(isTerminal(stdin) && isTerminal(stderr)) {
		return nil
	}
	takeTerminal(stdin)
	return &interp.Terminal{In: stdin, Out: stderr, Interrupts: g.watchTerminal()}
}

// takeTerminal makes the terminal on f the controlling terminal of this process when it leads a
// session that has none (started by setsid with a pseudo-terminal as its streams, as OpenHands
// starts its shell), so that a typed Ctrl-C reaches it. It changes nothing otherwise: the
// kernel refuses a terminal that is another session's, or a second one.
func takeTerminal(f *os.File) {
	if !isTerminal(f) || unix.Getpid() != mustSid() {
		return
	}
	_ = unix.IoctlSetInt(int(f.Fd()), unix.TIOCSCTTY, 0)
}

func mustSid() int {
	sid, err := unix.Getsid(0)
	if err != nil {
		return -1
	}
	return sid
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
