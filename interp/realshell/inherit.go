package realshell

import (
	"os"
	"os/signal"
	"syscall"
)

// Passing on the signals ignored at start (ignored.go), as bash does: the real shell and its
// commands start with them ignored, and this process ignores them too (a SIGTERM ignored at
// start does nothing to spear-shell either).

// runtimeOwned are ignored only around the start of a child: the runtime needs SIGCHLD's
// default (ignored, the kernel reaps children before this process can wait for them) and
// SIGURG (it preempts goroutines with it).
var runtimeOwned = []syscall.Signal{syscall.SIGCHLD, syscall.SIGURG}

// unpassable cannot be ignored in a Go program (the runtime needs the faults, profiling and
// its per-thread system calls), so a child gets their default.
var unpassable = []syscall.Signal{syscall.SIGILL, syscall.SIGTRAP, syscall.SIGBUS, syscall.SIGFPE,
	syscall.SIGSEGV, syscall.SIGSTKFLT, syscall.SIGPROF, syscall.SIGSYS, 33}

// KeepIgnored ignores again, in this process, every signal that was ignored at start and that
// the runtime took over, but those it needs (runtimeOwned, unpassable): a child started after
// it inherits them. Call it before catching signals (signal.Notify): it tells what it
// could not know.
func KeepIgnored() error {
	set, err := IgnoredAtStart()
	for sig := syscall.Signal(1); sig <= 64; sig++ {
		if set.Has(sig) && !isIn(sig, runtimeOwned) && !isIn(sig, unpassable) && !signal.Ignored(sig) {
			signal.Ignore(sig)
		}
	}
	return err
}

// NotPassed are the signals ignored at start that the real shell does not get ignored; isolated
// tells whether it runs inside the boundary.
func NotPassed(isolated bool) SignalSet {
	set, _ := IgnoredAtStart()
	var out SignalSet
	for _, sig := range unpassable {
		// Signal 33 is glibc's own (SIGSETXID), set by every program that links it; GNU make
		// starts its commands with it ignored.
		if set.Has(sig) && sig != 33 {
			out = out.with(sig)
		}
	}
	if isolated && set.Has(syscall.SIGCHLD) {
		out = out.with(syscall.SIGCHLD)
	}
	return out
}

// Caught are the signals passed on to the real shell's command (SPEC 9): SIGINT, and SIGTERM
// and SIGHUP unless ignored (at start, or since). SIGINT is caught even when ignored, since a
// session passes it on to the command it stops (SPEC 4); a command that started with it
// ignored ignores it.
func Caught() []os.Signal {
	sigs := []os.Signal{syscall.SIGINT}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		if !signal.Ignored(sig) {
			sigs = append(sigs, sig)
		}
	}
	return sigs
}

// startIgnoring runs start, the fork or exec of a child, with the runtime's signals that were
// ignored at start (runtimeOwned) ignored, so that the child inherits them; then the runtime
// has them back. While they are ignored, a child of this process that ends is reaped by the
// kernel: start is short, and the callers start no other child at the same time but a
// provider, which does not end then unless it dies at once. bwrap (the child when isolated)
// never gets SIGCHLD ignored: it would wait for the command forever, and it does not reset it.
func startIgnoring(isolated bool, start func() error) error {
	set, _ := IgnoredAtStart()
	var owned []os.Signal
	for _, sig := range runtimeOwned {
		if set.Has(sig) && !(isolated && sig == syscall.SIGCHLD) {
			owned = append(owned, sig)
		}
	}
	if len(owned) == 0 {
		return start()
	}
	signal.Ignore(owned...)
	err := start()
	// Catching a signal gives it the runtime's handler again; stopping leaves that handler.
	c := make(chan os.Signal, 1)
	signal.Notify(c, owned...)
	signal.Stop(c)
	return err
}

func isIn(sig syscall.Signal, sigs []syscall.Signal) bool {
	for _, s := range sigs {
		if s == sig {
			return true
		}
	}
	return false
}
