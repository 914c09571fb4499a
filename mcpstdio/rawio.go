package mcpstdio

import (
	"io"
	"os"
	"sync"
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
	return newQuiet(rc)
}

// quiet keeps the callbacks it hands to rc and their state, made once: a closure made for each
// read and write would be three allocations each, six reads and writes a call through a holder.
// The mutexes keep concurrent reads (or writes) from sharing that state, as net.Conn allows.
type quiet struct {
	rc syscall.RawConn

	rmu    sync.Mutex
	rp     []byte
	rn     int
	rerrno syscall.Errno
	read   func(fd uintptr) bool

	wmu    sync.Mutex
	wp     []byte
	wdone  int
	werrno syscall.Errno
	write  func(fd uintptr) bool
}

func newQuiet(rc syscall.RawConn) *quiet {
	q := &quiet{rc: rc}
	q.read = func(fd uintptr) bool {
		for {
			r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&q.rp[0])), uintptr(len(q.rp)))
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // wait in the poller
			}
			q.rn, q.rerrno = int(r), e
			return true
		}
	}
	q.write = func(fd uintptr) bool {
		for {
			r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&q.wp[q.wdone])), uintptr(len(q.wp)-q.wdone))
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // full: wait in the poller
			case 0:
				q.wdone += int(r)
			}
			q.werrno = e
			return true
		}
	}
	return q
}

func (q *quiet) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	q.rmu.Lock()
	defer q.rmu.Unlock()
	q.rp, q.rn, q.rerrno = p, 0, 0
	err := q.rc.Read(q.read)
	n, errno := q.rn, q.rerrno
	q.rp = nil // not kept past the call
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

func (q *quiet) Write(p []byte) (int, error) {
	q.wmu.Lock()
	defer q.wmu.Unlock()
	q.wp, q.wdone = p, 0
	defer func() { q.wp = nil }() // not kept past the call
	for q.wdone < len(p) {
		q.werrno = 0
		err := q.rc.Write(q.write)
		if err != nil {
			return q.wdone, err
		}
		if q.werrno != 0 {
			return q.wdone, os.NewSyscallError("write", q.werrno)
		}
	}
	return q.wdone, nil
}
