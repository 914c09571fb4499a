package mcpstdio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Start launches the server in its own process group and completes initialize +
// notifications/initialized before ctx ends. On any error the process is gone, and
// the error carries the server's stderr tail (see StderrOf).
func Start(ctx context.Context, cmd Command, opts Options) (*Client, error) {
	c, err := launch(cmd, opts.withDefaults())
	if err != nil {
		return nil, err
	}
	if err := c.initialize(ctx); err != nil {
		c.breakWith(err) // a server that failed its handshake gets no long grace
		c.Close()
		return nil, &tailError{err: err, tail: c.StderrTail()}
	}
	return c, nil
}

func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.MaxMessage, DefaultMaxMessage)
	def(&o.MaxPages, DefaultMaxPages)
	def(&o.MaxTools, DefaultMaxTools)
	def(&o.StderrTail, DefaultStderrTail)
	if o.StdinWait <= 0 {
		o.StdinWait = DefaultStdinWait
	}
	if o.TermWait <= 0 {
		o.TermWait = DefaultTermWait
	}
	if o.ClientName == "" {
		o.ClientName = "mcpstdio"
	}
	if o.ClientVersion == "" {
		o.ClientVersion = "0"
	}
	return o
}

type implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

func (c *Client) initialize(ctx context.Context) error {
	params := struct {
		ProtocolVersion string         `json:"protocolVersion"`
		Capabilities    struct{}       `json:"capabilities"`
		ClientInfo      implementation `json:"clientInfo"`
	}{
		ProtocolVersion: ProtocolVersion,
		ClientInfo:      implementation{Name: c.opts.ClientName, Version: c.opts.ClientVersion},
	}
	raw, err := c.request(ctx, StageInitialize, "initialize", params)
	if err != nil {
		return err
	}
	res, err := object(raw)
	if err != nil {
		return &ProtocolError{Stage: StageInitialize, Err: err}
	}
	var offered string
	if err := json.Unmarshal(nonNull(res["protocolVersion"]), &offered); err != nil {
		return &ProtocolError{Stage: StageInitialize, Err: errors.New("result has no protocolVersion string")}
	}
	if offered != ProtocolVersion {
		return &VersionError{Offered: offered}
	}
	if info, ok := res["serverInfo"]; ok {
		var impl struct {
			Name    *string `json:"name"`
			Version *string `json:"version"`
		}
		if err := json.Unmarshal(info, &impl); err != nil {
			return &ProtocolError{Stage: StageInitialize, Err: fmt.Errorf("malformed serverInfo: %w", err)}
		}
		if impl.Name != nil {
			c.serverName = *impl.Name
		}
		if impl.Version != nil {
			c.serverVersion = *impl.Version
		}
	}
	if err := c.notify(ctx, "notifications/initialized", nil); err != nil {
		if ctx.Err() != nil {
			return ctxError(ctx, StageInitialize)
		}
		return &ProtocolError{Stage: StageInitialize, Err: fmt.Errorf("send notifications/initialized: %w", err)}
	}
	return nil
}

// ServerInfo returns the name and version the server gave in initialize.
func (c *Client) ServerInfo() (name, version string) { return c.serverName, c.serverVersion }

// ListTools returns every tool, following nextCursor within Options' limits on pages
// and tools. A cursor seen before is a protocol error. ctx bounds the whole listing.
func (c *Client) ListTools(ctx context.Context) ([]Tool, error) {
	c.toolsChanged.Store(false)
	var (
		tools  []Tool
		cursor string
		seen   = map[string]bool{}
	)
	for page := 1; ; page++ {
		var params any
		if cursor != "" {
			params = map[string]string{"cursor": cursor}
		}
		raw, err := c.request(ctx, StageList, "tools/list", params)
		if err != nil {
			return nil, err
		}
		next, err := c.decodePage(raw, &tools)
		if err != nil {
			return nil, c.fault(StageList, err)
		}
		if next == "" {
			return tools, nil
		}
		if seen[next] {
			return nil, c.fault(StageList, fmt.Errorf("cursor %s repeated", snippet([]byte(next))))
		}
		if page >= c.opts.MaxPages {
			return nil, c.fault(StageList, fmt.Errorf("more than %d pages", c.opts.MaxPages))
		}
		seen[next] = true
		cursor = next
	}
}

// fault makes a protocol error at stage and leaves the client unusable: a server that
// broke the protocol is not trusted with another request.
func (c *Client) fault(stage string, err error) error {
	e := &ProtocolError{Stage: stage, Err: err}
	c.breakWith(e)
	return e
}

// CallTool calls a tool with args (a JSON object, or nil for none) and returns the
// whole result. A JSON-RPC error answer is an *RPCError and the client stays usable;
// a result with isError is a result, not an error.
func (c *Client) CallTool(ctx context.Context, name string, args json.RawMessage) (*CallResult, error) {
	return c.callTool(ctx, name, args, true)
}

