package capability

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spear-shell/spear-shell/audit"
	"github.com/spear-shell/spear-shell/mcpstdio"
)

// Reasons a keeper ends.
const (
	keeperIdle    = "idle"
	keeperEndTurn = "end-turn"
	keeperGone    = "socket removed"
)

// keeper runs one turn's providers for the turn's -c processes (SPEC 12).
type keeper struct {
	e    *turnEnv
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
	mu       sync.Mutex // one start or listing at a time
	client   *mcpstdio.Client
	tools    []wireTool // the last listing, given again until the provider announces a change or it is RelistAfter old
	listedAt time.Time
}

// ServeKeeper runs this process as the keeper of the turn s names, on the listening socket it
// was given (descriptor 3), until keep_providers seconds pass without a request or
// spear-shell --end-turn stops it; then it stops every provider and exits. It returns the exit
// status.
func ServeKeeper(s Settings) int {
	closeInherited()
	f := os.NewFile(keeperListenFd, "keeper socket")
	fl, err := net.FileListener(f)
	f.Close()
	if err != nil {
		return 1
	}
	ln, ok := fl.(*net.UnixListener)
	if !ok {
		fl.Close()
		return 1
	}
	return serveKeeper(s, ln, true)
}

// serveKeeper serves the turn s names on ln until the keeper ends; signals: SIGTERM, SIGHUP
// and SIGINT end it too (a process of its own; tests run it in theirs without).
func serveKeeper(s Settings, ln *net.UnixListener, signals bool) int {
	ln.SetUnlinkOnClose(false)
	s.Session = false
	t := NewTurn(s)
	t.mu.Lock()
	t.load()
	t.mu.Unlock()
	e := t.env
	path := ""
	var sock os.FileInfo
	if e.state != nil {
		path = keeperSocketPath(e.state.dir)
		sock, _ = os.Lstat(path)
	}
	if e.man == nil || e.log == nil || e.state != nil && len(e.order) == 0 || path == "" {
		// Nothing to serve: clients find the socket gone and start their providers themselves.
		k := &keeper{e: e, ln: ln, path: path, sock: sock}
		k.unlink()
		return 1
	}
	k := &keeper{e: e, ln: ln, path: path, sock: sock, keep: e.man.KeepProviders, provs: map[string]*kept{},
		conns: map[*net.UnixConn]bool{}, last: time.Now(), done: make(chan string, 1)}
	_ = e.logEvent(audit.Event{Name: audit.EventKeeperStarted, Fields: map[string]any{
		"pid": os.Getpid(), "keep_providers": int(k.keep / time.Second)}})
	k.serve(signals)
	return 0
}

// closeInherited closes every descriptor above the socket that this process did not open
// itself (they lack close-on-exec): whatever the harness left open in the -c process is not
// held by the keeper, nor passed to its providers.
func closeInherited() {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, ent := range ents {
		fd, err := strconv.Atoi(ent.Name())
		if err != nil || fd <= keeperListenFd {
			continue
		}
		flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
		if errno == 0 && flags&syscall.FD_CLOEXEC == 0 {
			syscall.Close(fd)
		}
	}
}

// serve accepts connections until the keeper ends, then stops everything and returns once
// every goroutine it started has.
func (k *keeper) serve(signals bool) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(stop)
	wg.Go(func() { k.idleWatch(stop) })
	if signals {
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT)
		defer signal.Stop(sigs)
		wg.Go(func() {
			select {
			case sig := <-sigs:
				k.end("terminated by " + sig.String())
			case <-stop:
			}
		})
	}
	wg.Go(func() {
		for {
			conn, err := k.ln.AcceptUnix()
			if err != nil {
				return // closed by finish
			}
			k.mu.Lock()
			if k.ended {
				k.mu.Unlock()
				conn.Close()
				continue
			}
			k.conns[conn] = true
			k.mu.Unlock()
			wg.Go(func() { k.serveConn(conn) })
		}
	})
	k.finish(<-k.done)
}

// socketCheck is how often the keeper looks for its socket: one whose socket was removed (its
// state directory deleted) can be reached by nobody and ends instead of waiting out keep.
const socketCheck = 2 * time.Second

// idleWatch ends the keeper once keep passes with no request in flight and none since, or
// when its socket is no longer there.
func (k *keeper) idleWatch(stop <-chan struct{}) {
	for {
		if !k.ownsSocket() {
			k.end(keeperGone)
			return
		}
		k.mu.Lock()
		wait := k.keep - time.Since(k.last)
		if k.active > 0 {
			wait = k.keep
		}
		k.mu.Unlock()
		if wait <= 0 {
			k.end(keeperIdle)
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
func (k *keeper) end(reason string) {
	select {
	case k.done <- reason:
	default:
	}
}

// finish ends the keeper: under the turn's keeper lock (so that no answer starts a new keeper
// meanwhile) the socket goes, then every connection, then every provider (SPEC 6's shutdown,
// in parallel, waited for), and keeper_ended is recorded. A new keeper can start, and
// --end-turn record turn_ended, once the lock is released.
func (k *keeper) finish(reason string) {
	unlock, err := lockKeeper(k.e.state.dir)
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
				_ = k.e.logEvent(audit.Event{Name: audit.EventProviderFailed, Provider: id, Stage: "stop",
					Reason: err.Error(), StderrTail: c.StderrTail()})
			}
		}()
	}
	wg.Wait()
	_ = k.e.logEvent(audit.Event{Name: audit.EventKeeperEnded, Reason: reason})
}

