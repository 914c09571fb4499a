package mcpstdio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Client is a session with one MCP server process. Its methods may be called
// concurrently. It must be closed.
type Client struct {
	opts   Options
	pgid   int
	stdin  *os.File  // our end of the server's stdin
	stdout *os.File  // our end of the server's stdout
	stderr *os.File  // our end of the server's stderr
	in     io.Writer // stdin, written quietly (Quiet)
	out    io.Reader // stdout, read quietly
	tail   *tailBuffer

	wsem chan struct{} // one writer at a time; a channel so waiting can end with a context

	mu      sync.Mutex
	nextID  int64
	pending map[int64]waiter
	broken  error // why the client is unusable; nil while usable

	cancelled map[int64]bool // calls cancelled by the caller whose answer has not come

	dead    chan struct{} // closed when the reader stops; readErr says why
	readErr error

	exited chan struct{} // the leader exited (not reaped yet)
	reapOK chan struct{} // Close has signalled the group: the leader may be reaped
	reaped chan struct{}

	stderrDone chan struct{}
	closing    chan struct{}
	closeOnce  sync.Once
	closeErr   error

	serverName, serverVersion string

	// toolsChanged is set by notifications/tools/list_changed, cleared when a listing starts.
	toolsChanged atomic.Bool
}

type response struct {
	result   json.RawMessage
	err      *RPCError
	tooLarge *TooLargeError // a tools/call result over the limit, read through and discarded
}

// waiter is a request waiting for its response.
type waiter struct {
	ch     chan response
	method string
}

type outRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int64  `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

type outNotification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

// errEOF is the server closing its stdout.
// errEOF is a type, not a fmt.Errorf value: package initialisation stays free of work (the
// front binary links this package and starts for every command line).
var errEOF error = eofError{}

type eofError struct{}

func (eofError) Error() string { return "server closed its stdout: " + io.ErrUnexpectedEOF.Error() }
func (eofError) Unwrap() error { return io.ErrUnexpectedEOF }

// request sends one request and waits for its answer, the end of ctx, the end of the
// transport or Close. It never sends twice.
func (c *Client) request(ctx context.Context, stage, method string, params any) (json.RawMessage, error) {
	if ctx.Err() != nil {
		return nil, ctxError(ctx, stage) // nothing sent: the client stays usable
	}
	c.mu.Lock()
	if c.broken != nil {
		cause := c.broken
		c.mu.Unlock()
		return nil, closedError(cause)
	}
	c.nextID++
	id := c.nextID
	line, err := json.Marshal(outRequest{JSONRPC: "2.0", ID: id, Method: method, Params: params})
	if err != nil {
		c.mu.Unlock()
		return nil, fmt.Errorf("%s: encode request: %w", stage, err)
	}
	ch := make(chan response, 1)
	c.pending[id] = waiter{ch: ch, method: method}
	c.mu.Unlock()

	if err := c.write(ctx, append(line, '\n')); err != nil {
		c.forget(id)
		var e error
		switch {
		case errors.Is(err, ErrClosed):
			return nil, err
		case ctx.Err() != nil:
			// The line may be cut short: nothing more can be sent, not even a cancel.
			e = ctxError(ctx, stage)
		default:
			e = &ProtocolError{Stage: stage, Err: fmt.Errorf("write: %w", err)}
		}
		c.breakWith(e)
		return nil, e
	}

	select {
	case r := <-ch:
		return r.unpack(stage)
	case <-c.dead:
		select {
		case r := <-ch: // answered just before the transport ended
			return r.unpack(stage)
		default:
		}
		if c.isClosing() {
			return nil, ErrClosed
		}
		return nil, &ProtocolError{Stage: stage, Err: c.readErr}
	case <-c.closing:
		return nil, ErrClosed
	case <-ctx.Done():
		if !c.forget(id) {
			return (<-ch).unpack(stage) // the reader delivered it meanwhile
		}
		e := ctxError(ctx, stage)
		if method == "tools/call" && (errors.Is(ctx.Err(), context.Canceled) || c.opts.CallTimeoutKeeps) {
			// A call its caller gave up on (Ctrl-C, a client gone): the server is told, its late
			// answer is discarded, and the session goes on (MCP cancellation).
			c.mu.Lock()
			c.cancelled[id] = true
			c.mu.Unlock()
			reason := "cancelled by the client"
			if !errors.Is(ctx.Err(), context.Canceled) {
				reason = "timeout"
			}
			c.notifyCancelled(id, reason)
			return nil, e
		}
		c.breakWith(e)
		// initialize must not be cancelled (MCP lifecycle); the process is closed anyway.
		if method != "initialize" {
			reason := "timeout"
			if errors.Is(ctx.Err(), context.Canceled) {
				reason = "cancelled by the client"
			}
			c.notifyCancelled(id, reason)
		}
		return nil, e
	}
}

func (r response) unpack(stage string) (json.RawMessage, error) {
	switch {
	case r.err != nil:
		return nil, fmt.Errorf("%s: %w", stage, r.err)
	case r.tooLarge != nil:
		return nil, fmt.Errorf("%s: %w", stage, r.tooLarge)
	}
	return r.result, nil
}

// forget removes a pending request; false means the reader already took it.
func (c *Client) forget(id int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.pending[id]
	delete(c.pending, id)
	return ok
}

// breakWith makes the client unusable, keeping the first reason.
func (c *Client) breakWith(err error) {
	c.mu.Lock()
	if c.broken == nil {
		c.broken = err
	}
	c.mu.Unlock()
}

func closedError(cause error) error {
	if cause == ErrClosed {
		return ErrClosed
	}
	return fmt.Errorf("%w: %v", ErrClosed, cause)
}

func (c *Client) isClosing() bool {
	select {
	case <-c.closing:
		return true
	default:
		return false
	}
}

func (c *Client) notify(ctx context.Context, method string, params any) error {
	line, err := json.Marshal(outNotification{JSONRPC: "2.0", Method: method, Params: params})
	if err != nil {
		return fmt.Errorf("encode %s: %w", method, err)
	}
	return c.write(ctx, append(line, '\n'))
}

// notifyCancelled tells the server, best effort and briefly, that we gave up on id.
func (c *Client) notifyCancelled(id int64, reason string) {
	ctx, cancel := context.WithTimeout(context.Background(), FaultWait)
	defer cancel()
	_ = c.notify(ctx, "notifications/cancelled", map[string]any{"requestId": id, "reason": reason})
}

// pastDeadline makes a blocked pipe write return at once.
var pastDeadline = time.Unix(1, 0)

// write writes one whole line unless ctx ends or the client closes first.
func (c *Client) write(ctx context.Context, line []byte) error {
	select {
	case c.wsem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.closing:
		return ErrClosed
	}
	defer func() { <-c.wsem }()
	if ctx.Done() == nil {
		_, err := c.in.Write(line)
		return err
	}
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(fired)
		c.stdin.SetWriteDeadline(pastDeadline)
	})
	_, err := c.in.Write(line)
	if !stop() {
		<-fired
		c.stdin.SetWriteDeadline(time.Time{})
	}
	return err
}

// readLoop is the only reader of the server's stdout. It answers server requests
// itself, discards notifications and hands responses to the waiting request.
func (c *Client) readLoop() {
	defer close(c.dead)
	lr := newLineReader(c.out, c.opts.MaxMessage, 64<<10)
	for {
		line, owned, err := lr.next()
		var over *oversized
		switch {
		case err == nil:
			err = c.dispatch(line, owned)
		case errors.As(err, &over):
			err = c.oversizedMessage(over)
		}
		if err != nil {
			c.readErr = err
			c.breakWith(err)
			return
		}
	}
}

// dispatch handles one line from the server. The line is validated as JSON and split into
// its members in one pass (splitMessage); the values it hands on are known to be valid JSON.
// owned says the line is the caller's to give away: a result is then passed on in place,
// else copied.
func (c *Client) dispatch(line []byte, owned bool) error {
	if len(bytes.TrimSpace(line)) == 0 {
		return nil
	}
	m, ok := splitMessage(line)
	if !ok {
		return fmt.Errorf("not a JSON-RPC message: %s", snippet(line))
	}
	if string(m.jsonrpc) != `"2.0"` { // the usual spelling needs no decoding
		var version string
		if err := json.Unmarshal(m.jsonrpc, &version); err != nil || version != "2.0" {
			return fmt.Errorf("not a JSON-RPC 2.0 message: %s", snippet(line))
		}
	}
	id, hasID := m.id, m.hasID
	if m.hasMethod {
		method, ok := plainString(m.method)
		if !ok {
			if err := json.Unmarshal(m.method, &method); err != nil {
				return fmt.Errorf("method is not a string: %s", snippet(line))
			}
		}
		if !hasID {
			// A notification: only a change of the tool list is worth remembering.
			if method == "notifications/tools/list_changed" {
				c.toolsChanged.Store(true)
			}
			return nil
		}
		if !validRequestID(id) {
			return fmt.Errorf("request %q has an invalid id %s", method, snippet(id))
		}
		return c.answer(id, method)
	}
	if !hasID {
		return fmt.Errorf("message has neither method nor id: %s", snippet(line))
	}
	result, hasResult := m.result, m.hasResult
	rawErr, hasErr := m.err, m.hasErr
	if hasResult == hasErr {
		return fmt.Errorf("response %s must have exactly one of result and error", snippet(id))
	}
	var r response
	if hasErr {
		var e struct {
			Code    *json.Number    `json:"code"`
			Message *string         `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(rawErr, &e); err != nil || e.Code == nil || e.Message == nil {
			return fmt.Errorf("response %s has a malformed error: %s", snippet(id), snippet(rawErr))
		}
		code, err := e.Code.Int64()
		if err != nil {
			return fmt.Errorf("response %s has a non-integer error code %s", snippet(id), e.Code)
		}
		r.err = &RPCError{Code: code, Message: *e.Message, Data: e.Data}
	} else {
		r.result = result
		if !owned {
			r.result = bytes.Clone(result) // the line's buffer is read into again
		}
	}
	n, err := strconv.ParseInt(string(id), 10, 64)
	if err != nil {
		if r.err != nil && string(id) == "null" {
			return fmt.Errorf("server reported an error for an unknown request: %w", r.err)
		}
		return fmt.Errorf("response to unknown id %s", snippet(id))
	}
	c.mu.Lock()
	w, ok := c.pending[n]
	delete(c.pending, n)
	late := c.cancelled[n]
	delete(c.cancelled, n)
	c.mu.Unlock()
	if late {
		return nil // the answer to a call we cancelled: nobody waits for it
	}
	if !ok {
		return fmt.Errorf("response to unknown id %s", snippet(id))
	}
	w.ch <- r
	return nil
}

