package lineedit

import (
	"errors"
	"io"
	"strconv"

	"golang.org/x/sys/unix"
)

// ErrInterrupted ends a read of the terminal that Ctrl-C cut short.
var ErrInterrupted = errors.New("terminal: interrupted")

// Keys reads the terminal one byte at a time, as readline's rl_getc does, so that what
// is typed after the line (the next line, or what the next command reads) stays in the
// terminal's queue. A read waits until a byte comes or Cancel is called. Ctrl-C makes the
// terminal drop what it holds, so a byte the terminal said was there may be gone when it is
// read: the reader reads through a description of the terminal of its own that does not block
// (opened again, so that the commands' stay as it is), else in the editor's mode that returns
// at once (VMIN 0), and waits again.
type Keys struct {
	fd       int
	own      bool // fd is the reader's own description of the terminal
	terminal bool
	wake     [2]int // a pipe: a byte in it ends the wait
}

// NewKeys returns the reader of the terminal fd (a file that is not a terminal is read as it
// is).
func NewKeys(fd int) (*Keys, error) {
	r := &Keys{fd: fd}
	if err := unix.Pipe2(r.wake[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		return nil, err
	}
	if _, err := unix.IoctlGetTermios(fd, unix.TCGETS); err == nil {
		r.terminal = true
		own, err := unix.Open("/proc/self/fd/"+strconv.Itoa(fd), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
		if err == nil {
			r.fd, r.own = own, true
		}
	}
	return r, nil
}

func (r *Keys) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	fds := []unix.PollFd{{Fd: int32(r.fd), Events: unix.POLLIN}, {Fd: int32(r.wake[0]), Events: unix.POLLIN}}
	for {
		fds[0].Revents, fds[1].Revents = 0, 0
		if _, err := unix.Poll(fds, -1); err == unix.EINTR {
			continue
		} else if err != nil {
			return 0, err
		}
		if fds[1].Revents != 0 {
			return 0, ErrInterrupted
		}
		if fds[0].Revents == 0 {
			continue
		}
		n, err := unix.Read(r.fd, p[:1])
		hangup := fds[0].Revents&(unix.POLLHUP|unix.POLLERR) != 0
		switch {
		case n > 0:
			return n, nil
		case err == unix.EINTR || err == unix.EAGAIN:
		case err == nil && r.terminal && !hangup:
			// Nothing after all: Ctrl-C dropped it.
		case err == nil || err == unix.EIO:
			// The terminal hung up, or the end of a file.
			return 0, io.EOF
		default:
			return 0, err
		}
	}
}

// Ready tells whether a byte is there to read now (typed ahead, or sent at once by a harness).
func (r *Keys) Ready() bool {
	fds := []unix.PollFd{{Fd: int32(r.fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0 && fds[0].Revents&unix.POLLIN != 0
}

// Cancel ends the read that waits, or the next one.
func (r *Keys) Cancel() { _, _ = unix.Write(r.wake[1], []byte{0}) }

// Reset drops a Cancel that no read took.
func (r *Keys) Reset() {
	var b [16]byte
	for {
		if n, _ := unix.Read(r.wake[0], b[:]); n <= 0 {
			return
		}
	}
}

// Close releases the reader's descriptors (not fd's).
func (r *Keys) Close() {
	unix.Close(r.wake[0])
	unix.Close(r.wake[1])
	if r.own {
		unix.Close(r.fd)
	}
}
