// Command execbwrap is the floor for a shell behind bubblewrap: it execs the bwrap argv it is
// given (the benchmark passes the options spear-shell used, then -- /bin/bash -c true). Where
// those options read a file mask from a descriptor (--ro-bind-data FD), it opens /dev/null
// there first, as spear-shell does.
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
		if a != "--ro-bind-data" || i+1 >= len(argv) {
			continue
		}
		fd, err := strconv.Atoi(argv[i+1])
		if err != nil {
			fmt.Fprintf(os.Stderr, "execbwrap: --ro-bind-data %q: %v\n", argv[i+1], err)
			os.Exit(2)
		}
		if err := devNullAt(fd); err != nil {
			fmt.Fprintf(os.Stderr, "execbwrap: %v\n", err)
			os.Exit(126)
		}
	}
	err := syscall.Exec(argv[0], argv, os.Environ())
	fmt.Fprintf(os.Stderr, "execbwrap: exec %s: %v\n", argv[0], err)
	os.Exit(126)
}

// devNullAt leaves /dev/null open at descriptor fd across exec.
func devNullAt(fd int) error {
	n, err := syscall.Open(os.DevNull, syscall.O_RDONLY, 0)
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
