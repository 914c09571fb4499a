package broker

// The caller's side: reaching the broker (starting one when none runs), and the operator's
// commands (--broker, --broker-stop, --broker-release, --check's status).

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/spear-shell/spear-shell/audit"
	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/capability/provlink"
	"github.com/spear-shell/spear-shell/mcpstdio"
	"github.com/spear-shell/spear-shell/policy"
)

// ErrUnavailable is a broker that cannot be started or reached (broker_unavailable): the shared
// entries are unavailable to this answer, never started here.
var ErrUnavailable = errors.New("the broker cannot be reached")

// ErrDown is an upstream the broker holds that is down (restarting, or held down for flapping).
var ErrDown = provlink.ErrDown

// ErrRefused is the broker refusing a request: the entry, share key or launch keys it names are
// not in the configuration as the broker reads it.
var ErrRefused = errors.New("the broker refused the request")

// ErrLost is the broker's connection failing under a request: the call may have run; it is not
// sent again.
var ErrLost = errors.New("the broker went away")

// lockFile takes the broker's lock (its start and end).
func lockFile(path string) (unlock func(), err error) {
	unlock, err = provlink.Lock(path)
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	return unlock, nil
}

// Link is how this process reaches the broker of its configuration: made once per process
// (NewLink, which does nothing yet), it starts the broker at its first need.
type Link struct {
	getenv func(string) string
	self   string

	once  sync.Once
	where Where
	err   error // the broker cannot be reached: every start fails with it
}

// NewLink returns the link of a process whose environment getenv reads and whose binary is self
// (the broker is this binary in another mode).
func NewLink(getenv func(string) string, self string) *Link {
	return &Link{getenv: getenv, self: self}
}

// Where says which socket this process reaches (--check).
func (l *Link) Where() (Where, error) {
	w, err := whereFrom(l.getenv)
	return w, err
}

// reach finds where this configuration's broker listens, once per process.
func (l *Link) reach() error {
	l.once.Do(func() {
		l.where, l.err = whereFrom(l.getenv)
		if l.err == nil && len(l.where.Socket) > provlink.MaxSocketPath {
			l.err = fmt.Errorf("the socket path %s does not fit a unix socket address (%d bytes at most)", l.where.Socket, provlink.MaxSocketPath)
		}
	})
	return l.err // a broker not yet running is started by open, whose dial finds none
}

// Start has the broker start (or reuse) the upstream of shared entry cfg for share key key.
// The error is a *providers.Failure: ErrUnavailable (the broker cannot be reached, or refused
// the request), ErrDown (the upstream is down: its message says why), or the upstream's own
// failure at its start.
func (l *Link) Start(ctx context.Context, cfg *policy.Provider, key string) (providers.Client, error) {
	if err := l.reach(); err != nil {
		return nil, unavailable(err)
	}
	c, rep, err := l.open(ctx, cfg, key)
	if err != nil {
		return nil, err
	}
	if rep.Err != nil {
		c.Close()
		return nil, failure(rep.Err)
	}
	c.SetServer(rep.Server)
	return c, nil
}