// plainString returns the JSON string v holds when it needs no decoding (no escapes, valid
// UTF-8); ok is false otherwise, and the caller decodes v.
func plainString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	body := v[1 : len(v)-1]
	if bytes.IndexByte(body, '\\') >= 0 || !utf8.Valid(body) {
		return "", false
	}
	return string(body), true
}

// validRequestID reports whether a server request's id is a string or a number.
func validRequestID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	switch b := id[0]; {
	case b == '"', b == '-', b >= '0' && b <= '9':
		return true
	}
	return false
}

// answer replies to a server request at once: ping with {}, anything else -32601.
// The id is echoed as sent (it is valid JSON without line breaks).
func (c *Client) answer(id json.RawMessage, method string) error {
	line := make([]byte, 0, 128)
	line = append(line, `{"jsonrpc":"2.0","id":`...)
	line = append(line, id...)
	if method == "ping" {
		line = append(line, `,"result":{}}`...)
	} else {
		line = append(line, `,"error":{"code":-32601,"message":"Method not found"}}`...)
	}
	line = append(line, '\n')
	err := c.write(context.Background(), line)
	if errors.Is(err, ErrClosed) {
		return err
	}
	if err != nil {
		return fmt.Errorf("answer %q: %w", method, err)
	}
	return nil
}

// snippet quotes the start of b for an error message.
func snippet(b []byte) string {
	const n = 64
	if len(b) > n {
		return strconv.Quote(string(b[:n])) + "..."
	}
	return strconv.Quote(string(b))
}
