// Command execbwrap is the floor for a shell behind bubblewrap: it execs the bwrap argv it is
// given (the benchmark passes the options spear-shell used, then -- /bin/bash -c true). Where
// those options name a descriptor (--ro-bind-data FD, --info-fd FD), it opens /dev/null there
// first: spear-shell passes an empty file or its info pipe, and bwrap needs the descriptor open.
//
//	execbwrap /usr/bin/bwrap [options...] -- /bin/bash -c true
package main

import (
	"fmt"
	"os"
	"syscall"

	"github.com/spear-shell/spear-shell/bench/internal/bwrapfd"
)

func main() {
	argv := os.Args[1:]
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "usage: execbwrap BWRAP [options...] -- command...")
		os.Exit(2)
	}
	if _, err := bwrapfd.StandIns(argv); err != nil {
		fmt.Fprintf(os.Stderr, "execbwrap: %v\n", err)
		os.Exit(126)
	}
	err := syscall.Exec(argv[0], argv, os.Environ())
	fmt.Fprintf(os.Stderr, "execbwrap: exec %s: %v\n", argv[0], err)
	os.Exit(126)
}