// stopFaulty stops a provider that failed and returns its whole stderr tail: a faulty
// provider gets no long grace (mcpstdio.FaultWait), and its last words are what the answering
// process records (provider_failed).
func (k *keeper) stopFaulty(c *mcpstdio.Client) string {
	c.Close()
	return c.StderrTail()
}

// ownsSocket reports whether the socket at the turn's path is still the one the keeper was
// given (not removed, nor replaced).
func (k *keeper) ownsSocket() bool {
	now, err := os.Lstat(k.path)
	return err == nil && k.sock != nil && os.SameFile(k.sock, now)
}

// unlink removes the socket, if it is still ours, and stops listening.
func (k *keeper) unlink() {
	if k.path != "" && k.ownsSocket() {
		os.Remove(k.path)
	}
	k.ln.Close()
}

// busy and idle bracket every request, for the idle timer.
func (k *keeper) busy() {
	k.mu.Lock()
	k.active++
	k.mu.Unlock()
}

func (k *keeper) idle() {
	k.mu.Lock()
	k.active--
	k.last = time.Now()
	k.mu.Unlock()
}

// serveConn serves one client connection: hello, start, then list and call requests.
func (k *keeper) serveConn(conn *net.UnixConn) {
	defer func() {
		k.mu.Lock()
		delete(k.conns, conn)
		k.mu.Unlock()
		conn.Close()
	}()
	if samePeer(conn) != nil {
		return // another user: not a word
	}
	reqs := make(chan keeperRequest)
	quit := make(chan struct{})
	read := make(chan struct{})
	go func() {
		defer close(read)
		readRequests(conn, reqs, quit)
	}()
	defer func() {
		close(quit)
		conn.Close()
		<-read
	}()
	w := bufio.NewWriter(conn)
	reply := func(r keeperReply) bool {
		line, err := json.Marshal(r)
		if err == nil {
			w.Write(append(line, '\n'))
			err = w.Flush()
		}
		return err == nil
	}
	refuse := func(msg string) { reply(keeperReply{Err: &wireError{Msg: msg, Keeper: true}}) }

	hello, ok := <-reqs
	if !ok {
		return
	}
	switch {
	case hello.Op != opHello:
		refuse("hello first")
		return
	case hello.Protocol != keeperProtocol:
		refuse("protocol " + strconv.Itoa(hello.Protocol) + ", not " + strconv.Itoa(keeperProtocol))
		return
	case hello.Turn != k.e.man.Turn || hello.Key != k.e.turnKey:
		refuse("this keeper serves another turn, manifest or configuration")
		return
	}
	if !reply(keeperReply{}) {
		return
	}
	var id string
	var kp *kept
	for req := range reqs {
		k.busy()
		var r keeperReply
		switch {
		case req.Op == opStart && kp == nil:
			id = req.Provider
			kp, r = k.start(id)
		case req.Op == opList && kp != nil:
			r = k.list(id, kp)
		case req.Op == opCall && kp != nil:
			r = k.call(id, kp, req, reqs)
		case req.Op == opStop:
			// The reply is the connection closing, once the providers are stopped and
			// keeper_ended recorded; the stopper then waits for the keeper lock (finish).
			k.idle()
			k.end(keeperEndTurn)
			for range reqs {
			}
			return
		case req.Op == opCancel:
			k.idle()
			continue // nothing in flight
		default:
			r = keeperReply{Err: &wireError{Msg: "unexpected request " + strconv.Quote(req.Op), Keeper: true}}
		}
		k.idle()
		if !reply(r) || r.Err != nil && r.Err.Keeper {
			return
		}
	}
}

// readRequests hands the connection's requests over one by one until it closes, a line is not
// a request, or quit.
func readRequests(conn *net.UnixConn, reqs chan<- keeperRequest, quit <-chan struct{}) {
	defer close(reqs)
	r := bufio.NewReaderSize(conn, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		var req keeperRequest
		if json.Unmarshal(line, &req) != nil {
			return
		}
		select {
		case reqs <- req:
		case <-quit:
			return
		}
	}
}