// open sends hello and start in one write and reads both answers: one round trip. An older
// broker is asked to drain and a new one started in its place, once.
func (l *Link) open(ctx context.Context, cfg *policy.Provider, key string) (*provlink.Conn, provlink.Response, error) {
	for try := 0; ; try++ {
		c, err := provlink.Dial(l.where.Socket, lost)
		if err != nil && try == 0 && (errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)) {
			// The broker this process reached has gone (killed, stopped, idle): a new one.
			if err = ensureRunning(l.where, l.self, l.getenv, false); err == nil {
				continue
			}
		}
		if err != nil {
			return nil, provlink.Response{}, unavailable(err)
		}
		err = c.Send(hello(false), provlink.Request{Op: provlink.OpStart, Provider: cfg.ID, ShareKey: key, Launch: cfg.LaunchKeyNow()})
		if err != nil {
			c.Close()
			return nil, provlink.Response{}, unavailable(err)
		}
		deadline := time.Now().Add(providers.Timeout(cfg) + provlink.Grace)
		h, err := c.Receive(ctx, deadline)
		if err != nil || h.Broker == nil {
			c.Close()
			return nil, provlink.Response{}, unavailable(fmt.Errorf("no hello: %v", err))
		}
		switch {
		case h.Broker.Protocol > protocol:
			c.Close()
			return nil, provlink.Response{}, unavailable(fmt.Errorf("the broker (pid %d) speaks protocol %d, newer than this spear-shell's %d", h.Broker.Pid, h.Broker.Protocol, protocol))
		case h.Broker.Protocol < protocol && try == 0:
			c.Close()
			if err := askDrain(l.where, false); err != nil {
				return nil, provlink.Response{}, unavailable(err)
			}
			if err := ensureRunning(l.where, l.self, l.getenv, false); err != nil {
				return nil, provlink.Response{}, unavailable(err)
			}
			continue
		case h.Broker.Protocol < protocol:
			c.Close()
			return nil, provlink.Response{}, unavailable(fmt.Errorf("the broker (pid %d) speaks protocol %d and did not hand over", h.Broker.Pid, h.Broker.Protocol))
		}
		rep, err := c.Receive(ctx, deadline)
		if err != nil {
			c.Close()
			if ctx.Err() != nil {
				return nil, provlink.Response{}, ctx.Err()
			}
			return nil, provlink.Response{}, unavailable(err)
		}
		return c, rep, nil
	}
}

func hello(foreground bool) provlink.Request {
	return provlink.Request{Op: provlink.OpHello, Protocol: protocol, Foreground: foreground}
}

// unavailable is the broker out of reach, as the answer records it.
func unavailable(err error) error {
	return &providers.Failure{Msg: "the broker cannot be reached: " + err.Error(), Stage: mcpstdio.StageStart, Is: []error{ErrUnavailable}}
}

// failure reads the broker's answer to a start as the error a caller judges.
func failure(w *provlink.WireError) error {
	switch {
	case w.Keeper:
		return &providers.Failure{Msg: w.Msg, Stage: mcpstdio.StageStart, Is: []error{ErrRefused}}
	case w.Down:
		return &providers.Failure{Msg: w.Msg, Stage: mcpstdio.StageStart, Is: []error{ErrDown}}
	}
	return w.Err()
}

// lost is the broker's connection failing under a request.
func lost(stage string, err error) error {
	return &providers.Failure{Msg: stage + ": the broker went away: " + err.Error(), Stage: stage, Is: []error{ErrLost}}
}

// IsDown reports whether err says a shared upstream is down or out of reach, and the reason a
// turn is told.
func IsDown(err error) (string, bool) {
	var f *providers.Failure
	if errors.As(err, &f) && (errors.Is(err, ErrDown) || errors.Is(err, ErrUnavailable) || errors.Is(err, ErrRefused)) {
		return f.Msg, true
	}
	return "", false
}

// ensureRunning makes sure a broker listens on w's socket, starting one (on demand, or in this
// process for foreground) when none does. A socket nobody listens on is a broker that died: it
// is removed and a new broker started.
func ensureRunning(w Where, self string, getenv func(string) string, foreground bool) error {
	if probe(w.Socket) == nil {
		return nil
	}
	unlock, err := lockFile(w.Lock)
	if err != nil {
		return err
	}
	defer unlock()
	switch err := probe(w.Socket); {
	case err == nil:
		return nil // another caller started it meanwhile
	case errors.Is(err, syscall.ECONNREFUSED):
		if fi, lerr := os.Lstat(w.Socket); lerr == nil && fi.Mode().Type() == fs.ModeSocket {
			os.Remove(w.Socket)
		} else {
			return fmt.Errorf("%s is not a socket", w.Socket)
		}
	case !errors.Is(err, syscall.ENOENT):
		return err
	}
	return launch(w, self, getenv)
}

