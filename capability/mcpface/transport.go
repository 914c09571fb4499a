package mcpface

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxMessage is the largest line the face reads (SPEC 13): a longer one is answered -32700
// and skipped, and the session goes on.
const MaxMessage = 64 << 20

// LineTransport is the face's stdio transport: newline-delimited JSON-RPC as the SDK's
// StdioTransport reads it, except that a line that is not a JSON-RPC message, or is longer
// than Max bytes, is answered with a parse error (-32700, id null) and the session goes on;
// go-sdk v1.8.0's transport closes the session instead. The end of input ends the session,
// and calls still running are cancelled at their providers: closing stdin is how an MCP
// client shuts a stdio server down.
type LineTransport struct {
	In  io.Reader
	Out io.Writer
	Max int // 0: MaxMessage
}

// Connect implements mcp.Transport.
func (t *LineTransport) Connect(context.Context) (mcp.Connection, error) {
	max := t.Max
	if max <= 0 {
		max = MaxMessage
	}
	c := &lineConn{out: t.Out, incoming: make(chan lineOrErr), closed: make(chan struct{})}
	go c.readLoop(t.In, max)
	return c, nil
}

type lineOrErr struct {
	msg jsonrpc.Message
	err error
}

type lineConn struct {
	writeMu  sync.Mutex
	out      io.Writer
	incoming chan lineOrErr

	closeOnce sync.Once
	closed    chan struct{}
}

// readLoop reads lines until EOF or a read error, answering bad ones itself. It ends when
// the input ends or the connection is closed and its reader returns.
func (c *lineConn) readLoop(in io.Reader, max int) {
	r := bufio.NewReaderSize(in, 64<<10)
	var line []byte
	for {
		frag, err := r.ReadSlice('\n')
		tooLong := false
		line = append(line[:0], frag...)
		for errors.Is(err, bufio.ErrBufferFull) {
			if len(line) > max {
				tooLong = true
				line = line[:0] // keep reading to the end of the line, keeping nothing
			}
			frag, err = r.ReadSlice('\n')
			line = append(line, frag...)
		}
		if len(line) > max {
			tooLong = true
		}
		if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 || tooLong {
			var msg jsonrpc.Message
			var derr error
			if tooLong {
				derr = fmt.Errorf("message over %d bytes", max)
			} else {
				msg, derr = decodeMessage(trimmed)
			}
			if derr != nil {
				if werr := c.writeParseError(derr); werr != nil {
					c.deliver(lineOrErr{err: werr})
					return
				}
			} else if !c.deliver(lineOrErr{msg: msg}) {
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.EOF
			}
			c.deliver(lineOrErr{err: err})
			return
		}
	}
}

func (c *lineConn) deliver(m lineOrErr) bool {
	select {
	case c.incoming <- m:
		return true
	case <-c.closed:
		return false
	}
}

func (c *lineConn) writeParseError(cause error) error {
	// Written by hand: the SDK's encoder leaves out a null id, which JSON-RPC requires here.
	msg, err := json.Marshal("parse error: " + cause.Error())
	if err != nil {
		return err
	}
	return c.writeLine(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":null,"error":{"code":%d,"message":%s}}`, jsonrpc.CodeParseError, msg))
}

func (c *lineConn) writeLine(b []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	select {
	case <-c.closed:
		return io.ErrClosedPipe
	default:
	}
	_, err := c.out.Write(append(b, '\n'))
	return err
}

// Read implements mcp.Connection.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case m := <-c.incoming:
		return m.msg, m.err
	case <-c.closed:
		return nil, io.EOF
	}
}

// Write implements mcp.Connection.
func (c *lineConn) Write(_ context.Context, msg jsonrpc.Message) error {
	b, err := encodeMessage(msg)
	if err != nil {
		return err
	}
	return c.writeLine(b)
}

// encodeMessage is jsonrpc.EncodeMessage, except that a result is written as the SDK gave it
// (its encoding/json output: compact, valid, on one line), where EncodeMessage would scan and
// copy it once more; a search page's result is kilobytes long.
func encodeMessage(msg jsonrpc.Message) ([]byte, error) {
	r, ok := msg.(*jsonrpc.Response)
	if !ok || r.Error != nil || len(r.Result) == 0 || bytes.IndexByte(r.Result, '\n') >= 0 {
		return jsonrpc.EncodeMessage(msg)
	}
	var id []byte
	switch v := r.ID.Raw().(type) {
	case int64:
		id = strconv.AppendInt(nil, v, 10)
	case string:
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false) // as the SDK writes its messages
		if err := enc.Encode(v); err != nil {
			return nil, err
		}
		id = bytes.TrimRight(buf.Bytes(), "\n")
	default:
		return jsonrpc.EncodeMessage(msg)
	}
	b := make([]byte, 0, len(`{"jsonrpc":"2.0","id":,"result":}`)+len(id)+len(r.Result))
	b = append(append(append(b, `{"jsonrpc":"2.0","id":`...), id...), `,"result":`...)
	return append(append(b, r.Result...), '}'), nil
}

// Close implements mcp.Connection.
func (c *lineConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// SessionID implements mcp.Connection; stdio has none.
func (c *lineConn) SessionID() string { return "" }
