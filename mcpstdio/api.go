// Package mcpstdio is a small, strict client for MCP servers spoken to over stdio
// (protocol 2025-06-18): initialize, tools/list and tools/call, bounded in time and size.
package mcpstdio

// CONTRACT (agreed between packages; the implementer may add, not change):
//
//	const ProtocolVersion = "2025-06-18"
//
//	// Env is a provider's whole environment. Its zero value is invalid: Start refuses it,
//	// so a nil environment cannot be passed by accident.
//	type Env struct{ /* unexported */ }
//	func NewEnv(vars []string) Env          // "KEY=value" pairs, used exactly as given
//	func (e Env) Vars() []string
//
//	type Command struct {
//		Path string   // absolute path of the program (never run through a shell)
//		Args []string // arguments after the program name
//		Dir  string   // working directory
//		Env  Env
//	}
//
//	type Options struct {
//		ClientName, ClientVersion string // sent in initialize's clientInfo
//		MaxMessage int                  // bytes per message; 0 means 8 MiB
//		MaxPages   int                  // 0 means 1000
//		MaxTools   int                  // 0 means 10000
//		StderrTail int                  // bytes of stderr kept; 0 means 64 KiB
//	}
//
//	// Start launches the server in its own process group and completes initialize +
//	// notifications/initialized before ctx ends. On any error the process is gone.
//	func Start(ctx context.Context, cmd Command, opts Options) (*Client, error)
//	func (c *Client) ServerInfo() (name, version string)
//	func (c *Client) ListTools(ctx context.Context) ([]Tool, error) // follows nextCursor
//	func (c *Client) CallTool(ctx context.Context, name string, args json.RawMessage) (*CallResult, error)
//	func (c *Client) StderrTail() string // the last bytes of the server's stderr (bounded)
//	func (c *Client) Close() error       // stdin close, ~1s, SIGTERM group, ~1s, SIGKILL group; idempotent
//
//	type Tool struct {
//		Name         string
//		Description  string
//		InputSchema  json.RawMessage // as sent (may be absent/null/non-object: caller judges)
//		OutputSchema json.RawMessage // nil when absent
//		Raw          json.RawMessage // the whole tool object as sent
//	}
//	type CallResult struct {
//		Content           []Content
//		IsError           bool
//		StructuredContent json.RawMessage // nil when absent
//		Meta              json.RawMessage // "_meta", nil when absent
//		Raw               json.RawMessage // the whole result object
//	}
//	type Content struct {
//		Type     string // text, image, audio, resource_link, resource, ...
//		Text     string // for text
//		MimeType string
//		Raw      json.RawMessage // the whole item
//	}
//
//	// Errors: callers tell them apart with errors.Is / errors.As.
//	var ErrStart, ErrVersion, ErrProtocol, ErrTimeout, ErrClosed error // sentinels
//	type VersionError struct{ Offered string }            // Is(ErrVersion)
//	type ProtocolError struct{ Stage string; Err error }  // Is(ErrProtocol); Stage names the step
//	type RPCError struct{ Code int64; Message string; Data json.RawMessage } // a JSON-RPC error answer
//	// A timeout error Is(ErrTimeout) and also carries the stage. After ErrProtocol, ErrTimeout
//	// or transport EOF the client is unusable (later calls: ErrClosed). After an RPCError it stays usable.
