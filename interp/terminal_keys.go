package interp

import (
	"errors"
	"io"

	"golang.org/x/sys/unix"
)

// errInterrupted ends a read of the terminal that Ctrl-C cut short.
var errInterrupted = errors.New("terminal: interrupted")

// keyReader reads the terminal one byte at a time, as readline's rl_getc does, so that what
// is typed after the line (the next line, or what the next command reads) stays in the
// terminal's queue. A read waits until a byte comes or cancel is called.
type keyReader struct {
	fd   int
	wake [2]int // a pipe: a byte in it ends the wait
}

func newKeyReader(fd int) (*keyReader, error) {
	r := &keyReader{fd: fd}
	if err := unix.Pipe2(r.wake[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *keyReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	fds := []unix.PollFd{{Fd: int32(r.fd), Events: unix.POLLIN}, {Fd: int32(r.wake[0]), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(fds, -1)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if fds[1].Revents != 0 {
			return 0, errInterrupted
		}
		if fds[0].Revents != 0 {
			break
		}
	}
	for {
		n, err := unix.Read(r.fd, p[:1])
		switch {
		case err == unix.EINTR:
			continue
		case n > 0:
			return n, nil
		case err == nil || err == unix.EIO:
			// The terminal hung up.
			return 0, io.EOF
		default:
			return 0, err
		}
	}
}

// cancel ends the read that waits, or the next one.
func (r *keyReader) cancel() { _, _ = unix.Write(r.wake[1], []byte{0}) }

// reset drops a cancel that no read took.
func (r *keyReader) reset() {
	var b [16]byte
	for {
		if n, _ := unix.Read(r.wake[0], b[:]); n <= 0 {
			return
		}
	}
}

func (r *keyReader) close() {
	unix.Close(r.wake[0])
	unix.Close(r.wake[1])
}
