package realshell

import (
	"os"
	"syscall"
)

// The plumbing's descriptors sit where a session's commands do not look (61 the terminal, 62 the
// replies, 60 bwrap's info pipe), put there by the start itself; the descriptors below them that
// this process inherited reach the real shell as they are, as they would reach bash -s
// (`echo 'cat <&3' | spear-shell 3<file`, a make jobserver's pipes).

const infoFD = 60

// sessionFiles returns the real shell's descriptors from 3 up: each one this process inherited
// (open and not close-on-exec: everything Go opens is close-on-exec) as it is, nil (closed in
// the child) for the others, and the plumbing's own at their places.
func sessionFiles(reply, terminal, info *os.File) []*os.File {
	files := make([]*os.File, replyFD+1-3)
	for fd := 3; fd < infoFD; fd++ {
		flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
		if errno == 0 && flags&syscall.FD_CLOEXEC == 0 {
			files[fd-3] = os.NewFile(uintptr(fd), "inherited")
		}
	}
	files[replyFD-3], files[terminalFD-3], files[infoFD-3] = reply, terminal, info
	return files
}
