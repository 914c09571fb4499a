package broker

import (
	"net"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/spear-shell/spear-shell/audit"
	"github.com/spear-shell/spear-shell/capability/provlink"
	"github.com/spear-shell/spear-shell/policy"
	"github.com/spear-shell/spear-shell/policy/paths"
)

// server is the broker.
type server struct {
	where      Where
	cfg        *config
	settings   policy.Broker // as read at the broker's start (SPEC 14: broker.* apply from the next start)
	home       string        // the user's home, every upstream's HOME
	foreground bool
	ln         *net.UnixListener
	sock       os.FileInfo // the socket at where.Socket when the broker began: ours (nil once removed; b.mu)
	spawner    *spawner
	procs      *procFile
	wg         sync.WaitGroup // every goroutine the broker starts
	quit       chan struct{}  // closed when the broker ends

	mu       sync.Mutex
	slots    map[string]*upstream // current upstream by entry and share key
	retired  []*upstream          // let go, stopping once their calls end
	conns    map[*net.UnixConn]*connState
	active   int // calls and starts in flight
	last     time.Time
	ended    bool
	draining bool
	done     chan string // the reason the broker ends, once
}

// connState is one caller's connection: busy while a request of it is served.
type connState struct{ busy bool }

// Env names what a broker reads of its environment; an on-demand broker gets these alone.
var Env = []string{"SPEAR_HOME", "SPEAR_CAPABILITIES_FILE", "SPEAR_AUDIT_FILE", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "HOME"}

// whereFrom locates the broker of the configuration getenv names.
func whereFrom(getenv func(string) string) (Where, error) {
	parent, err := paths.EnsureStateParent(getenv)
	if err != nil {
		return Where{}, err
	}
	home := policy.DefaultHome(getenv)
	return Locate(parent, home, getenv("SPEAR_CAPABILITIES_FILE")), nil
}

// Serve runs this process as an on-demand broker on the listening socket it was given
// (descriptor 3), until it idles out, is stopped or drained, or a signal ends it; it returns
// the exit status.
func Serve() int {
	runtime.GOMAXPROCS(1) // a relay: a handoff to another thread costs more than it saves (the keeper's reason)
	ln := provlink.Inherited(listenFd, "broker socket")
	if ln == nil {
		return 1
	}
	w, err := whereFrom(os.Getenv)
	if err != nil {
		ln.Close()
		return 1
	}
	return run(w, ln, false, true)
}

// run serves on ln until the broker ends; signals: SIGTERM, SIGHUP and SIGINT end it too.
func run(w Where, ln *net.UnixListener, foreground, signals bool) int {
	ln.SetUnlinkOnClose(false)
	b := newServer(w, ln, foreground)
	reapOrphans(w)
	b.log(audit.Event{Name: audit.EventBrokerStarted, Fields: map[string]any{
		"pid": os.Getpid(), "foreground": foreground, "idle_s": b.settings.Idle.Seconds(), "socket": w.Socket}})
	b.serve(signals)
	return 0
}

func newServer(w Where, ln *net.UnixListener, foreground bool) *server {
	cfg := newConfig(w, os.Getenv("SPEAR_AUDIT_FILE"))
	reg, _, _ := cfg.load()
	sock, _ := os.Lstat(w.Socket)
	return &server{where: w, cfg: cfg, settings: reg.Broker, home: userHome(), foreground: foreground, ln: ln, sock: sock,
		spawner: newSpawner(), procs: newProcFile(w), quit: make(chan struct{}),
		slots: map[string]*upstream{}, conns: map[*net.UnixConn]*connState{}, last: time.Now(), done: make(chan string, 1)}
}

// log writes one of the broker's records to broker.audit, redacted with the configuration's
// secrets as they are now. A record that cannot be written is lost: the broker answers no turn.
func (b *server) log(ev audit.Event) {
	_, red, _ := b.cfg.load()
	l, err := audit.OpenBroker(b.settings.Audit, red)
	if err != nil {
		return
	}
	_ = l.Log(ev)
}

// serve accepts connections until the broker ends, then stops everything and returns once every
// goroutine it started has.
func (b *server) serve(signals bool) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { b.watch(stop) })
	if signals {
		defer provlink.EndOnSignal(&wg, stop, b.end)()
	}
	wg.Go(func() { // until drain or finish closes the listener
		provlink.Accept(b.ln, &wg, func(conn *net.UnixConn) func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			if b.ended {
				return nil
			}
			cs := &connState{}
			b.conns[conn] = cs
			return func() { b.serveConn(conn, cs) }
		})
	})
	b.finish(<-b.done)
	close(stop)
	wg.Wait()
	b.wg.Wait()
	b.spawner.close()
}

// watchEvery is how often the broker looks at its socket, its idle time and the configuration
// (an entry removed, disabled, unshared or given other launch keys lets its upstream go).
const watchEvery = time.Second

