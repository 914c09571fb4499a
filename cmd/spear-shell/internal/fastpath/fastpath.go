// Package fastpath forwards a command line to the real shell, and does it for the -c fast path
// (a -c string that cannot spell spear-capability) from package initialisation, before main.
//
// Why from initialisation: Go initialises a program's packages in dependency order and, among
// those ready, by import path. This package needs only interp/realshell, interp/sandbox and
// interp/invocation (and policy/paths below them), none of which links a parser, a logger or
// the capability layer, so it runs before zerolog, net, regexp and the capability layer initialise, which the front binary links to
// answer plain invocations itself. The commonest command line then becomes bash without paying
// for them (GODEBUG=inittrace=1 shows what ran; docs/bench.md has the cost). Any other command
// line returns to main, which decides it whole and calls Forward where it forwards.
// It must never import interp (the parser), anything under capability/, or a logger
// (docs/layout.md, The `-c` fast path).
package fastpath

import (
	"errors"
	"fmt"
	"os"

	"github.com/spear-shell/spear-shell/interp/invocation"
	"github.com/spear-shell/spear-shell/interp/realshell"
	"github.com/spear-shell/spear-shell/interp/sandbox"
)

func init() {
	argv := os.Args
	if len(argv) == 0 || sandbox.IsStub(argv[0]) || len(argv) > 1 && argv[1] == "--report" {
		return // --report's own flags are not bash's (a session named -c is not a -c string)
	}
	// Only the exact shape main would forward at once: -c text that cannot spell the name.
	// (A test binary's -test.* flags never make it, so tests reach their own main.)
	a := realshell.ParseArgs(argv[1:])
	if a.Mode != realshell.ModeString || a.Own != "" || a.Problem != "" || (!a.NoExec && invocation.MayInvoke(a.String)) {
		return
	}
	os.Exit(Forward(argv[0], a))
}

// Forward hands the whole command line to the real shell, unchanged: it returns only with
// the exit status of a failure to start it.
func Forward(argv0 string, a realshell.Args) int {
	growStack(0)
	// Keep same-user processes out of our memory and /proc entries (SPEC 9).
	realshell.SetNonDumpable()
	_, _, rs, err := RealShell(a)
	if err != nil {
		fmt.Fprintf(os.Stderr, "spear-shell: %v\n", err)
		return 126
	}
	// The real shell inherits the signals ignored when this process started, as from bash.
	// (After RealShell: /proc/self/exe, which it reads, is then cheaper to open.)
	_ = realshell.KeepIgnored()
	return Exec(argv0, a, rs)
}

// Exec execs rs for command line a: it returns only with the exit status of a failure.
func Exec(argv0 string, a realshell.Args, rs *realshell.RealShell) int {
	err := rs.Exec(argv0, a)
	fmt.Fprintf(os.Stderr, "spear-shell: %v\n", err)
	if errors.Is(err, realshell.ErrNoShell) {
		return 127
	}
	return 126
}

// RealShell is how the real shell of command line a runs (this binary is the one the stub
// points to), and the turn manifest a names. self is "" when this binary's own path cannot be
// known; otherwise an error is the real shell's, and self and manifest still stand.
func RealShell(a realshell.Args) (self, manifest string, rs *realshell.RealShell, err error) {
	if self, err = realshell.Executable(); err != nil {
		return "", "", nil, err
	}
	manifest = a.ManifestPath(os.Getenv)
	rs, err = realshell.NewRealShell(os.Getenv, os.Environ(), self, manifest)
	return self, manifest, rs, err
}

// growStack grows this goroutine's stack to 8 KB while the stack is shallow. The main goroutine
// starts with 2 KB and package initialisation leaves it at 4 KB; forwarding needs more (the
// call chain down to a first allocation's slow path in NewRealShell, or to syscall.Exec), and a
// stack grown there is copied with every frame below it adjusted, which reads each frame's stack
// map from the cold pclntab: about 30 us of a -c command's start, against a few us here, where
// the frames are this one's callers only. The frame's size is what forces the growth; the
// index keeps the array from being optimised away.
//
//go:noinline
func growStack(i int) byte {
	var pad [4 << 10]byte
	return pad[i]
}
