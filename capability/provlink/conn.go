package provlink

// The client side of one provider's connection to its holder.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/mcpstdio"
)

// Conn is one provider held by a keeper or the broker, over a connection of its own: a
// providers.Client, Definer and GuardedCaller. Its requests go one at a time.
type Conn struct {
	conn *net.UnixConn
	rw   io.ReadWriter // conn, read and written quietly (mcpstdio.Quiet)
	r    *bufio.Reader
	// Lost makes the error of a request whose connection failed (the holder went away): the
	// holder's client records it and says so; the request is never sent again.
	Lost func(stage string, err error) error

	mu   sync.Mutex // one request at a time
	tail string

	server string // the server's serverInfo name, when its holder said it (SetServer)
}

// SetServer keeps the name the server gave in initialize's serverInfo, as its holder said it.
func (kp *Conn) SetServer(name string) { kp.server = name }

// ServerInfo is the server's serverInfo name as its holder said it ("" when it did not), and no
// version.
func (kp *Conn) ServerInfo() (name, version string) { return kp.server, "" }

// Dial connects to the holder listening at path and checks that it runs as our user.
func Dial(path string, lost func(stage string, err error) error) (*Conn, error) {
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	if err := SamePeer(conn); err != nil {
		conn.Close()
		return nil, err
	}
	rw := mcpstdio.Quiet(conn)
	return &Conn{conn: conn, rw: rw, r: bufio.NewReaderSize(rw, 64<<10), Lost: lost}, nil
}

// SamePeer checks that the other end of a connection runs as our user.
func SamePeer(conn *net.UnixConn) error {
	raw, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("peer credentials: %w", cerr)
	}
	if int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("the peer runs as uid %d, not as us", cred.Uid)
	}
	return nil
}

// Send writes requests in one write.
func (kp *Conn) Send(reqs ...Request) error {
	var b []byte
	for _, r := range reqs {
		line, err := json.Marshal(r)
		if err != nil {
			return err
		}
		b = append(append(b, line...), '\n')
	}
	_, err := kp.rw.Write(b)
	return err
}

// Receive reads one reply. When ctx is cancelled first, the holder is told (cancel) and the
// connection closed: the holder cancels the call, the provider stays. A ctx deadline does not
// end the wait: the holder applies the provider's timeout itself and says so; deadline (zero:
// none) bounds the wait for a holder that does not answer.
func (kp *Conn) Receive(ctx context.Context, deadline time.Time) (Response, error) {
	kp.conn.SetReadDeadline(deadline)
	stop := context.AfterFunc(ctx, func() {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return // the holder says the provider's timeout itself, before deadline
		}
		kp.Send(Request{Op: OpCancel})
		kp.conn.SetReadDeadline(pastDeadline)
	})
	defer stop()
	line, err := kp.r.ReadBytes('\n')
	var rep Response
	if err != nil {
		return rep, err
	}
	return DecodeResponse(line)
}

var pastDeadline = time.Unix(1, 0)

// Grace is how long past a call's deadline the holder's own timeout answer is awaited.
const Grace = 2 * time.Second

// roundTrip sends one request and reads its reply; a connection that fails is a provider that
// is gone for this process (the holder died), said by Lost.
func (kp *Conn) roundTrip(ctx context.Context, stage string, req Request) (Response, error) {
	kp.mu.Lock()
	defer kp.mu.Unlock()
	if err := kp.Send(req); err != nil {
		return Response{}, kp.lost(stage, err)
	}
	var deadline time.Time
	if d, ok := ctx.Deadline(); ok {
		deadline = d.Add(Grace)
	}
	rep, err := kp.Receive(ctx, deadline)
	if err != nil {
		if ctx.Err() != nil {
			kp.conn.Close()
			return rep, &providers.Failure{Msg: stage + ": " + ctx.Err().Error(), Stage: stage, Is: []error{ctx.Err(), ctxSentinel(ctx)}}
		}
		return rep, kp.lost(stage, err)
	}
	if rep.Err != nil {
		kp.tail = rep.Err.Tail
		return rep, rep.Err.Err()
	}
	return rep, nil
}

func ctxSentinel(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return mcpstdio.ErrTimeout
	}
	return ctx.Err()
}

func (kp *Conn) lost(stage string, err error) error {
	kp.conn.Close()
	return kp.Lost(stage, err)
}

func (kp *Conn) ListTools(ctx context.Context) ([]mcpstdio.Tool, error) {
	rep, err := kp.roundTrip(ctx, mcpstdio.StageList, Request{Op: OpList})
	if err != nil {
		return nil, err
	}
	return FromWireTools(rep.Tools), nil
}

// Definitions asks the holder for the named tools as the provider's last listing holds them
// (the tools request): one round trip, whatever the listing's size.
func (kp *Conn) Definitions(ctx context.Context, names []string) ([]providers.Definition, providers.Listing, error) {
	rep, err := kp.roundTrip(ctx, mcpstdio.StageList, Request{Op: OpTools, Names: names})
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
	return FromWireDefs(rep.Defs), providers.Listing{Hash: rep.Hash, Age: time.Duration(rep.AgeMS) * time.Millisecond}, nil
}

