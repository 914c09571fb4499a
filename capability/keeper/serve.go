package keeper

import (
	"net"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/spear-shell/spear-shell/audit"
	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/capability/provlink"
	"github.com/spear-shell/spear-shell/mcpstdio"
)

// Reasons a keeper ends.
const (
	reasonIdle    = "idle"
	reasonEndTurn = "end-turn"
	reasonGone    = "socket removed"
)

// server is the keeper: it runs one turn's providers for the turn's -c processes (SPEC 12).
type server struct {
	t    *providers.Turn
	ln   *net.UnixListener
	path string
	sock os.FileInfo // the socket at path when the keeper began: ours
	keep time.Duration

	mu     sync.Mutex
	provs  map[string]*kept
	conns  map[*net.UnixConn]bool
	active int       // requests being served
	last   time.Time // when the last request ended
	ended  bool
	done   chan string // the reason the keeper ends, once
}

// kept is one provider the keeper runs.
type kept struct {
	mu      sync.Mutex // one start or listing at a time
	client  *mcpstdio.Client
	listing *provlink.Listing // the last listing, given again until the provider announces a change or it is providers.RelistAfter old
}

// Serve runs this process as the keeper of the turn s names, on the listening socket it
// was given (descriptor 3), until keep_providers seconds pass without a request or
// spear-shell --end-turn stops it; then it stops every provider and exits. It returns the exit
// status.
func Serve(s providers.Settings) int {
	// One P: the keeper only passes requests on and waits, and each goroutine handoff of a call
	// (the connection's reader, the call, the provider's reader) would otherwise wake another
	// thread on the other CPU, which costs more than the handoff (docs/bench.md, face-invoke).
	runtime.GOMAXPROCS(1)
	ln := provlink.Inherited(listenFd, "keeper socket")
	if ln == nil {
		return 1
	}
	return serve(s, ln, true)
}

// serve serves the turn s names on ln until the keeper ends; signals: SIGTERM, SIGHUP
// and SIGINT end it too (a process of its own; tests run it in theirs without).
func serve(s providers.Settings, ln *net.UnixListener, signals bool) int {
	ln.SetUnlinkOnClose(false)
	s.Session, s.Keeper = false, true
	t := providers.Load(s, nil)
	path := ""
	var sock os.FileInfo
	if t.State != nil {
		path = socketPath(t.State.Dir())
		sock, _ = os.Lstat(path)
	}
	if t.Manifest == nil || t.Audit == nil || t.State != nil && len(t.Offered) == 0 || path == "" || t.None == providers.TurnEnded {
		// Nothing to serve: clients find the socket gone and start their providers themselves.
		k := &server{t: t, ln: ln, path: path, sock: sock}
		k.unlink()
		return 1
	}
	k := &server{t: t, ln: ln, path: path, sock: sock, keep: t.Manifest.KeepProviders, provs: map[string]*kept{},
		conns: map[*net.UnixConn]bool{}, last: time.Now(), done: make(chan string, 1)}
	_ = t.Log(audit.Event{Name: audit.EventKeeperStarted, Fields: map[string]any{
		"pid": os.Getpid(), "keep_providers": int(k.keep / time.Second)}})
	k.serve(signals)
	return 0
}

// serve accepts connections until the keeper ends, then stops everything and returns once
// every goroutine it started has.
func (k *server) serve(signals bool) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(stop)
	wg.Go(func() { k.idleWatch(stop) })
	if signals {
		defer provlink.EndOnSignal(&wg, stop, k.end)()
	}
	wg.Go(func() { // until finish closes the listener
		provlink.Accept(k.ln, &wg, func(conn *net.UnixConn) func() {
			k.mu.Lock()
			defer k.mu.Unlock()
			if k.ended {
				return nil
			}
			k.conns[conn] = true
			return func() { k.serveConn(conn) }
		})
	})
	k.finish(<-k.done)
}

// socketCheck is how often the keeper looks for its socket: one whose socket was removed (its
// state directory deleted) can be reached by nobody and ends instead of waiting out keep.
const socketCheck = 2 * time.Second

// idleWatch ends the keeper once keep passes with no request in flight and none since, or
// when its socket is no longer there.
func (k *server) idleWatch(stop <-chan struct{}) {
	for {
		if !k.ownsSocket() {
			k.end(reasonGone)
			return
		}
		k.mu.Lock()
		wait := k.keep - time.Since(k.last)
		if k.active > 0 {
			wait = k.keep
		}
		k.mu.Unlock()
		if wait <= 0 {
			k.end(reasonIdle)
			return
		}
		t := time.NewTimer(min(wait, socketCheck))
		select {
		case <-t.C:
		case <-stop:
			t.Stop()
			return
		}
	}
}

// end asks the keeper to end, once.
func (k *server) end(reason string) {
	select {
	case k.done <- reason:
	default:
	}
}

// finish ends the keeper: under the turn's keeper lock (so that no answer starts a new keeper
// meanwhile) the socket goes, then every connection, then every provider (SPEC 6's shutdown,
// in parallel, waited for), and keeper_ended is recorded. A new keeper can start, and
// --end-turn record turn_ended, once the lock is released.
func (k *server) finish(reason string) {
	unlock, err := lockKeeper(k.t.State.Dir())
	if err == nil {
		defer unlock()
	}
	k.mu.Lock()
	k.ended = true
	conns := k.conns
	k.conns = map[*net.UnixConn]bool{}
	provs := k.provs
	k.provs = map[string]*kept{}
	k.mu.Unlock()
	k.unlink()
	for conn := range conns {
		conn.Close()
	}
	var wg sync.WaitGroup
	for id, kp := range provs {
		kp.mu.Lock()
		c := kp.client
		kp.client = nil
		kp.mu.Unlock()
		if c == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Close(); err != nil {
				_ = k.t.Log(audit.Event{Name: audit.EventProviderFailed, Provider: id, Stage: "stop",
					Reason: err.Error(), StderrTail: c.StderrTail()})
			}
		}()
	}
	wg.Wait()
	_ = k.t.Log(audit.Event{Name: audit.EventKeeperEnded, Reason: reason})
}

// stopFaulty stops a provider that failed and returns its whole stderr tail: a faulty
// provider gets no long grace (mcpstdio.FaultWait), and its last words are what the answering
// process records (provider_failed).
func (k *server) stopFaulty(c *mcpstdio.Client) string {
	c.Close()
	return c.StderrTail()
}

// ownsSocket reports whether the socket at the turn's path is still the one the keeper was
// given (not removed, nor replaced).
func (k *server) ownsSocket() bool {
	now, err := os.Lstat(k.path)
	return err == nil && k.sock != nil && os.SameFile(k.sock, now)
}

// unlink removes the socket, if it is still ours, and stops listening.
func (k *server) unlink() {
	if k.path != "" && k.ownsSocket() {
		os.Remove(k.path)
	}
	k.ln.Close()
}
