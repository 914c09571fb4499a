package realshell

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A session's commands run in the same process as its plumbing, so they can take the plumbing's
// requests away from it: `read -u` on bash's saved copy of the script, `set -n` (nothing runs
// any more), a function named `builtin`, `enable -n builtin`. Then no reply ever comes and the
// real shell waits for more script, while spear-shell waits for the reply. starved sees that
// state, so that the session ends with a message instead of hanging (SPEC 9).

// starveCheck is how often a wait for a reply looks at the real shell.
const starveCheck = 250 * time.Millisecond

// plumbingMessage ends a session whose real shell took the plumbing's requests.
const plumbingMessage = "spear-shell: session: the real shell read or skipped spear-shell's own requests " +
	"(read -u on its script, set -n, or a function or disabled builtin named builtin) and cannot be answered in order; the session ends\n"

// starved tells whether the real shell itself is blocked reading its script while nothing is
// left in the script pipe: every request sent has been read, and none is being answered. (A
// command of its own reading the script would be a child with its stdin redirected, which the
// plumbing's groups never leave it.)
func (s *Shell) starved() bool {
	// Nothing left to read in the script, and no reply on its way.
	for _, f := range []*os.File{s.script, s.replyR} {
		if queued(f) != 0 {
			return false
		}
	}
	if len(s.replies) > 0 {
		return false
	}
	// read(2) on the script pipe: its own stdin, or the copy bash saved of it while a
	// command's stdin is redirected.
	pid, fd, ok := s.blockedRead()
	if !ok {
		return false
	}
	link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", pid, fd))
	return err == nil && link == s.scriptLink()
}

// blockedRead tells whether the real shell process itself (not a command it runs) is in
// read(2), and on which of its descriptors: pid is its pid in this process's namespace.
func (s *Shell) blockedRead() (pid, fd int, ok bool) {
	pid = s.shellPid()
	if pid <= 0 {
		return 0, 0, false
	}
	if s.info != nil {
		// bwrap's child is the sandbox's init, which waits for the shell: its only child.
		kids, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		if err != nil {
			return 0, 0, false
		}
		if pid, err = strconv.Atoi(strings.TrimSpace(string(kids))); err != nil {
			return 0, 0, false
		}
	}
	call, err := os.ReadFile(fmt.Sprintf("/proc/%d/syscall", pid))
	if err != nil {
		return 0, 0, false
	}
	// "0 0xFD ...": read(2) on descriptor FD.
	fields := strings.Fields(string(call))
	if len(fields) < 2 || fields[0] != strconv.Itoa(syscall.SYS_READ) {
		return 0, 0, false
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(fields[1], "0x"), 16, 32)
	if err != nil {
		return 0, 0, false
	}
	return pid, int(n), true
}

// readingTerminal tells whether the real shell itself is blocked reading the session's terminal:
// a builtin of a unit (read, mapfile) waiting for a line. It returns that shell's pid.
func (s *Shell) readingTerminal() (pid int, reading bool) {
	if s.termDev == 0 {
		return 0, false
	}
	pid, fd, ok := s.blockedRead()
	if !ok {
		return 0, false
	}
	var st unix.Stat_t
	if unix.Stat(fmt.Sprintf("/proc/%d/fd/%d", pid, fd), &st) != nil {
		return 0, false
	}
	return pid, st.Mode&unix.S_IFMT == unix.S_IFCHR && st.Rdev == s.termDev
}

// How long, and how often, Interrupt watches for a SIGINT that bash left pending.
const (
	reinterruptWait  = 2 * time.Second
	reinterruptCheck = 20 * time.Millisecond
)

// Interrupt passes a typed Ctrl-C on to the shell's group (Signal). bash runs the trap of a
// SIGINT that comes while a unit runs once the command it interrupted returns; but one that
// comes after bash last looked for pending traps and before its read builtin blocks on the
// terminal stays pending until a line is typed, since that read(2) is never interrupted (seen
// with strace: SIGINT just after `echo go` wrote, then `read x` blocked for good). So when the
// shell was running (not blocked reading: the terminal, which the SIGINT interrupts, or its
// script, when no unit runs), it is watched for a while, until it replies (the unit has ended,
// given up or not): found blocked reading the terminal before that, it is given the SIGINT
// again, once and alone, which interrupts the read and runs the trap. A shell that took the
// first SIGINT gives the unit up, or is waiting for a command that has not ended; neither reads
// the terminal.
func (s *Shell) Interrupt() {
	replied := s.replied.Load()
	_, _, blocked := s.blockedRead()
	s.Signal(syscall.SIGINT)
	if blocked || s.termDev == 0 {
		return
	}
	go func() {
		for deadline := time.Now().Add(reinterruptWait); time.Now().Before(deadline); {
			select {
			case <-s.exited:
				return
			case <-time.After(reinterruptCheck):
			}
			if s.replied.Load() != replied {
				return // the unit has ended
			}
			if pid, reading := s.readingTerminal(); reading && s.replied.Load() == replied {
				_ = unix.Kill(pid, unix.SIGINT)
				return
			}
		}
	}()
}

// shellPid is the real shell's pid in this process's namespace: bwrap's sandboxed child (as
// its info pipe reports it) under the boundary, else the shell itself.
func (s *Shell) shellPid() int {
	if s.info == nil {
		return s.cmd.Process.Pid
	}
	s.childOnce.Do(func() { s.child = readChildPid(s.info) })
	return s.child
}

// scriptLink is what /proc/PID/fd/N reads for the shell's end of the script pipe.
func (s *Shell) scriptLink() string {
	st, err := s.script.Stat()
	if err != nil {
		return ""
	}
	return "pipe:[" + strconv.FormatUint(st.Sys().(*syscall.Stat_t).Ino, 10) + "]"
}

// queued is how many bytes wait in pipe f (-1 if that cannot be known), asked without taking
// f out of the runtime's poller as Fd would.
func queued(f *os.File) int {
	rc, err := f.SyscallConn()
	if err != nil {
		return -1
	}
	n := -1
	if rc.Control(func(fd uintptr) {
		if v, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ); err == nil {
			n = v
		}
	}) != nil {
		return -1
	}
	return n
}

// abandon ends a session whose plumbing was taken: the message, and the shell stopped.
func (s *Shell) abandon() {
	s.plumbingTaken = true
	if s.stderr != nil {
		s.stderr.WriteString(plumbingMessage)
	}
	s.Signal(syscall.SIGKILL)
}
