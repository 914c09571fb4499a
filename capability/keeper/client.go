package keeper

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/spear-shell/spear-shell/audit"
	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/mcpstdio"
	"github.com/spear-shell/spear-shell/policy"
)

// Link is how this process reaches the turn's keeper. It is made once per process (Reach);
// once the keeper fails it, the process starts its providers itself.
type Link struct {
	t    *providers.Turn
	path string

	mu   sync.Mutex
	gone bool // the keeper cannot be used: recorded once, every later start is local
}

// Reach returns a link to the keeper of turn t, starting the keeper when none runs, or nil
// when this process starts its providers itself: a stdin session, keep_providers 0, no state,
// no audit trail, no Settings.Self, or a keeper that cannot be started (recorded,
// keeper_unavailable). Call it once per process.
func Reach(t *providers.Turn) *Link {
	if t.Settings.Session || t.Settings.Self == "" || t.Manifest == nil || t.Manifest.KeepProviders <= 0 || t.State == nil || t.Audit == nil {
		return nil
	}
	k := &Link{t: t, path: socketPath(t.State.Dir())}
	if len(k.path) > maxSocketPath {
		k.unavailable(fmt.Errorf("keeper: the socket path %s does not fit a unix socket address (%d bytes at most)", k.path, maxSocketPath))
		return nil
	}
	if err := k.ensureRunning(); err != nil {
		k.unavailable(err)
		return nil
	}
	return k
}

// unavailable records, once per process, that this answer starts its providers itself.
func (k *Link) unavailable(err error) {
	k.mu.Lock()
	first := !k.gone
	k.gone = true
	k.mu.Unlock()
	if first {
		_ = k.t.Log(audit.Event{Name: audit.EventKeeperUnavailable, Reason: err.Error()})
	}
}

func (k *Link) usable() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return !k.gone
}

// hello is the first line of every connection.
func (k *Link) hello() request {
	return request{Op: opHello, Protocol: protocol, Turn: k.t.Manifest.Turn, Key: k.t.Key}
}

// Start has the keeper start (or reuse) the provider of entry cfg. reached is false when the
// keeper could not be used; the caller then starts the provider itself. With reached true, err
// is the provider's failure as the keeper saw it.
func (k *Link) Start(ctx context.Context, cfg *policy.Provider) (c providers.Client, reached bool, err error) {
	if !k.usable() {
		return nil, false, nil
	}
	kp, err := k.dial()
	if err != nil {
		k.unavailable(err)
		return nil, false, nil
	}
	// hello and start go together: one round trip, the keeper answers both in order.
	if err := kp.send(k.hello(), request{Op: opStart, Provider: cfg.ID}); err != nil {
		kp.conn.Close()
		k.unavailable(fmt.Errorf("keeper: %w", err))
		return nil, false, nil
	}
	deadline := time.Now().Add(providers.Timeout(cfg) + grace)
	for i := range 2 {
		rep, err := kp.receive(ctx, deadline)
		switch {
		case ctx.Err() != nil:
			kp.conn.Close()
			return nil, true, ctx.Err()
		case err != nil:
			kp.conn.Close()
			k.unavailable(fmt.Errorf("keeper: %w", err))
			return nil, false, nil
		case rep.Err != nil && (i == 0 || rep.Err.Keeper):
			kp.conn.Close()
			k.unavailable(fmt.Errorf("keeper: refused: %s", rep.Err.Msg))
			return nil, false, nil
		case rep.Err != nil:
			kp.conn.Close()
			return nil, true, rep.Err.err()
		}
	}
	return kp, true, nil
}

// dial connects to the keeper and checks that it runs as our user.
func (k *Link) dial() (*keptProvider, error) {
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: k.path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("keeper: %w", err)
	}
	if err := samePeer(conn); err != nil {
		conn.Close()
		return nil, err
	}
	return &keptProvider{link: k, conn: conn, r: bufio.NewReaderSize(conn, 64<<10)}, nil
}

// keptProvider is one provider kept by the keeper, over a connection of its own.
type keptProvider struct {
	link *Link
	conn *net.UnixConn
	r    *bufio.Reader

	mu   sync.Mutex // one request at a time
	tail string
}

func (kp *keptProvider) send(reqs ...request) error {
	var b []byte
	for _, r := range reqs {
		line, err := json.Marshal(r)
		if err != nil {
			return err
		}
		b = append(append(b, line...), '\n')
	}
	_, err := kp.conn.Write(b)
	return err
}

// receive reads one reply. When ctx is cancelled first, the keeper is told (cancel) and the
// connection closed: the keeper cancels the call, the provider stays. A ctx deadline does not
// end the wait: the keeper applies the provider's timeout itself and says so; deadline (zero:
// none) bounds the wait for a keeper that does not answer.
func (kp *keptProvider) receive(ctx context.Context, deadline time.Time) (response, error) {
	kp.conn.SetReadDeadline(deadline)
	stop := context.AfterFunc(ctx, func() {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return // the keeper says the provider's timeout itself, before deadline
		}
		kp.send(request{Op: opCancel})
		kp.conn.SetReadDeadline(pastDeadline)
	})
	defer stop()
	line, err := kp.r.ReadBytes('\n')
	var rep response
	if err != nil {
		return rep, err
	}
	return decodeResponse(line)
}

var pastDeadline = time.Unix(1, 0)

// grace is how long past a call's deadline the keeper's own timeout answer is awaited.
const grace = 2 * time.Second

