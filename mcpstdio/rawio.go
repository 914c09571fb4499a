package mcpstdio

import (
	"io"
	"os"
	"syscall"
	"unsafe"
)

// Quiet reads and writes a non-blocking descriptor that the runtime polls (a pipe made by
// os.Pipe, a unix socket) with raw system calls, waiting in the runtime's poller as os.File and
// net.Conn do. The difference is the runtime's monitor thread: every ordinary system call wakes
// it from its sleep when the process was idle, and it then polls every 20 µs until the process
// is idle again, taking the P of any call that lasts longer (a write that wakes the reader often
// does on a loaded machine) and starting a thread to spin for it. A process that only passes
// lines between descriptors (the keeper, the broker, the face's provider link) wakes once per
// line; with Quiet it wakes only the thread that reads (docs/bench.md, face-invoke). A read or
// write on a non-blocking descriptor never blocks, so nothing is lost by not telling the runtime.
//
// Quiet returns c itself, unchanged, when its descriptor cannot be reached or is blocking.
func Quiet(c interface {
	io.ReadWriter
	SyscallConn() (syscall.RawConn, error)
}) io.ReadWriter {
	rc, err := c.SyscallConn()
	if err != nil {
		return c
	}
	nonblocking := false
	if cerr := rc.Control(func(fd uintptr) {
		fl, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		nonblocking = e == 0 && fl&syscall.O_NONBLOCK != 0
	}); cerr != nil || !nonblocking {
		return c
	}
	return quiet{rc: rc}
}

type quiet struct{ rc syscall.RawConn }

func (q quiet) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := q.rc.Read(func(fd uintptr) bool {
		for {
			r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // wait in the poller
			}
			n, errno = int(r), e
			return true
		}
	})
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, os.NewSyscallError("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (q quiet) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		var errno syscall.Errno
		err := q.rc.Write(func(fd uintptr) bool {
			for {
				r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[done])), uintptr(len(p)-done))
				switch e {
				case syscall.EINTR:
					continue
				case syscall.EAGAIN:
					return false // full: wait in the poller
				case 0:
					done += int(r)
				}
				errno = e
				return true
			}
		})
		if err != nil {
			return done, err
		}
		if errno != 0 {
			return done, os.NewSyscallError("write", errno)
		}
	}
	return done, nil
}
