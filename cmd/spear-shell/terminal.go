package main

import (
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/spear-shell/spear-shell/interp/lineedit"
	"github.com/spear-shell/spear-shell/interp/realshell"
	"github.com/spear-shell/spear-shell/interp/session"
)

// terminalSession returns the terminal of a terminal session (SPEC 4: -i, or stdin and stderr
// both terminals, as bash decides it is interactive), or nil for a piped session. It takes the
// terminal as controlling terminal when this process has none, and has g report Ctrl-C.
func terminalSession(a realshell.Args, stdin, stderr *os.File, g *guard) *session.Terminal {
	if !a.Terminal && !(isTerminal(stdin) && isTerminal(stderr)) {
		return nil
	}
	takeTerminal(stdin)
	// bash -i ignores Ctrl-Z at its prompt, and its commands get SIGTSTP's default even when
	// it was ignored at start; a caught signal is reset to its default in children, so the
	// same holds here. (signal.Ignored cannot tell an inherited SIG_IGN of SIGTSTP: the
	// runtime leaves the job-control signals alone and never records them.)
	signal.Notify(make(chan os.Signal, 1), syscall.SIGTSTP)
	return &session.Terminal{In: stdin, Out: stderr, Interrupts: g.watchTerminal(), History: sessionHistory()}
}

// sessionHistory is the history of a terminal session as bash -i keeps it: HISTSIZE lines
// (500 when unset or not a number), read from and appended to HISTFILE (~/.bash_history when
// unset, none when empty). Both come from the environment: the real shell's own variables
// (a HISTFILE set in ~/.bashrc) are not asked.
func sessionHistory() *lineedit.History {
	size, err := strconv.Atoi(os.Getenv("HISTSIZE"))
	if err != nil {
		size = -1
	}
	file, set := os.LookupEnv("HISTFILE")
	if home := os.Getenv("HOME"); !set && home != "" {
		file = filepath.Join(home, ".bash_history")
	}
	return lineedit.NewHistory(size, file)
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

// rcFiles are the startup files bash -i reads, in order, of those that exist: none with --norc
// or in a login shell (the real shell reads the profile itself, as -l tells it); the --rcfile
// (--init-file) file; else the system bashrc (/etc/bash.bashrc, which Debian's bash reads) and
// ~/.bashrc. The real shell is not interactive, so it reads none of them on its own.
func rcFiles(opts []string, home string) []string {
	if slices.Contains(opts, "--norc") || login(opts) {
		return nil
	}
	files := []string{"/etc/bash.bashrc", filepath.Join(home, ".bashrc")}
	for i, o := range opts {
		if (o == "--rcfile" || o == "--init-file") && i+1 < len(opts) {
			files = opts[i+1 : i+2]
		}
	}
	var found []string
	for _, f := range files {
		if _, err := os.Stat(f); err == nil && filepath.IsAbs(f) {
			found = append(found, f)
		}
	}
	return found
}

// sourceRC has the real shell read the startup files of a terminal session before its first
// prompt, as bash -i does.
func sourceRC(sh *realshell.Shell, opts []string) {
	for _, f := range rcFiles(opts, os.Getenv("HOME")) {
		sh.Forward(". '" + strings.ReplaceAll(f, "'", `'\''`) + "'")
	}
}