// probe connects and hangs up: is a broker listening?
func probe(path string) error { return provlink.Probe(path) }

// listen binds w's socket 0600.
func listen(w Where) (*net.UnixListener, error) { return provlink.Listen(w.Socket) }

// launch binds the socket and starts an on-demand broker on it: this binary in broker mode, in
// a session of its own, with /dev/null as stdin, stdout and stderr, the socket as its only other
// descriptor, and only the environment a broker reads (the same whoever starts it).
func launch(w Where, self string, getenv func(string) string) error {
	if self == "" {
		return errors.New("no spear-shell binary to run the broker with")
	}
	ln, err := listen(w)
	if err != nil {
		return err
	}
	defer ln.Close()
	env := []string{"SPEAR_HOME=" + w.Home, "SPEAR_CAPABILITIES_FILE=" + w.Caps}
	for _, k := range Env {
		if v := getenv(k); v != "" && k != "SPEAR_HOME" && k != "SPEAR_CAPABILITIES_FILE" {
			env = append(env, k+"="+v)
		}
	}
	return provlink.Spawn(ln, w.Socket, []string{self, Flag}, "/", env)
}

// ask sends one request after hello and returns the hello's and the request's answers; the
// connection is left to the caller (nil when no broker listens).
func ask(w Where, req provlink.Request, foreground bool) (*provlink.Conn, *provlink.BrokerStatus, provlink.Response, error) {
	c, err := provlink.Dial(w.Socket, lost)
	if err != nil {
		return nil, nil, provlink.Response{}, err
	}
	if err := c.Send(hello(foreground), req); err != nil {
		c.Close()
		return nil, nil, provlink.Response{}, err
	}
	deadline := time.Now().Add(10 * time.Second)
	h, err := c.Receive(context.Background(), deadline)
	if err != nil || h.Broker == nil {
		c.Close()
		return nil, nil, provlink.Response{}, fmt.Errorf("no hello: %v", err)
	}
	if req.Op == provlink.OpStop {
		return c, h.Broker, provlink.Response{}, nil
	}
	rep, err := c.Receive(context.Background(), deadline)
	return c, h.Broker, rep, err
}

// askDrain asks the broker on w's socket to hand over, and waits until its socket is gone (or
// another broker's is there: a caller may start one as soon as the old one lets go).
func askDrain(w Where, foreground bool) error {
	before, _ := os.Lstat(w.Socket)
	c, _, rep, err := ask(w, provlink.Request{Op: provlink.OpDrain}, foreground)
	if c != nil {
		defer c.Close()
	}
	if err != nil {
		return fmt.Errorf("drain: %w", err)
	}
	if rep.Err != nil {
		return errors.New(rep.Err.Msg)
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if now, err := os.Lstat(w.Socket); err != nil || before == nil || !os.SameFile(before, now) {
			return nil
		}
	}
	return errors.New("drain: the broker still listens")
}

// Status is what --check says of the broker: the socket this process reaches and, when a broker
// runs there, its state and its upstreams.
func Status(getenv func(string) string) (Where, *provlink.BrokerStatus, error) {
	w, err := whereFrom(getenv)
	if err != nil {
		return w, nil, err
	}
	c, _, rep, err := ask(w, provlink.Request{Op: provlink.OpStatus}, false)
	if c != nil {
		c.Close()
	}
	if err != nil {
		return w, nil, nil // none runs
	}
	if rep.Err != nil {
		return w, nil, errors.New(rep.Err.Msg)
	}
	return w, rep.Broker, nil
}

