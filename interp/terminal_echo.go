package interp

import (
	"golang.org/x/sys/unix"
)

// echoGate keeps the terminal from echoing what is typed ahead between the end of a command
// and the next prompt. bash -i's readline takes the terminal out of echo mode as soon as a
// command ends, so a line typed before the prompt shows after it; spear-shell needs round trips
// to the real shell before it can print the prompt, and a harness that types as soon as it
// learns a command ended (Terminal-Bench's `tmux wait -S done`) would otherwise see its line
// echoed before the prompt. Lines typed while echo was held are echoed after the prompt.
type echoGate struct {
	fd     int
	held   bool
	queued int // bytes of whole lines waiting when echo was held: the terminal echoed them
}

// hold turns echo off, if the terminal echoes: no forwarded command is running.
func (g *echoGate) hold() {
	if g.held {
		return
	}
	tio, err := unix.IoctlGetTermios(g.fd, unix.TCGETS)
	if err != nil || tio.Lflag&unix.ECHO == 0 {
		return
	}
	tio.Lflag &^= unix.ECHO
	if unix.IoctlSetTermios(g.fd, unix.TCSETS, tio) == nil {
		g.held = true
		g.queued, _ = unix.IoctlGetInt(g.fd, unix.TIOCINQ)
	}
}

// release turns echo back on after the prompt and returns how many bytes of whole lines were
// typed while it was off: they were not echoed, and the session echoes them itself. Nothing
// reads the terminal while echo is held, so they are what came after the bytes queued then.
func (g *echoGate) release() int {
	if !g.held {
		return 0
	}
	g.held = false
	tio, err := unix.IoctlGetTermios(g.fd, unix.TCGETS)
	if err != nil {
		return 0
	}
	queued, _ := unix.IoctlGetInt(g.fd, unix.TIOCINQ)
	tio.Lflag |= unix.ECHO
	_ = unix.IoctlSetTermios(g.fd, unix.TCSETS, tio)
	return max(queued-g.queued, 0)
}
