package keeper

// The keeper's side of a connection (proto.go): one client's hello, then the provider it
// starts, lists and calls.

import (
	"context"
	"errors"
	"net"
	"strconv"
	"time"

	"github.com/spear-shell/spear-shell/audit"
	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/capability/provlink"
	"github.com/spear-shell/spear-shell/mcpstdio"
	"github.com/spear-shell/spear-shell/policy"
)

// cfg is the configuration of offered provider id (start admits no other).
func (k *server) cfg(id string) *policy.Provider {
	p, _ := k.t.Provider(id)
	return p.Config
}

// busy and idle bracket every provlink.Request, for the idle timer.
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
	sv := provlink.Open(conn)
	if sv == nil {
		return
	}
	defer sv.Close()
	hello, reqs, calls, refuse := sv.Hello, sv.Reqs, sv.Calls, sv.Refuse
	answer := func(r provlink.Response) bool {
		if k.t.EnvFileChanged() {
			r = redacted(k.t.Redactor, r)
		}
		return sv.Answer(r)
	}
	switch {
	case hello.Protocol != protocol:
		refuse("protocol " + strconv.Itoa(hello.Protocol) + ", not " + strconv.Itoa(protocol))
		return
	case hello.Turn != k.t.Manifest.Turn || hello.Key != k.t.Key && !hello.Ending:
		refuse("this keeper serves another turn, manifest or configuration")
		return
	}
	if !answer(provlink.Response{}) {
		return
	}
	var id string
	var kp *kept
	for req := range reqs {
		k.busy()
		var r provlink.Response
		switch {
		case hello.Ending && req.Op != provlink.OpStop:
			r = provlink.Response{Err: &provlink.WireError{Msg: "only stop follows the hello of --end-turn", Keeper: true}}
		case req.Op == provlink.OpStart && kp == nil:
			id = req.Provider
			kp, r = k.start(id)
		case req.Op == provlink.OpList && kp != nil:
			r = k.list(id, kp)
		case req.Op == provlink.OpTools && kp != nil:
			r = k.tools(id, kp, req.Names)
		case req.Op == provlink.OpCall && kp != nil:
			r = k.call(id, kp, req)
		case req.Op == provlink.OpStop:
			// The reply is the connection closing, once the providers are stopped and
			// keeper_ended recorded; the stopper then waits for the keeper lock (finish).
			k.idle()
			k.end(reasonEndTurn)
			for range reqs {
			}
			return
		case req.Op == provlink.OpCancel:
			k.idle()
			continue // nothing in flight
		default:
			r = provlink.Response{Err: &provlink.WireError{Msg: "unexpected provlink.Request " + strconv.Quote(req.Op), Keeper: true}}
		}
		if req.Op == provlink.OpCall {
			calls.End() // before the answer: the client's next provlink.Request is never taken for a cancel
		}
		k.idle()
		if !answer(r) || r.Err != nil && r.Err.Keeper {
			return
		}
	}
}

// start starts provider id unless it runs. Only an offered provider that is not out of the
// turn is started.
func (k *server) start(id string) (*kept, provlink.Response) {
	p, offered := k.t.Provider(id)
	if !offered {
		return nil, provlink.Response{Err: &provlink.WireError{Msg: "provider " + strconv.Quote(id) + " is not offered to this turn", Keeper: true}}
	}
	if p.Config.Share != "" {
		// The broker's, for every face: the keeper never holds or relays a shared entry (SPEC 12, 14).
		return nil, provlink.Response{Err: &provlink.WireError{Msg: "provider " + strconv.Quote(id) + " is shared: the broker runs it", Keeper: true}}
	}
	if _, down, err := k.t.State.Read(providers.DownFact(id)); err != nil || down {
		return nil, provlink.Response{Err: &provlink.WireError{Msg: "provider " + strconv.Quote(id) + " is out of this turn", Keeper: true}}
	}
	k.mu.Lock()
	kp := k.provs[id]
	if kp == nil && !k.ended {
		kp = &kept{}
		k.provs[id] = kp
	}
	k.mu.Unlock()
	if kp == nil {
		return nil, provlink.Response{Err: &provlink.WireError{Msg: "the keeper is ending", Keeper: true}}
	}
	kp.mu.Lock()
	defer kp.mu.Unlock()
	if c := kp.client; c != nil && c.Exited() {
		// It ended between requests, which no answer saw: recorded here, and started again;
		// the answering process lists it again and checks its pins as for any start.
		kp.client, kp.listing = nil, nil
		_ = k.t.Log(audit.Event{Name: audit.EventProviderFailed, Provider: id, Stage: "idle",
			Reason: "it exited while the keeper held it", StderrTail: k.stopFaulty(c)})
	}
	if kp.client == nil {
		// Judged again here, where it is started: the program may have changed since the
		// answering process judged it.
		if err := k.t.TrustProvider(p.Config); err != nil {
			w := provlink.ToWire(err, "")
			w.Stage = "trust"
			return nil, provlink.Response{Err: w}
		}
		c, err := k.t.Launch(context.Background(), p.Config)
		if err != nil {
			return nil, provlink.Response{Err: provlink.ToWire(err, "")}
		}
		kp.client, kp.listing = c, nil
	}
	return kp, provlink.Response{}
}