func (kp *Conn) CallTool(ctx context.Context, name string, args json.RawMessage) (*mcpstdio.CallResult, error) {
	res, _, err := kp.CallToolIf(ctx, name, args, "")
	return res, err
}

// CallToolIf is CallTool sent only while the provider's listing is still the one whose hash
// is listing (providers.GuardedCaller); otherwise nothing is sent and moved says what the new
// listing holds under name. An empty listing sends the call unconditionally.
func (kp *Conn) CallToolIf(ctx context.Context, name string, args json.RawMessage, listing string) (*mcpstdio.CallResult, *providers.Moved, error) {
	req := Request{Op: OpCall, Name: name, Arguments: args, Listing: listing}
	if d, ok := ctx.Deadline(); ok {
		req.TimeoutMS = max(time.Until(d).Milliseconds(), 1)
	}
	rep, err := kp.roundTrip(ctx, mcpstdio.StageCall, req)
	if err != nil {
		return nil, nil, err
	}
	if rep.Moved {
		if listing == "" || len(rep.Defs) != 1 || rep.Defs[0].Name != name || rep.Defs[0].Count < 0 ||
			(rep.Defs[0].Count == 0) != (rep.Defs[0].Tool == nil) || rep.Defs[0].Tool != nil && rep.Defs[0].Tool.Name != name {
			return nil, nil, kp.lost(mcpstdio.StageCall, fmt.Errorf("a moved answer that does not answer the call"))
		}
		return nil, &providers.Moved{Def: FromWireDefs(rep.Defs)[0],
			Listing: providers.Listing{Hash: rep.Hash, Age: time.Duration(rep.AgeMS) * time.Millisecond}}, nil
	}
	res, err := mcpstdio.DecodeResult(rep.Result)
	if err != nil {
		return nil, nil, &providers.Failure{Msg: mcpstdio.StageCall + ": " + err.Error(), Stage: mcpstdio.StageCall, Is: []error{mcpstdio.ErrProtocol}}
	}
	return res, nil, nil
}

// ToolsChanged: the holder lists again only when the provider announced a change, so asking it
// costs one round trip and answers the same.
func (kp *Conn) ToolsChanged() bool { return true }

func (kp *Conn) StderrTail() string {
	kp.mu.Lock()
	defer kp.mu.Unlock()
	return kp.tail
}

// Close lets the provider go: it stays with its holder.
func (kp *Conn) Close() error { return kp.conn.Close() }

// InFlight is the call a connection has in flight, if any: its reader cancels it. The call
// runs on the connection's own goroutine, whose stack has grown once, where a goroutine per
// call would grow a new one each time (docs/bench.md, face-invoke).
type InFlight struct {
	mu     sync.Mutex
	cancel context.CancelFunc // nil: no call in flight
}

// begin is a call read: from now on, anything the client sends, or its going away, cancels it.
func (f *InFlight) begin() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	f.mu.Lock()
	f.cancel = cancel
	f.mu.Unlock()
	return ctx
}

// End is the call answered.
func (f *InFlight) End() {
	f.mu.Lock()
	cancel := f.cancel
	f.cancel = nil
	f.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// interrupt cancels the call in flight and reports whether there was one.
func (f *InFlight) interrupt() bool {
	f.mu.Lock()
	cancel := f.cancel
	f.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return cancel != nil
}

// ReadRequests hands the connection's requests over one by one until it closes, a line is not
// a request, or quit. While a call is in flight, whatever comes (cancel: nothing else may come
// mid-call), or the connection's end, cancels it (notifications/cancelled) and is not handed on.
func ReadRequests(conn *net.UnixConn, reqs chan<- Request, quit <-chan struct{}, calls *InFlight) {
	defer close(reqs)
	defer calls.interrupt()
	r := bufio.NewReaderSize(mcpstdio.Quiet(conn), 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		req, err := DecodeRequest(line)
		if err != nil {
			return
		}
		if calls.interrupt() {
			continue
		}
		if req.Op == OpCall {
			req.Ctx = calls.begin()
		}
		select {
		case reqs <- req:
		case <-quit:
			return
		}
	}
}

// Answerer writes a connection's answers, one line each.
type Answerer struct{ w *bufio.Writer }

// NewAnswerer writes on conn.
func NewAnswerer(conn *net.UnixConn) *Answerer {
	return &Answerer{w: bufio.NewWriter(mcpstdio.Quiet(conn))}
}

// Answer writes r; false when the connection failed.
func (a *Answerer) Answer(r Response) bool {
	line, err := EncodeResponse(r)
	if err == nil {
		a.w.Write(line)
		err = a.w.Flush()
	}
	return err == nil
}

// DrainUntil reads and discards what the holder sends until it closes the connection or
// deadline passes: a stop's answer is the connection closing.
func (kp *Conn) DrainUntil(deadline time.Time) {
	kp.conn.SetReadDeadline(deadline)
	io.Copy(io.Discard, kp.r)
}
