package keeper

// The keeper's side of a connection (proto.go): one client's hello, then the provider it
// starts, lists and calls.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/spear-shell/spear-shell/audit"
	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/mcpstdio"
	"github.com/spear-shell/spear-shell/policy"
)

// cfg is the configuration of offered provider id (start admits no other).
func (k *server) cfg(id string) *policy.Provider {
	p, _ := k.t.Provider(id)
	return p.Config
}

// busy and idle bracket every request, for the idle timer.
func (k *server) busy() {
	k.mu.Lock()
	k.active++
	k.mu.Unlock()
}

func (k *server) idle() {
	k.mu.Lock()
	k.active--
	k.last = time.Now()
	k.mu.Unlock()
}

// serveConn serves one client connection: hello, start, then list and call requests.
func (k *server) serveConn(conn *net.UnixConn) {
	defer func() {
		k.mu.Lock()
		delete(k.conns, conn)
		k.mu.Unlock()
		conn.Close()
	}()
	if samePeer(conn) != nil {
		return // another user: not a word
	}
	reqs := make(chan request)
	quit := make(chan struct{})
	read := make(chan struct{})
	var calls inFlight
	go func() {
		defer close(read)
		readRequests(conn, reqs, quit, &calls)
	}()
	defer func() {
		close(quit)
		conn.Close()
		<-read
	}()
	w := bufio.NewWriter(conn)
	answer := func(r response) bool {
		line, err := encodeResponse(redacted(k.t.Redactor, r))
		if err == nil {
			w.Write(line)
			err = w.Flush()
		}
		return err == nil
	}
	refuse := func(msg string) { answer(response{Err: &wireError{Msg: msg, Keeper: true}}) }

	hello, ok := <-reqs
	if !ok {
		return
	}
	switch {
	case hello.Op != opHello:
		refuse("hello first")
		return
	case hello.Protocol != protocol:
		refuse("protocol " + strconv.Itoa(hello.Protocol) + ", not " + strconv.Itoa(protocol))
		return
	case hello.Turn != k.t.Manifest.Turn || hello.Key != k.t.Key && !hello.Ending:
		refuse("this keeper serves another turn, manifest or configuration")
		return
	}
	if !answer(response{}) {
		return
	}
	var id string
	var kp *kept
	for req := range reqs {
		k.busy()
		var r response
		switch {
		case hello.Ending && req.Op != opStop:
			r = response{Err: &wireError{Msg: "only stop follows the hello of --end-turn", Keeper: true}}
		case req.Op == opStart && kp == nil:
			id = req.Provider
			kp, r = k.start(id)
		case req.Op == opList && kp != nil:
			r = k.list(id, kp)
		case req.Op == opTools && kp != nil:
			r = k.tools(id, kp, req.Names)
		case req.Op == opCall && kp != nil:
			r = k.call(id, kp, req)
		case req.Op == opStop:
			// The reply is the connection closing, once the providers are stopped and
			// keeper_ended recorded; the stopper then waits for the keeper lock (finish).
			k.idle()
			k.end(reasonEndTurn)
			for range reqs {
			}
			return
		case req.Op == opCancel:
			k.idle()
			continue // nothing in flight
		default:
			r = response{Err: &wireError{Msg: "unexpected request " + strconv.Quote(req.Op), Keeper: true}}
		}
		if req.Op == opCall {
			calls.end() // before the answer: the client's next request is never taken for a cancel
		}
		k.idle()
		if !answer(r) || r.Err != nil && r.Err.Keeper {
			return
		}
	}
}

// inFlight is the call a connection has in flight, if any: its reader cancels it. The call
// runs on the connection's own goroutine, whose stack has grown once, where a goroutine per
// call would grow a new one each time (docs/bench.md, face-invoke).
type inFlight struct {
	mu     sync.Mutex
	cancel context.CancelFunc // nil: no call in flight
}

// begin is a call read: from now on, anything the client sends, or its going away, cancels it.
func (f *inFlight) begin() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	f.mu.Lock()
	f.cancel = cancel
	f.mu.Unlock()
	return ctx
}