// start starts provider id unless it runs. Only an offered provider that is not out of the
// turn is started.
func (k *keeper) start(id string) (*kept, keeperReply) {
	p := k.e.provs[id]
	if p == nil {
		return nil, keeperReply{Err: &wireError{Msg: "provider " + strconv.Quote(id) + " is not offered to this turn", Keeper: true}}
	}
	if _, down, err := k.e.state.read(downName(id)); err != nil || down {
		return nil, keeperReply{Err: &wireError{Msg: "provider " + strconv.Quote(id) + " is out of this turn", Keeper: true}}
	}
	k.mu.Lock()
	kp := k.provs[id]
	if kp == nil && !k.ended {
		kp = &kept{}
		k.provs[id] = kp
	}
	k.mu.Unlock()
	if kp == nil {
		return nil, keeperReply{Err: &wireError{Msg: "the keeper is ending", Keeper: true}}
	}
	kp.mu.Lock()
	defer kp.mu.Unlock()
	if c := kp.client; c != nil && c.Exited() {
		// It ended between requests, which no answer saw: recorded here, and started again;
		// the answering process lists it again and checks its pins as for any start.
		kp.client, kp.tools = nil, nil
		_ = k.e.logEvent(audit.Event{Name: audit.EventProviderFailed, Provider: id, Stage: "idle",
			Reason: "it exited while the keeper held it", StderrTail: k.stopFaulty(c)})
	}
	if kp.client == nil {
		// Judged again here, where it is started: the program may have changed since the
		// answering process judged it.
		if err := k.e.trustProvider(p.cfg); err != nil {
			w := toWire(err, "")
			w.Stage = "trust"
			return nil, keeperReply{Err: w}
		}
		c, err := launchProvider(context.Background(), k.e, p.cfg)
		if err != nil {
			return nil, keeperReply{Err: toWire(err, "")}
		}
		kp.client, kp.tools = c, nil
	}
	return kp, keeperReply{}
}

// list answers the provider's tools, listed again when it announced a change or the last
// listing is RelistAfter old (as a session lists its own providers).
func (k *keeper) list(id string, kp *kept) keeperReply {
	kp.mu.Lock()
	defer kp.mu.Unlock()
	c := kp.client
	if c == nil {
		return keeperReply{Err: &wireError{Msg: mcpstdio.StageList + ": the provider was stopped", Stage: mcpstdio.StageList, Is: []string{"closed"}}}
	}
	if kp.tools != nil && !c.ToolsChanged() && time.Since(kp.listedAt) < RelistAfter {
		return keeperReply{Tools: kp.tools}
	}
	ctx, cancel := context.WithTimeout(context.Background(), providerTimeout(k.e.provs[id].cfg))
	tools, err := c.ListTools(ctx)
	cancel()
	if err != nil {
		// The answering process leaves it out of the turn: so does the keeper.
		kp.client, kp.tools = nil, nil
		return keeperReply{Err: toWire(err, k.stopFaulty(c))}
	}
	kp.tools, kp.listedAt = toWireTools(tools), time.Now()
	if kp.tools == nil {
		kp.tools = []wireTool{}
	}
	return keeperReply{Tools: kp.tools}
}

// call forwards one tools/call; a cancel from the client, or the client going away, cancels it
// (notifications/cancelled) and the provider stays. A JSON-RPC error or a result over the
// limit leaves it too; any other failure is a transport or protocol fault, which leaves the
// provider out of the turn.
func (k *keeper) call(id string, kp *kept, req keeperRequest, reqs <-chan keeperRequest) keeperReply {
	kp.mu.Lock()
	c := kp.client
	kp.mu.Unlock()
	if c == nil {
		return keeperReply{Err: &wireError{Msg: mcpstdio.StageCall + ": the provider was stopped", Stage: mcpstdio.StageCall, Is: []string{"closed"}}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), providerTimeout(k.e.provs[id].cfg))
	defer cancel()
	type outcome struct {
		res *mcpstdio.CallResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := c.CallTool(ctx, req.Name, req.Arguments)
		done <- outcome{res, err}
	}()
	var o outcome
	select {
	case o = <-done:
	case <-reqs: // cancel, or the client went away (closed): nothing else may come mid-call
		cancel()
		o = <-done
	}
	var rpc *mcpstdio.RPCError
	var tooLarge *mcpstdio.TooLargeError
	switch {
	case o.err == nil:
		return keeperReply{Result: o.res.Raw}
	case errors.As(o.err, &rpc), errors.As(o.err, &tooLarge),
		errors.Is(o.err, context.Canceled) && !errors.Is(o.err, mcpstdio.ErrClosed):
		return keeperReply{Err: toWire(o.err, "")}
	}
	kp.mu.Lock()
	mine := kp.client == c
	if mine {
		kp.client, kp.tools = nil, nil
	}
	kp.mu.Unlock()
	if !mine {
		return keeperReply{Err: toWire(o.err, c.StderrTail())} // stopped by finish
	}
	return keeperReply{Err: toWire(o.err, k.stopFaulty(c))}
}

// keeperSocketPath says where a turn's keeper listens, for messages.
func keeperSocketPath(dir string) string {
	return strings.TrimSuffix(dir, "/") + "/" + keeperSocketName
}
