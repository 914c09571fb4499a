package capability

// The keeper's side of a connection (keeper_proto.go): one client's hello, then the provider it
// starts, lists and calls.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"strconv"
	"time"

	"github.com/spear-shell/spear-shell/audit"
	"github.com/spear-shell/spear-shell/mcpstdio"
)

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
