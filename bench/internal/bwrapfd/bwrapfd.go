// Package bwrapfd opens /dev/null at the descriptors a bwrap command line names, so that the
// benchmark's bwrap references can run the argv spear-shell used, whose descriptors (its info
// pipe, its options pipe, an empty file) only spear-shell had.
package bwrapfd

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// fdOptions are bwrap's options that name a descriptor, with how /dev/null stands in for it:
// read for the data options, write for the reports (bwrap fails on a closed descriptor).
var fdOptions = map[string]int{
	"--args":           syscall.O_RDONLY,
	"--ro-bind-data":   syscall.O_RDONLY,
	"--bind-data":      syscall.O_RDONLY,
	"--file":           syscall.O_RDONLY,
	"--block-fd":       syscall.O_RDONLY,
	"--info-fd":        syscall.O_WRONLY,
	"--json-status-fd": syscall.O_WRONLY,
}

// StandIns leaves /dev/null open, without close-on-exec, at every descriptor bwrap's options
// in argv name (argv[0] is bwrap; the command after "--" is not looked at). It returns the
// highest descriptor so opened, or 2.
func StandIns(argv []string) (maxFD int, err error) {
	maxFD = 2
	for i := 1; i+1 < len(argv) && argv[i] != "--"; i++ {
		mode, ok := fdOptions[argv[i]]
		if !ok {
			continue
		}
		fd, err := strconv.Atoi(argv[i+1])
		if err != nil || fd < 3 {
			return 0, fmt.Errorf("%s %q: not a descriptor above 2", argv[i], argv[i+1])
		}
		if err := devNullAt(fd, mode); err != nil {
			return 0, err
		}
		maxFD = max(maxFD, fd)
		i++
	}
	return maxFD, nil
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