// end is the call answered.
func (f *inFlight) end() {
	f.mu.Lock()
	cancel := f.cancel
	f.cancel = nil
	f.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// interrupt cancels the call in flight and reports whether there was one.
func (f *inFlight) interrupt() bool {
	f.mu.Lock()
	cancel := f.cancel
	f.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return cancel != nil
}

// readRequests hands the connection's requests over one by one until it closes, a line is not
// a request, or quit. While a call is in flight, whatever comes (cancel: nothing else may come
// mid-call), or the connection's end, cancels it (notifications/cancelled) and is not handed on.
func readRequests(conn *net.UnixConn, reqs chan<- request, quit <-chan struct{}, calls *inFlight) {
	defer close(reqs)
	defer calls.interrupt()
	r := bufio.NewReaderSize(conn, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		var req request
		if json.Unmarshal(line, &req) != nil {
			return
		}
		if calls.interrupt() {
			continue
		}
		if req.Op == opCall {
			req.ctx = calls.begin()
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
func (k *server) start(id string) (*kept, response) {
	p, offered := k.t.Provider(id)
	if !offered {
		return nil, response{Err: &wireError{Msg: "provider " + strconv.Quote(id) + " is not offered to this turn", Keeper: true}}
	}
	if _, down, err := k.t.State.Read(providers.DownFact(id)); err != nil || down {
		return nil, response{Err: &wireError{Msg: "provider " + strconv.Quote(id) + " is out of this turn", Keeper: true}}
	}
	k.mu.Lock()
	kp := k.provs[id]
	if kp == nil && !k.ended {
		kp = &kept{}
		k.provs[id] = kp
	}
	k.mu.Unlock()
	if kp == nil {
		return nil, response{Err: &wireError{Msg: "the keeper is ending", Keeper: true}}
	}
	kp.mu.Lock()
	defer kp.mu.Unlock()
	if c := kp.client; c != nil && c.Exited() {
		// It ended between requests, which no answer saw: recorded here, and started again;
		// the answering process lists it again and checks its pins as for any start.
		kp.client, kp.tools, kp.names = nil, nil, nil
		_ = k.t.Log(audit.Event{Name: audit.EventProviderFailed, Provider: id, Stage: "idle",
			Reason: "it exited while the keeper held it", StderrTail: k.stopFaulty(c)})
	}
	if kp.client == nil {
		// Judged again here, where it is started: the program may have changed since the
		// answering process judged it.
		if err := k.t.TrustProvider(p.Config); err != nil {
			w := toWire(err, "")
			w.Stage = "trust"
			return nil, response{Err: w}
		}
		c, err := k.t.Launch(context.Background(), p.Config)
		if err != nil {
			return nil, response{Err: toWire(err, "")}
		}
		kp.client, kp.tools, kp.names = c, nil, nil
	}
	return kp, response{}
}

// list answers the provider's tools, listed again when it announced a change or the last
// listing is providers.RelistAfter old (as a session lists its own providers).
func (k *server) list(id string, kp *kept) response {
	kp.mu.Lock()
	defer kp.mu.Unlock()
	if r := k.relist(id, kp); r.Err != nil {
		return r
	}
	return response{Tools: kp.tools}
}

// MaxNames bounds the names one tools request may ask (a describe of many ids asks them all);
// an answer that needs more lists the provider whole.
const MaxNames = 4096

// tools answers, for each name asked, how many of the last listing's tools carry it and the
// first of them, with the listing's hash and age; the listing is refreshed exactly as list
// would refresh it. Nothing is judged here: what the provider listed is reported as listed.
func (k *server) tools(id string, kp *kept, names []string) response {
	if len(names) == 0 || len(names) > MaxNames {
		return response{Err: &wireError{Msg: "tools: between 1 and " + strconv.Itoa(MaxNames) + " names", Keeper: true}}
	}
	kp.mu.Lock()
	defer kp.mu.Unlock()
	if r := k.relist(id, kp); r.Err != nil {
		return r
	}
	defs := make([]wireDef, len(names))
	for i, n := range names {
		defs[i] = kp.def(n)
	}
	return response{Defs: defs, Hash: kp.hash, AgeMS: time.Since(kp.listedAt).Milliseconds()}
}

// def is name as the last listing holds it; kp.mu is held.
func (kp *kept) def(name string) wireDef {
	d := wireDef{Name: name}
	if at, ok := kp.names[name]; ok {
		d.Count = at.count
		d.Tool = &kp.tools[at.first]
	}
	return d
}

// relist lists the provider again when it announced a change or its last listing is
// providers.RelistAfter old; kp.mu is held. A failure leaves the provider out, as the answering
// process will.
func (k *server) relist(id string, kp *kept) response {
	c := kp.client
	if c == nil {
		return response{Err: &wireError{Msg: mcpstdio.StageList + ": the provider was stopped", Stage: mcpstdio.StageList, Is: []string{"closed"}}}
	}
	if kp.tools != nil && !c.ToolsChanged() && time.Since(kp.listedAt) < providers.RelistAfter {
		return response{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), providers.Timeout(k.cfg(id)))
	tools, err := c.ListTools(ctx)
	cancel()
	if err != nil {
		// The answering process leaves it out of the turn: so does the keeper.
		kp.client, kp.tools, kp.names = nil, nil, nil
		return response{Err: toWire(err, k.stopFaulty(c))}
	}
	kp.tools, kp.listedAt, kp.hash = toWireTools(tools), time.Now(), providers.ListingHash(tools)
	kp.names = make(map[string]placed, len(tools))
	for i, t := range tools {
		at, seen := kp.names[t.Name]
		if !seen {
			at.first = i
		}
		at.count++
		kp.names[t.Name] = at
	}
	return response{}
}

// call forwards one tools/call; a cancel from the client, or the client going away, cancels it
// (notifications/cancelled, through req.ctx: readRequests) and the provider stays. A JSON-RPC
// error or a result over the limit leaves it too; any other failure is a transport or protocol
// fault, which leaves the provider out of the turn.
func (k *server) call(id string, kp *kept, req request) response {
	kp.mu.Lock()
	if req.Listing != "" {
		// Only on the listing the caller checked (proto.go): refreshed as tools would refresh it.
		if r := k.relist(id, kp); r.Err != nil {
			kp.mu.Unlock()
			return r
		}
		if kp.hash != req.Listing {
			r := response{Moved: true, Defs: []wireDef{kp.def(req.Name)}, Hash: kp.hash, AgeMS: time.Since(kp.listedAt).Milliseconds()}
			kp.mu.Unlock()
			return r
		}
	}
	c := kp.client
	kp.mu.Unlock()
	if c == nil {
		return response{Err: &wireError{Msg: mcpstdio.StageCall + ": the provider was stopped", Stage: mcpstdio.StageCall, Is: []string{"closed"}}}
	}
	ctx, cancel := context.WithTimeout(req.ctx, providers.Timeout(k.cfg(id)))
	defer cancel()
	res, err := c.CallTool(ctx, req.Name, req.Arguments)
	var rpc *mcpstdio.RPCError
	var tooLarge *mcpstdio.TooLargeError
	switch {
	case err == nil:
		return response{Result: res.Raw}
	case errors.As(err, &rpc), errors.As(err, &tooLarge),
		errors.Is(err, context.Canceled) && !errors.Is(err, mcpstdio.ErrClosed):
		return response{Err: toWire(err, "")}
	}
	kp.mu.Lock()
	mine := kp.client == c
	if mine {
		kp.client, kp.tools, kp.names = nil, nil, nil
	}
	kp.mu.Unlock()
	if !mine {
		return response{Err: toWire(err, c.StderrTail())} // stopped by finish
	}
	return response{Err: toWire(err, k.stopFaulty(c))}
}

// redacted is r without the values of env and env_file that the keeper started its servers
// with (SPEC 7: the process that read them redacts what it passes on). The answering process
// redacts with the values it reads itself, afresh: after an env_file is edited, only the
// keeper still knows the value its running server holds.
func redacted(red *audit.Redactor, r response) response {
	if red.Empty() {
		return r
	}
	r.Result = red.JSON(r.Result)
	if r.Err != nil {
		e := *r.Err
		e.Msg, e.Tail = red.String(e.Msg), red.String(e.Tail)
		if e.RPC != nil {
			rpc := *e.RPC
			rpc.Message = red.String(rpc.Message)
			if rpc.Data != nil {
				rpc.Data = red.JSON(rpc.Data)
			}
			e.RPC = &rpc
		}
		r.Err = &e
	}
	return r
}