// list answers the provider's tools, listed again when it announced a change or the last
// listing is providers.RelistAfter old (as a session lists its own providers).
func (k *server) list(id string, kp *kept) provlink.Response {
	kp.mu.Lock()
	defer kp.mu.Unlock()
	if r := k.relist(id, kp); r.Err != nil {
		return r
	}
	return provlink.Response{Tools: kp.listing.Tools}
}

// tools answers, for each name asked, how many of the last listing's tools carry it and the
// first of them, with the listing's hash and age; the listing is refreshed exactly as list
// would refresh it. Nothing is judged here: what the provider listed is reported as listed.
func (k *server) tools(id string, kp *kept, names []string) provlink.Response {
	if r := provlink.BadNames(names); r != nil {
		return *r
	}
	kp.mu.Lock()
	defer kp.mu.Unlock()
	if r := k.relist(id, kp); r.Err != nil {
		return r
	}
	return kp.listing.Answer(names)
}

// relist lists the provider again when it announced a change or its last listing is
// providers.RelistAfter old; kp.mu is held. A failure leaves the provider out, as the answering
// process will.
func (k *server) relist(id string, kp *kept) provlink.Response {
	c := kp.client
	if c == nil {
		return provlink.Response{Err: &provlink.WireError{Msg: mcpstdio.StageList + ": the provider was stopped", Stage: mcpstdio.StageList, Is: []string{"closed"}}}
	}
	if kp.listing.Fresh(c.ToolsChanged) {
		return provlink.Response{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), providers.Timeout(k.cfg(id)))
	tools, err := c.ListTools(ctx)
	cancel()
	if err != nil {
		// The answering process leaves it out of the turn: so does the keeper.
		kp.client, kp.listing = nil, nil
		return provlink.Response{Err: provlink.ToWire(err, k.stopFaulty(c))}
	}
	kp.listing = provlink.NewListing(tools, provlink.ToWireTools(tools))
	return provlink.Response{}
}

// call forwards one tools/call; a cancel from the client, or the client going away, cancels it
// (notifications/cancelled, through req.Ctx: readRequests) and the provider stays. A JSON-RPC
// error or a result over the limit leaves it too; any other failure is a transport or protocol
// fault, which leaves the provider out of the turn.
func (k *server) call(id string, kp *kept, req provlink.Request) provlink.Response {
	kp.mu.Lock()
	if req.Listing != "" {
		// Only on the listing the caller checked (proto.go): refreshed as tools would refresh it.
		if r := k.relist(id, kp); r.Err != nil {
			kp.mu.Unlock()
			return r
		}
		if !kp.listing.Guards(req.Listing) {
			r := kp.listing.Moved(req.Name)
			kp.mu.Unlock()
			return r
		}
	}
	c := kp.client
	kp.mu.Unlock()
	if c == nil {
		return provlink.Response{Err: &provlink.WireError{Msg: mcpstdio.StageCall + ": the provider was stopped", Stage: mcpstdio.StageCall, Is: []string{"closed"}}}
	}
	ctx, cancel := context.WithTimeout(req.Ctx, providers.Timeout(k.cfg(id)))
	defer cancel()
	res, err := c.CallTool(ctx, req.Name, req.Arguments)
	var rpc *mcpstdio.RPCError
	var tooLarge *mcpstdio.TooLargeError
	switch {
	case err == nil:
		return provlink.Response{Result: res.Raw}
	case errors.As(err, &rpc), errors.As(err, &tooLarge),
		errors.Is(err, context.Canceled) && !errors.Is(err, mcpstdio.ErrClosed):
		return provlink.Response{Err: provlink.ToWire(err, "")}
	}
	kp.mu.Lock()
	mine := kp.client == c
	if mine {
		kp.client, kp.listing = nil, nil
	}
	kp.mu.Unlock()
	if !mine {
		return provlink.Response{Err: provlink.ToWire(err, c.StderrTail())} // stopped by finish
	}
	return provlink.Response{Err: provlink.ToWire(err, k.stopFaulty(c))}
}

// redacted is r without the values of env and env_file that the keeper started its servers
// with (SPEC 7: the process that read them redacts what it passes on). The answering process
// redacts with the values it reads itself, afresh, so this is needed, and done, only once an
// env_file has been edited since a server was started with it: only the keeper still knows
// the value that server holds. (Done always, a result's recorded size would differ from a
// cold answer's.)
func redacted(red *audit.Redactor, r provlink.Response) provlink.Response {
	if red.Empty() {
		return r
	}
	r.Result = red.JSON(r.Result)
	r.Tail = red.String(r.Tail)
	r.Err = r.Err.Redacted(red.String, red.JSON)
	return r
}
