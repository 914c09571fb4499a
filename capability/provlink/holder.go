package provlink

// What a holder process (the keeper, the broker) does the same way: its socket bound and probed,
// its start and its start's descriptors, its lock, the opening and the requests of a connection.

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
)

// CloseInherited closes every descriptor above above that this process did not open itself
// (they lack close-on-exec): whatever the process that started the holder left open is not held
// by it, nor passed to its providers.
func CloseInherited(above int) {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, ent := range ents {
		fd, err := strconv.Atoi(ent.Name())
		if err != nil || fd <= above {
			continue
		}
		flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
		if errno == 0 && flags&syscall.FD_CLOEXEC == 0 {
			syscall.Close(fd)
		}
	}
}

// Lock takes an exclusive flock on path (created 0600, never through a symlink), for a holder's
// start and end; unlock releases it.
func Lock(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock: %w", err)
	}
	return func() { f.Close() }, nil
}

// Requests reads conn's requests (ReadRequests) in a goroutine of its own: the requests come on
// reqs, a call's cancel through calls; stop closes the connection and returns once the reader
// has.
func Requests(conn *net.UnixConn) (reqs <-chan Request, calls *InFlight, stop func()) {
	ch := make(chan Request)
	quit := make(chan struct{})
	read := make(chan struct{})
	calls = &InFlight{}
	go func() {
		defer close(read)
		ReadRequests(conn, ch, quit, calls)
	}()
	return ch, calls, func() {
		close(quit)
		conn.Close()
		<-read
	}
}

// Probe connects to the socket at path and hangs up: does a holder listen there?
func Probe(path string) error {
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return err
	}
	return conn.Close()
}

// Listen binds a holder's socket at path, mode 0600, left in place when the listener closes
// (it is the holder's once started).
func Listen(path string) (*net.UnixListener, error) {
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	ln.SetUnlinkOnClose(false)
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		os.Remove(path)
		return nil, err
	}
	return ln, nil
}

// Spawn starts argv as a holder listening on ln (bound at path), in dir with env: in a session
// of its own (a harness that kills the caller's process group does not reach it), with
// /dev/null as stdin, stdout and stderr and the socket as descriptor 3, its only other (a
// harness that waits for the caller's output to close does not wait for it). It is not waited
// for. When it cannot be started, the socket is removed.
func Spawn(ln *net.UnixListener, path string, argv []string, dir string, env []string) error {
	err := spawn(ln, argv, dir, env)
	if err != nil {
		os.Remove(path)
	}
	return err
}

func spawn(ln *net.UnixListener, argv []string, dir string, env []string) error {
	lf, err := ln.File()
	if err != nil {
		return err
	}
	defer lf.Close()
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	_, err = syscall.ForkExec(argv[0], argv, &syscall.ProcAttr{
		Dir:   dir,
		Env:   env,
		Files: []uintptr{null.Fd(), null.Fd(), null.Fd(), lf.Fd()},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		return fmt.Errorf("start %s: %w", argv[0], err)
	}
	return nil
}

// Accept accepts connections on ln until it is closed, serving each in a goroutine of wg: admit
// registers a connection with the holder and returns how to serve it, or nil once the holder
// has ended (the connection is then closed unserved).
func Accept(ln *net.UnixListener, wg *sync.WaitGroup, admit func(conn *net.UnixConn) (serve func())) {
	for {
		conn, err := ln.AcceptUnix()
		if err != nil {
			return // closed: the holder ends
		}
		serve := admit(conn)
		if serve == nil {
			conn.Close()
			continue
		}
		wg.Go(serve)
	}
}

// Served is one connection a holder serves, past its hello: the caller's requests, its calls
// in flight, and how it is answered.
type Served struct {
	Hello  Request
	Reqs   <-chan Request
	Calls  *InFlight
	Answer func(Response) bool
	stop   func()
}

// Open starts serving conn as every holder does: a peer of another user gets not a word, and the
// first request must be hello (else it is refused, "hello first"). nil then, or when the caller
// went away first; otherwise the holder answers the hello itself and must Close what it got.
func Open(conn *net.UnixConn) *Served {
	if SamePeer(conn) != nil {
		return nil
	}
	reqs, calls, stop := Requests(conn)
	s := &Served{Reqs: reqs, Calls: calls, Answer: NewAnswerer(conn).Answer, stop: stop}
	hello, ok := <-reqs
	if !ok {
		stop()
		return nil
	}
	if hello.Op != OpHello {
		s.Refuse("hello first")
		stop()
		return nil
	}
	s.Hello = hello
	return s
}

// Refuse answers with the holder's error msg.
func (s *Served) Refuse(msg string) {
	s.Answer(Response{Err: &WireError{Msg: msg, Keeper: true}})
}

// Close closes the connection and returns once its reader has.
func (s *Served) Close() { s.stop() }

// EndOnSignal has SIGTERM, SIGHUP and SIGINT end the holder (end, with "terminated by" the
// signal) until stop closes; the goroutine it starts is wg's. Call the returned function once
// stop is closed and wg waited for.
func EndOnSignal(wg *sync.WaitGroup, stop <-chan struct{}, end func(reason string)) (release func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT)
	wg.Go(func() {
		select {
		case sig := <-sigs:
			end("terminated by " + sig.String())
		case <-stop:
		}
	})
	return func() { signal.Stop(sigs) }
}

// Inherited is the listening socket a holder was started with, on descriptor fd by the process
// that bound it (so that callers could connect before the holder ran); every other inherited
// descriptor is closed first. nil when fd is not a unix listening socket.
func Inherited(fd int, name string) *net.UnixListener {
	CloseInherited(fd)
	f := os.NewFile(uintptr(fd), name)
	fl, err := net.FileListener(f)
	f.Close()
	if err != nil {
		return nil
	}
	ln, ok := fl.(*net.UnixListener)
	if !ok {
		fl.Close()
		return nil
	}
	return ln
}