// Stop is --broker-stop: it ends the broker of this configuration and returns once it and its
// upstreams are gone (0), or when none runs (0); 1 when it could not be told.
func Stop(getenv func(string) string, stderr *os.File) int {
	w, err := whereFrom(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "spear-shell: --broker-stop: %v\n", err)
		return 1
	}
	c, st, _, err := ask(w, provlink.Request{Op: provlink.OpStop, Reason: reasonStopped}, false)
	if err != nil {
		if probe(w.Socket) != nil {
			return 0 // none runs
		}
		fmt.Fprintf(stderr, "spear-shell: --broker-stop: %v\n", err)
		return 1
	}
	c.DrainUntil(time.Now().Add(10 * time.Second)) // the connection closes once everything is stopped
	c.Close()
	// broker_ended is recorded under the lock: once it is free, the broker is done.
	if unlock, err := lockFile(w.Lock); err == nil {
		unlock()
	}
	waitGone(st.Pid, 5*time.Second)
	return 0
}

// waitGone waits until process pid has exited (or is a zombie) or d passes.
func waitGone(pid int, d time.Duration) {
	if pid == os.Getpid() {
		return // a broker run by this process (tests): it has ended when its lock is free
	}
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if st, err := readStat(pid); err != nil || st.State == 'Z' {
			return
		}
	}
}

// Release is --broker-release ID: it clears the flapping hold of entry id (0), 1 when none
// runs or id is not held down.
func Release(getenv func(string) string, id string, stdout, stderr *os.File) int {
	w, err := whereFrom(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "spear-shell: --broker-release: %v\n", err)
		return 1
	}
	c, _, rep, err := ask(w, provlink.Request{Op: provlink.OpRelease, Provider: id}, false)
	if c != nil {
		c.Close()
	}
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "spear-shell: --broker-release: no broker runs for this configuration (%s)\n", w.Socket)
		return 1
	case rep.Err != nil:
		fmt.Fprintf(stderr, "spear-shell: --broker-release: %s\n", rep.Err.Msg)
		return 1
	}
	fmt.Fprintf(stdout, "provider %s released: its server starts again\n", id)
	return 0
}

// RunForeground is --broker: the broker in this process, for a service manager. It takes over
// from an on-demand broker (asked to drain), and exits 1 when another foreground broker runs.
func RunForeground(stderr *os.File) int {
	w, err := whereFrom(os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "spear-shell: --broker: %v\n", err)
		return 1
	}
	if len(w.Socket) > provlink.MaxSocketPath {
		fmt.Fprintf(stderr, "spear-shell: --broker: the socket path %s is too long for a unix socket\n", w.Socket)
		return 1
	}
	unlock, err := lockFile(w.Lock)
	if err != nil {
		fmt.Fprintf(stderr, "spear-shell: --broker: %v\n", err)
		return 1
	}
	c, st, _, err := ask(w, provlink.Request{Op: provlink.OpStatus}, true)
	if c != nil {
		c.Close()
	}
	if err == nil && st.Foreground {
		unlock()
		fmt.Fprintf(stderr, "spear-shell: --broker: another foreground broker runs (pid %d) on %s\n", st.Pid, w.Socket)
		return 1
	}
	if err == nil {
		if err := askDrain(w, true); err != nil {
			unlock()
			fmt.Fprintf(stderr, "spear-shell: --broker: %v\n", err)
			return 1
		}
	} else if fi, lerr := os.Lstat(w.Socket); lerr == nil && fi.Mode().Type() == fs.ModeSocket {
		os.Remove(w.Socket) // stale
	}
	ln, err := listen(w)
	unlock()
	if err != nil {
		fmt.Fprintf(stderr, "spear-shell: --broker: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "spear-shell: broker (pid %d) listening on %s\n", os.Getpid(), w.Socket)
	runtime.GOMAXPROCS(1) // as an on-demand broker (Serve)
	return run(w, ln, true, true)
}

// LogUnavailable records broker_unavailable in the turn's trail.
func LogUnavailable(t *providers.Turn, id string, err error) {
	_ = t.Log(audit.Event{Name: audit.EventBrokerUnavailable, Provider: id, Reason: err.Error()})
}