// CallToolRaw is CallTool for a holder that passes the result on as the server sent it (the
// keeper, the broker): the result is judged exactly as CallTool judges it, a bad one a fault
// that breaks the client the same way, but only Raw and IsError are filled in: its content
// items are not decoded (their text copied) for nobody to read.
func (c *Client) CallToolRaw(ctx context.Context, name string, args json.RawMessage) (*CallResult, error) {
	return c.callTool(ctx, name, args, false)
}

func (c *Client) callTool(ctx context.Context, name string, args json.RawMessage, full bool) (*CallResult, error) {
	params := callParams{Name: name, Arguments: args}
	if len(args) > 0 && !json.Valid(args) {
		return nil, fmt.Errorf("%s: arguments are not valid JSON", StageCall)
	}
	raw, err := c.request(ctx, StageCall, "tools/call", params)
	if err != nil {
		return nil, err
	}
	res, err := readResult(raw, full)
	if err != nil {
		return nil, c.fault(StageCall, err)
	}
	return res, nil
}

// DecodeResult reads a tools/call result object as CallTool does: a process that is handed a
// result another client received (the turn's keeper) judges it the same way.
func DecodeResult(raw json.RawMessage) (*CallResult, error) {
	if !json.Valid(raw) {
		return nil, fmt.Errorf("not JSON: %s", snippet(raw))
	}
	return decodeResult(raw)
}

// decodeResult reads a result that is valid JSON (dispatch validated its message) in one walk,
// as decodePage reads a page: keys matched exactly after unescaping, the last of a repeated key
// winning, values kept as the bytes the server sent.
func decodeResult(raw json.RawMessage) (*CallResult, error) { return readResult(raw, true) }

// readResult is decodeResult; with full false, the result is judged the same way, with the same
// errors, but its content items are not kept (a holder passes only Raw on).
func readResult(raw json.RawMessage, full bool) (*CallResult, error) {
	var isError, content json.RawMessage
	res := &CallResult{Raw: raw}
	_, err := Members(raw, SkipSpace(raw, 0), func(key, val []byte) {
		switch string(key) {
		case "structuredContent":
			res.StructuredContent = val
		case "_meta":
			res.Meta = val
		case "isError":
			isError = val
		case "content":
			content = val
		}
	})
	if err != nil {
		return nil, fmt.Errorf("not a JSON object: %s", snippet(raw))
	}
	res.StructuredContent, res.Meta = nonNull(res.StructuredContent), nonNull(res.Meta)
	switch v := nonNull(isError); {
	case v == nil:
	case string(v) == "true":
		res.IsError = true
	case string(v) != "false":
		return nil, fmt.Errorf("isError is not a boolean: %s", snippet(v))
	}
	v := nonNull(content)
	if v == nil {
		return res, nil
	}
	if v[0] != '[' {
		return nil, fmt.Errorf("content is not an array: %s", snippet(v))
	}
	if !full {
		n := 0
		err = elements(v, func(i int) (int, error) {
			end, err := Members(v, i, func(key, val []byte) {})
			if err != nil {
				return 0, contentItemError(v, i, n)
			}
			n++
			return end, nil
		})
		if err != nil {
			return nil, err
		}
		return res, nil
	}
	res.Content = []Content{}
	err = elements(v, func(i int) (int, error) {
		item := Content{}
		end, err := Members(v, i, func(key, val []byte) {
			switch string(key) {
			case "type":
				item.Type = stringValue(val)
			case "text":
				item.Text = stringValue(val)
			case "mimeType":
				item.MimeType = stringValue(val)
			}
		})
		if err != nil {
			return 0, contentItemError(v, i, len(res.Content))
		}
		item.Raw = v[i:end]
		res.Content = append(res.Content, item)
		return end, nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// contentItemError says that content item n, at v[i:], is not a JSON object.
func contentItemError(v []byte, i, n int) error {
	e, serr := skipValue(v, i)
	if serr != nil {
		e = len(v)
	}
	return fmt.Errorf("content item %d: not a JSON object: %s", n, snippet(v[i:e]))
}

// object decodes a JSON object into its members, keys matched exactly.
func object(raw json.RawMessage) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, fmt.Errorf("not a JSON object: %s", snippet(raw))
	}
	return m, nil
}

func nonNull(v json.RawMessage) json.RawMessage {
	if len(v) == 0 || string(v) == "null" {
		return nil
	}
	return v
}

// ToolsChanged reports whether the server announced (notifications/tools/list_changed) that its
// tools changed since the last ListTools began.
func (c *Client) ToolsChanged() bool { return c.toolsChanged.Load() }

// Exited reports whether the server has exited or closed its stdout: the client cannot be
// used again. A caller that keeps servers between uses (the turn's keeper) starts a new one.
func (c *Client) Exited() bool {
	select {
	case <-c.dead:
		return true
	case <-c.exited:
		return true
	default:
		return hasExited(c.pgid) // before the goroutine that waits for it has learnt it
	}
}
