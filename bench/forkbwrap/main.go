// Command forkbwrap is the floor of a parent that stays to pass signals on, as spear-shell must
// inside the boundary: it forks the bwrap argv it is given (descriptors bwrap names stand in as
// /dev/null, as in execbwrap), catches SIGINT, SIGTERM and SIGHUP on one processor, passes them
// to bwrap, waits for it and exits with its status. The benchmark compares it with execbwrap.
//
//	forkbwrap /usr/bin/bwrap [options...] -- /bin/bash -c true
package main

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/spear-shell/spear-shell/bench/internal/bwrapfd"
)

func main() {
	argv := os.Args[1:]
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "usage: forkbwrap BWRAP [options...] -- command...")
		os.Exit(2)
	}
	maxFD, err := bwrapfd.StandIns(argv)
	if err != nil {
		fmt.Fprintf(os.Stderr, "forkbwrap: %v\n", err)
		os.Exit(126)
	}
	files := make([]uintptr, maxFD+1)
	for i := range files {
		files[i] = uintptr(i)
		if _, _, errno := syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(i), syscall.F_GETFD, 0); errno != 0 {
			files[i] = ^uintptr(0) // not open: stays closed (spear-shell's info descriptor sits above inherited ones)
		}
	}
	pid, err := syscall.ForkExec(argv[0], argv, &syscall.ProcAttr{Env: os.Environ(), Files: files})
	if err != nil {
		fmt.Fprintf(os.Stderr, "forkbwrap: %v\n", err)
		os.Exit(126)
	}
	runtime.GOMAXPROCS(1)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		for s := range sigs {
			_ = syscall.Kill(pid, s.(syscall.Signal))
		}
	}()
	var ws syscall.WaitStatus
	for {
		if _, err := syscall.Wait4(pid, &ws, 0, nil); err != syscall.EINTR {
			break
		}
	}
	if ws.Signaled() {
		os.Exit(128 + int(ws.Signal()))
	}
	os.Exit(ws.ExitStatus())
}
