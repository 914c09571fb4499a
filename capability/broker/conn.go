package broker

// The broker's side of one caller's connection: hello, then start (of one upstream), list,
// tools and call; or one of status, stop, drain and release.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/capability/provlink"
	"github.com/spear-shell/spear-shell/mcpstdio"
	"github.com/spear-shell/spear-shell/policy"
)

func (b *server) serveConn(conn *net.UnixConn, cs *connState) {
	defer func() {
		b.mu.Lock()
		delete(b.conns, conn)
		b.last = time.Now()
		b.mu.Unlock()
		conn.Close()
	}()
	sv := provlink.Open(conn)
	if sv == nil {
		return
	}
	defer sv.Close()
	hello, reqs, calls, answer, refuse := sv.Hello, sv.Reqs, sv.Calls, sv.Answer, sv.Refuse
	// hello is answered with what the broker is, whatever the caller's protocol: a newer caller
	// asks an older broker to drain, an older caller leaves a newer broker be.
	if !answer(provlink.Response{Broker: b.about(false)}) {
		return
	}
	var u *upstream
	for req := range reqs {
		b.busy(cs)
		var r provlink.Response
		same := hello.Protocol == protocol
		switch {
		case req.Op == provlink.OpStop:
			b.idle(cs)
			b.end(reasonStopped)
			for range reqs { // the answer is the connection closing, once everything is stopped
			}
			return
		case req.Op == provlink.OpDrain:
			b.idle(cs)
			if b.foreground && hello.Foreground {
				refuse("another foreground broker runs (pid " + strconv.Itoa(os.Getpid()) + ")")
				return
			}
			answer(provlink.Response{})
			b.drain()
			return
		case !same:
			r = provlink.Response{Err: &provlink.WireError{Msg: "broker protocol " + strconv.Itoa(protocol) + ", not " + strconv.Itoa(hello.Protocol), Keeper: true}}
		case req.Op == provlink.OpStatus:
			r = provlink.Response{Broker: b.about(true)}
		case req.Op == provlink.OpRelease:
			r = b.release(req.Provider)
		case req.Op == provlink.OpStart && u == nil:
			u, r = b.start(req)
		case req.Op == provlink.OpList && u != nil:
			r = u.list()
		case req.Op == provlink.OpTools && u != nil:
			r = u.toolsAnswer(req.Names)
		case req.Op == provlink.OpCall && u != nil:
			r = u.call(req)
		case req.Op == provlink.OpCancel:
			b.idle(cs)
			continue // nothing in flight
		default:
			r = provlink.Response{Err: &provlink.WireError{Msg: "unexpected request " + strconv.Quote(req.Op), Keeper: true}}
		}
		if req.Op == provlink.OpCall {
			calls.End()
		}
		b.idle(cs)
		b.mu.Lock()
		draining := b.draining
		b.mu.Unlock()
		if !answer(r) || r.Err != nil && r.Err.Keeper || draining {
			return
		}
	}
}

// about is what the broker says of itself; with the upstreams for status.
func (b *server) about(upstreams bool) *provlink.BrokerStatus {
	st := &provlink.BrokerStatus{Pid: os.Getpid(), Protocol: protocol, Foreground: b.foreground}
	if upstreams {
		b.mu.Lock()
		ups := make([]*upstream, 0, len(b.slots))
		for _, u := range b.slots {
			ups = append(ups, u)
		}
		b.mu.Unlock()
		_, red, _ := b.cfg.load()
		for _, u := range ups {
			us := u.status()
			us.Failure = red.String(us.Failure)
			st.Upstreams = append(st.Upstreams, us)
		}
	}
	return st
}

// start finds the request's entry in the configuration as it is now and has its upstream up.
func (b *server) start(req provlink.Request) (*upstream, provlink.Response) {
	if _, why := b.cfg.lookup(req.Provider, req.ShareKey, req.Launch); why != "" {
		return nil, provlink.Response{Err: &provlink.WireError{Msg: "the broker refused: " + why, Keeper: true}}
	}
	if b.ending() {
		return nil, provlink.Response{Err: &provlink.WireError{Msg: "the broker is ending", Keeper: true}}
	}
	u := b.slot(req.Provider, req.ShareKey, req.Launch)
	if err := u.ensure(context.Background()); err != nil {
		return nil, b.failure(err, "")
	}
	return u, provlink.Response{Server: u.serverName()}
}

// failure is err as a caller gets it: a down upstream says why (Down), a provider's failure
// carries its stage and tail; messages and tails redacted.
func (b *server) failure(err error, tail string) provlink.Response {
	_, red, _ := b.cfg.load()
	var down *downErr
	if errors.As(err, &down) {
		return provlink.Response{Err: &provlink.WireError{Msg: red.String(down.msg), Down: true}}
	}
	return provlink.Response{Err: provlink.ToWire(err, tail).Redacted(red.String, red.JSON)}
}

// release clears the flapping holds of entry id.
func (b *server) release(id string) provlink.Response {
	b.mu.Lock()
	var ups []*upstream
	for _, u := range b.slots {
		if u.id == id {
			ups = append(ups, u)
		}
	}
	b.mu.Unlock()
	released := false
	for _, u := range ups {
		if u.release() {
			released = true
		}
	}
	if !released {
		return provlink.Response{Err: &provlink.WireError{Msg: "provider " + strconv.Quote(id) + " is not held down", Keeper: true}}
	}
	return provlink.Response{}
}