// roundTrip sends one request and reads its reply; a connection that fails is a provider that
// is gone for this process (the keeper died), said as a transport fault.
func (kp *keptProvider) roundTrip(ctx context.Context, stage string, req request) (response, error) {
	kp.mu.Lock()
	defer kp.mu.Unlock()
	if err := kp.send(req); err != nil {
		return response{}, kp.lost(stage, err)
	}
	var deadline time.Time
	if d, ok := ctx.Deadline(); ok {
		deadline = d.Add(grace)
	}
	rep, err := kp.receive(ctx, deadline)
	if err != nil {
		if ctx.Err() != nil {
			kp.conn.Close()
			return rep, &providers.Failure{Msg: stage + ": " + ctx.Err().Error(), Stage: stage, Is: []error{ctx.Err(), ctxSentinel(ctx)}}
		}
		return rep, kp.lost(stage, err)
	}
	if rep.Err != nil {
		kp.tail = rep.Err.Tail
		return rep, rep.Err.err()
	}
	return rep, nil
}

func ctxSentinel(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return mcpstdio.ErrTimeout
	}
	return ctx.Err()
}

// lost is the keeper's connection failing under a request: recorded once (keeper_unavailable);
// the request fails as a transport fault of the provider, never retried.
func (kp *keptProvider) lost(stage string, err error) error {
	kp.conn.Close()
	kp.link.unavailable(fmt.Errorf("keeper: the connection failed during %s: %w", stage, err))
	return &providers.Failure{Msg: stage + ": the turn's keeper went away: " + err.Error(), Stage: stage, Is: []error{ErrLost}}
}

// ErrLost is the keeper's connection failing under a request: no fault of the provider's. A
// listing that fails with it may be asked again of a provider started here; a call may not.
var ErrLost = errors.New("the turn's keeper went away")

func (kp *keptProvider) ListTools(ctx context.Context) ([]mcpstdio.Tool, error) {
	rep, err := kp.roundTrip(ctx, mcpstdio.StageList, request{Op: opList})
	if err != nil {
		return nil, err
	}
	return fromWireTools(rep.Tools), nil
}

// Definitions asks the keeper for the named tools as the provider's last listing holds them
// (the tools request): one round trip, whatever the listing's size.
func (kp *keptProvider) Definitions(ctx context.Context, names []string) ([]providers.Definition, providers.Listing, error) {
	rep, err := kp.roundTrip(ctx, mcpstdio.StageList, request{Op: opTools, Names: names})
	if err != nil {
		return nil, providers.Listing{}, err
	}
	if len(rep.Defs) != len(names) {
		return nil, providers.Listing{}, kp.lost(mcpstdio.StageList, fmt.Errorf("%d definitions for %d names", len(rep.Defs), len(names)))
	}
	for i, d := range rep.Defs {
		if d.Name != names[i] || d.Count < 0 || (d.Count == 0) != (d.Tool == nil) || d.Tool != nil && d.Tool.Name != d.Name {
			return nil, providers.Listing{}, kp.lost(mcpstdio.StageList, fmt.Errorf("a definition that answers no name asked"))
		}
	}
	return fromWireDefs(rep.Defs), providers.Listing{Hash: rep.Hash, Age: time.Duration(rep.AgeMS) * time.Millisecond}, nil
}

func (kp *keptProvider) CallTool(ctx context.Context, name string, args json.RawMessage) (*mcpstdio.CallResult, error) {
	res, _, err := kp.CallToolIf(ctx, name, args, "")
	return res, err
}

// CallToolIf is CallTool sent only while the provider's listing is still the one whose hash
// is listing (providers.GuardedCaller); otherwise nothing is sent and moved says what the new
// listing holds under name. An empty listing sends the call unconditionally.
func (kp *keptProvider) CallToolIf(ctx context.Context, name string, args json.RawMessage, listing string) (*mcpstdio.CallResult, *providers.Moved, error) {
	rep, err := kp.roundTrip(ctx, mcpstdio.StageCall, request{Op: opCall, Name: name, Arguments: args, Listing: listing})
	if err != nil {
		return nil, nil, err
	}
	if rep.Moved {
		if listing == "" || len(rep.Defs) != 1 || rep.Defs[0].Name != name || rep.Defs[0].Count < 0 ||
			(rep.Defs[0].Count == 0) != (rep.Defs[0].Tool == nil) || rep.Defs[0].Tool != nil && rep.Defs[0].Tool.Name != name {
			return nil, nil, kp.lost(mcpstdio.StageCall, fmt.Errorf("a moved answer that does not answer the call"))
		}
		return nil, &providers.Moved{Def: fromWireDefs(rep.Defs)[0],
			Listing: providers.Listing{Hash: rep.Hash, Age: time.Duration(rep.AgeMS) * time.Millisecond}}, nil
	}
	res, err := kp.decodeResult(rep)
	return res, nil, err
}

func (kp *keptProvider) decodeResult(rep response) (*mcpstdio.CallResult, error) {
	res, err := mcpstdio.DecodeResult(rep.Result)
	if err != nil {
		return nil, &providers.Failure{Msg: mcpstdio.StageCall + ": " + err.Error(), Stage: mcpstdio.StageCall, Is: []error{mcpstdio.ErrProtocol}}
	}
	return res, nil
}

// ToolsChanged: the keeper lists again only when the provider announced a change, so asking it
// costs one round trip and answers the same.
func (kp *keptProvider) ToolsChanged() bool { return true }

func (kp *keptProvider) StderrTail() string {
	kp.mu.Lock()
	defer kp.mu.Unlock()
	return kp.tail
}

// Close lets the provider go: it stays with the keeper.
func (kp *keptProvider) Close() error { return kp.conn.Close() }