func (b *server) watch(stop <-chan struct{}) {
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-stop:
			return
		}
		b.mu.Lock()
		draining := b.draining
		idle := len(b.conns) == 0 && b.active == 0
		since := time.Since(b.last)
		b.mu.Unlock()
		switch {
		case draining:
			if idle {
				b.end(reasonDrained)
			}
			continue
		case !b.ownsSocket():
			b.end(reasonGone)
			continue
		case !b.foreground && idle && since >= b.settings.Idle:
			b.end(reasonIdle)
			continue
		}
		b.retireChanged()
	}
}

// retireChanged lets go of every upstream whose entry the configuration no longer holds as it
// was started, and forgets retired ones that have stopped.
func (b *server) retireChanged() {
	b.mu.Lock()
	var gone []*upstream
	for k, u := range b.slots {
		if !b.cfg.current(u.id, u.key, u.launch) {
			delete(b.slots, k)
			gone = append(gone, u)
		}
	}
	kept := b.retired[:0]
	for _, u := range b.retired {
		if !u.gone() {
			kept = append(kept, u)
		}
	}
	b.retired = append(kept, gone...)
	b.mu.Unlock()
	for _, u := range gone {
		u.retire()
	}
}

// slot returns the upstream of entry id and share key key for launch keys launch, letting go
// of one with other launch keys (its calls finish on it; new calls come here).
func (b *server) slot(id, key, launch string) *upstream {
	k := id + "\x00" + key
	b.mu.Lock()
	u := b.slots[k]
	var old *upstream
	if u != nil && u.launch != launch {
		old, u = u, nil
		b.retired = append(b.retired, old)
	}
	if u == nil {
		u = &upstream{b: b, id: id, key: key, launch: launch, state: stateNew}
		b.slots[k] = u
	}
	b.mu.Unlock()
	if old != nil {
		old.retire()
	}
	return u
}

// busy and idle bracket every request served, for the idle watch.
func (b *server) busy(cs *connState) {
	b.mu.Lock()
	b.active++
	cs.busy = true
	b.mu.Unlock()
}

func (b *server) idle(cs *connState) {
	b.mu.Lock()
	b.active--
	cs.busy = false
	b.last = time.Now()
	b.mu.Unlock()
}

// end asks the broker to end, once.
func (b *server) end(reason string) {
	select {
	case b.done <- reason:
	default:
	}
}

func (b *server) ending() bool {
	select {
	case <-b.quit:
		return true
	default:
		return false
	}
}

// drain hands over: the socket goes at once (a new broker can start on it), idle callers are let
// go, and the broker ends when its last call ends.
func (b *server) drain() {
	b.mu.Lock()
	b.draining = true
	var idle []*net.UnixConn
	for c, cs := range b.conns {
		if !cs.busy {
			idle = append(idle, c)
		}
	}
	b.mu.Unlock()
	b.unlink()
	for _, c := range idle {
		c.CloseRead()
	}
}

// finish ends the broker: under its lock (no caller starts a new broker meanwhile) the socket
// goes, every upstream is stopped as SPEC 6 says (calls in flight fail: unavailable), callers are
// let go once answered, and broker_ended is recorded.
func (b *server) finish(reason string) {
	unlock, err := lockFile(b.where.Lock)
	if err == nil {
		defer unlock()
	}
	b.mu.Lock()
	b.ended = true
	ups := append([]*upstream{}, b.retired...)
	for _, u := range b.slots {
		ups = append(ups, u)
	}
	b.mu.Unlock()
	close(b.quit)
	b.unlink()
	var wg sync.WaitGroup
	for _, u := range ups {
		wg.Go(u.shutdown)
	}
	wg.Wait()
	// Calls in flight were answered (unavailable) as their upstream stopped; give their answers
	// a moment to be written before the callers are let go.
	for deadline := time.Now().Add(time.Second); ; time.Sleep(5 * time.Millisecond) {
		b.mu.Lock()
		active := b.active
		b.mu.Unlock()
		if active == 0 || time.Now().After(deadline) {
			break
		}
	}
	b.mu.Lock()
	for c := range b.conns {
		c.Close()
	}
	b.mu.Unlock()
	b.procs.drop()
	b.log(audit.Event{Name: audit.EventBrokerEnded, Reason: reason})
}

// ownsSocket reports whether the socket at the broker's path is still the one it began with
// (and has not removed: another broker's may then have the same inode number).
func (b *server) ownsSocket() bool {
	b.mu.Lock()
	sock := b.sock
	b.mu.Unlock()
	now, err := os.Lstat(b.where.Socket)
	return err == nil && sock != nil && os.SameFile(sock, now)
}

// unlink removes the socket, if it is still ours, once, and stops listening.
func (b *server) unlink() {
	if b.ownsSocket() {
		os.Remove(b.where.Socket)
	}
	b.mu.Lock()
	b.sock = nil
	b.mu.Unlock()
	b.ln.Close()
}