// list answers the upstream's tools: listed again when it announced a change or the listing is
// providers.RelistAfter old; down, the last listing.
func (u *upstream) list() provlink.Response {
	return u.fromListing(func(l *provlink.Listing) provlink.Response { return provlink.Response{Tools: l.Tools} })
}

// toolsAnswer answers the names asked as the last listing holds them (provlink's tools).
func (u *upstream) toolsAnswer(names []string) provlink.Response {
	if r := provlink.BadNames(names); r != nil {
		return *r
	}
	return u.fromListing(func(l *provlink.Listing) provlink.Response { return l.Answer(names) })
}

// fromListing answers from the listing, taken again first where it must be (relist); with none
// to be had, the upstream's failure.
func (u *upstream) fromListing(answer func(*provlink.Listing) provlink.Response) provlink.Response {
	u.listMu.Lock()
	defer u.listMu.Unlock()
	u.relist()
	if u.listing == nil {
		u.mu.Lock()
		defer u.mu.Unlock()
		return u.b.failure(u.downError(), "")
	}
	return answer(u.listing)
}

// call forwards one tools/call on the upstream's connection, beside every other caller's (the
// client gives each its own id). The caller's cancel, or its going away, cancels it
// (notifications/cancelled) and counts for nothing; a timeout the broker reaches counts, and
// three in a row stop the upstream; a transport or protocol fault stops it at once. A stopped
// upstream is started again after its restart_delay; this call is answered with its failure.
func (u *upstream) call(req provlink.Request) provlink.Response {
	u.mu.Lock()
	if u.state != stateUp {
		defer u.mu.Unlock()
		return u.b.failure(u.downError(), "")
	}
	u.mu.Unlock()
	if req.Listing != "" {
		u.listMu.Lock()
		u.relist()
		if !u.listing.Guards(req.Listing) {
			r := u.listing.Moved(req.Name)
			u.listMu.Unlock()
			return r
		}
		u.listMu.Unlock()
	}
	u.mu.Lock()
	c := u.client
	if u.state != stateUp || c == nil {
		defer u.mu.Unlock()
		return u.b.failure(u.downError(), "")
	}
	u.calls++
	u.mu.Unlock()
	defer u.callEnded()

	timeout := time.Duration(req.TimeoutMS) * time.Millisecond
	if timeout <= 0 {
		timeout = policy.DefaultTimeout
		if e := u.b.cfg.entry(u.id); e != nil {
			timeout = providers.Timeout(e)
		}
	}
	ctx, cancel := context.WithTimeout(req.Ctx, timeout)
	defer cancel()
	res, err := c.CallTool(ctx, req.Name, req.Arguments)
	var rpc *mcpstdio.RPCError
	var tooLarge *mcpstdio.TooLargeError
	switch {
	case err == nil:
		u.noTimeout()
		raw := res.Raw
		if red := u.redactor(); red != nil {
			if raw = red.Bytes(raw); !json.Valid(raw) {
				return u.b.failure(&mcpstdio.ProtocolError{Stage: mcpstdio.StageCall, Err: errors.New("a result that holds a secret of its environment where it cannot be redacted")}, "")
			}
		}
		return provlink.Response{Result: raw}
	case errors.As(err, &rpc), errors.As(err, &tooLarge):
		u.noTimeout()
		return u.b.failure(err, "")
	case req.Ctx.Err() != nil && !errors.Is(err, mcpstdio.ErrClosed):
		return u.b.failure(err, "") // the caller's cancel: not the upstream's fault
	case errors.Is(err, mcpstdio.ErrTimeout) && !errors.Is(err, mcpstdio.ErrClosed):
		if u.timedOut() {
			u.fault(c, mcpstdio.StageCall, errors.New("it did not answer 3 calls in a row in time"))
		}
		return u.b.failure(err, "")
	}
	if u.b.ending() {
		return u.b.failure(&downErr{msg: "the broker stopped during the call, which is not sent again"}, "")
	}
	u.fault(c, mcpstdio.StageCall, err)
	if errors.Is(err, mcpstdio.ErrClosed) {
		// Stopped under the call: it exited (the watch saw it first), or the broker ends.
		err = fmt.Errorf("%w: its server stopped during the call", io.ErrUnexpectedEOF)
	}
	r := u.b.failure(err, c.StderrTail())
	r.Err.Stage = mcpstdio.StageCall
	return r
}

func (u *upstream) noTimeout() {
	u.mu.Lock()
	u.timeouts = 0
	u.mu.Unlock()
}

// timedOut counts a call timeout and reports whether it is the third in a row.
func (u *upstream) timedOut() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.timeouts++
	return u.timeouts >= timeoutsInARow
}

// callEnded ends a call; a retired upstream stops with its last call.
func (u *upstream) callEnded() {
	u.mu.Lock()
	u.calls--
	var c *mcpstdio.Client
	if u.state == stateRetired && u.calls == 0 && u.client != nil {
		c, u.client = u.client, nil
	}
	u.mu.Unlock()
	if c != nil {
		u.b.wg.Go(func() { u.stop(c) })
	}
}
