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
	"strconv"
	"syscall"
)

func main() {
	argv := os.Args[1:]
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "usage: forkbwrap BWRAP [options...] -- command...")
		os.Exit(2)
	}
	files := []uintptr{0, 1, 2}
	for i, a := range argv {
		if a == "--" {
			break
		}
		if a != "--info-fd" && a != "--ro-bind-data" && a != "--bind-data" && a != "--file" && a != "--json-status-fd" || i+1 >= len(argv) {
			continue
		}
		fd, err := strconv.Atoi(argv[i+1])
		if err != nil || fd < 3 || fd > 64 {
			fmt.Fprintf(os.Stderr, "forkbwrap: %s %q\n", a, argv[i+1])
			os.Exit(2)
		}
		null, err := syscall.Open(os.DevNull, syscall.O_RDWR, 0)
		if err != nil {
			fmt.Fprintf(os.Stderr, "forkbwrap: %v\n", err)
			os.Exit(126)
		}
		for len(files) <= fd {
			files = append(files, uintptr(null))
		}
		files[fd] = uintptr(null)
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
