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
	"strconv"
	"syscall"
)

func main() {
	argv := os.Args[1:]
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "usage: execbwrap BWRAP [options...] -- command...")
		os.Exit(2)
	}
	for i, a := range argv {
		if a == "--" {
			break
		}
		mode, ok := fdOptions[a]
		if !ok || i+1 >= len(argv) {
			continue
		}
		fd, err := strconv.Atoi(argv[i+1])
		if err != nil {
			fmt.Fprintf(os.Stderr, "execbwrap: %s %q: %v\n", a, argv[i+1], err)
			os.Exit(2)
		}
		if err := devNullAt(fd, mode); err != nil {
			fmt.Fprintf(os.Stderr, "execbwrap: %v\n", err)
			os.Exit(126)
		}
	}
	err := syscall.Exec(argv[0], argv, os.Environ())
	fmt.Fprintf(os.Stderr, "execbwrap: exec %s: %v\n", argv[0], err)
	os.Exit(126)
}

// fdOptions are bwrap's options that name a descriptor, with how /dev/null stands in for it:
// read for the data options, write for the reports (bwrap fails on a closed descriptor).
var fdOptions = map[string]int{
	"--ro-bind-data":   syscall.O_RDONLY,
	"--bind-data":      syscall.O_RDONLY,
	"--file":           syscall.O_RDONLY,
	"--info-fd":        syscall.O_WRONLY,
	"--json-status-fd": syscall.O_WRONLY,
}

// devNullAt leaves /dev/null open at descriptor fd across exec.
func devNullAt(fd, mode int) error {
	n, err := syscall.Open(os.DevNull, mode, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", os.DevNull, err)
	}
	if n == fd {
		return nil
	}
	if err := syscall.Dup2(n, fd); err != nil {
		return fmt.Errorf("dup2 to %d: %w", fd, err)
	}
	return syscall.Close(n)
}
