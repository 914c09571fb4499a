package realshell

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// The plumbing's descriptors (64 the shell's own /dev/null, 65 the replies, 66 the terminal, 67
// bwrap's info pipe) sit where bash never puts one of its own, put there by the start itself.
// bash 5.2 hands out descriptors in three places: the lowest free one from 10 up (`exec
// {var}>file`, the copies it saves of redirected descriptors), the highest free one below 64
// (move_to_high_fd with 64: coprocesses' pipes, `<(...)`, so a coprocess gets 63 and 60), and the
// highest free one below the descriptor limit or 256 (its script file, lastpipe's stdin). 64-67
// are reached only by a session holding fifty descriptors from 10 up, or two hundred from 255
// down. The descriptors below 64 that this process inherited reach the real shell as they are,
// as they would reach bash -s (`echo 'cat <&3' | spear-shell 3<file`, a make jobserver's pipes).
//
// Each unit runs in a group that gives it its stdin and hides the plumbing's descriptors. bash
// saves a descriptor a group redirects to the lowest free one at or above 10, where the
// session's own `exec {var}>file` would take 10 and 11 as in bash -s, unless the redirection
// duplicates a descriptor N of 10 or more: then the copy goes above N. So the group's every
// redirection duplicates one of the plumbing's descriptors (64 up), and the descriptors it must
// hide are closed inside it, by an exec that the group's end undoes:
//
//	{ exec 64<&- 65<&-; UNIT
//	} 0<&64 65<&64 64<&65
//
// (0<&66 66<&64 and 66<&- for the terminal). bash keeps its saved copies close-on-exec, so no
// command sees them, and a session's `exec 11<&-` closes nothing of the plumbing's.

const (
	nullFD = 64
	infoFD = 67
)

// sessionFiles returns the real shell's descriptors from 3 up: each one this process inherited
// (open and not close-on-exec: everything Go opens is close-on-exec) as it is, nil (closed in
// the child) for the others, and the plumbing's own at their places.
func sessionFiles(reply, terminal, info *os.File) []*os.File {
	files := make([]*os.File, infoFD+1-3)
	for fd := 3; fd < nullFD; fd++ {
		flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
		if errno == 0 && flags&syscall.FD_CLOEXEC == 0 {
			files[fd-3] = os.NewFile(uintptr(fd), "inherited")
		}
	}
	files[replyFD-3], files[terminalFD-3], files[infoFD-3] = reply, terminal, info
	return files
}

// stdinRedirect is chosen once: a unit's commands read the terminal or /dev/null.
func (s *Shell) stdinRedirect(terminal bool) {
	s.stdin = fmt.Sprintf("0<&%d", nullFD)
	hide := fmt.Sprintf("%d<&%d %d<&%d", replyFD, nullFD, nullFD, replyFD)
	closes := fmt.Sprintf("%d<&- %d<&-", nullFD, replyFD)
	if terminal {
		s.stdin = fmt.Sprintf("0<&%d %d<&-", terminalFD, terminalFD)
		hide = fmt.Sprintf("0<&%d %d<&%d %s", terminalFD, terminalFD, nullFD, hide)
		closes += fmt.Sprintf(" %d<&-", terminalFD)
	} else {
		hide = s.stdin + " " + hide
	}
	s.groupHead = `\exec ` + closes + "; "
	s.groupTail = "\n} " + hide + "\n"
}

// groupHeadKeep is groupHead that keeps $? (for script text, which has no prelude of its own):
// the exec resets it, and the status before it is given back, as the batch's prelude does.
func (s *Shell) groupHeadKeep() string {
	return "{ __spear_s=$?; " + s.groupHead + s.restoreStatus() + "; } " + noStderr + "; "
}

// A descriptor limit below the plumbing's (`ulimit -n 6`) cannot be lived with: when the group
// that ran the command ends, bash cannot put the plumbing's descriptors back, and it exits there, with
// status 0 and no word of its own. An unconfined shell's limit is read from its zombie, before
// it is reaped, so that the session can say why it ended. (Under the boundary the shell is
// bwrap's grandchild, reaped inside the sandbox; docs/shell.md says so.)

const fdLimitMessage = "spear-shell: session: the real shell's descriptor limit (ulimit -n) fell below the plumbing's descriptors (64-67); the session ends\n"

// fdLimitCut waits until process pid has exited, without reaping it, and tells whether its
// soft limit on open files was below the plumbing's descriptors.
func fdLimitCut(pid int) bool {
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != nil {
		return false
	}
	// The zombie keeps its limits until it is reaped: one call, no /proc file to parse.
	var rl unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, nil, &rl); err != nil {
		return false
	}
	return rl.Cur <= replyFD
}
