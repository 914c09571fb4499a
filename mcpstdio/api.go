// Package mcpstdio is a small, strict client for MCP servers spoken to over stdio
// (protocol 2025-06-18): initialize, tools/list and tools/call, bounded in time and size.
// A shared leaf, layer 0 (docs/layout.md): it imports no package of ours, and no MCP SDK.
//
// What the client does with what a server sends:
//   - a response (no "method") must carry one of our integer ids and exactly one of
//     "result" and "error"; anything else is a protocol error;
//   - a request (a "method" and a string or number id, which may equal one of ours) is
//     answered at once by the reading goroutine: "ping" with {}, everything else with
//     -32601, whether or not a call is in flight;
//   - a notification (a "method" without id) is discarded;
//   - unknown fields are ignored.
//
// A line over the size limit is read through and discarded: when it answers a tools/call,
// that call fails with a *TooLargeError and the client stays usable. Any other line over the
// limit, a line that is not JSON-RPC 2.0, end of file while a request waits, a deadline or a
// cancelled context leave the client unusable: later requests fail with ErrClosed. The
// exception is a tools/call whose context is cancelled (not timed out): the server is sent
// notifications/cancelled, its late answer is discarded, and the client stays usable. Nothing
// is ever sent twice. A Client must be closed.
package mcpstdio

import (
	"encoding/json"
	"slices"
	"syscall"
	"time"
)

// ProtocolVersion is the only MCP protocol version the client speaks and accepts.
const ProtocolVersion = "2025-06-18"

// Defaults for the zero values of Options.
const (
	DefaultMaxMessage = 64 << 20
	DefaultMaxPages   = 1000
	DefaultMaxTools   = 10000
	DefaultStderrTail = 64 << 10
	DefaultStdinWait  = time.Second
	DefaultTermWait   = time.Second
)

// Env is a provider's whole environment. Its zero value is invalid: Start refuses it,
// so a nil environment cannot be passed by accident.
type Env struct {
	vars []string
	set  bool
}

// NewEnv returns the environment made of vars ("KEY=value" pairs), used exactly as given.
// NewEnv(nil) is a valid, empty environment.
func NewEnv(vars []string) Env {
	return Env{vars: slices.Clone(vars), set: true}
}

// Vars returns a copy of the pairs.
func (e Env) Vars() []string { return slices.Clone(e.vars) }

// Command says how to run a provider. It is never run through a shell.
type Command struct {
	Path string   // absolute path of the program
	Args []string // arguments after the program name
	Dir  string   // working directory; "" means the caller's
	Env  Env
}

// Options bound the client. Zero values mean the defaults above.
type Options struct {
	ClientName, ClientVersion string // sent in initialize's clientInfo
	MaxMessage                int    // bytes per message; 0 means 64 MiB
	MaxPages                  int    // tools/list pages; 0 means 1000
	MaxTools                  int    // tools in all pages; 0 means 10000
	StderrTail                int    // bytes of stderr kept; 0 means 64 KiB

	// StdinWait is how long Close waits for the server to exit after closing its stdin,
	// TermWait how long after SIGTERM, before SIGKILL. 0 means 1 s each. After a fault
	// (timeout, protocol error, end of file) each is at most FaultWait.
	StdinWait, TermWait time.Duration

	// CallTimeoutKeeps: a tools/call whose deadline passes is given up like a cancelled one
	// (notifications/cancelled, its late answer discarded) and the client stays usable; the
	// caller counts timeouts itself (the broker stops a server after three in a row). Without
	// it a timeout leaves the client unusable.
	CallTimeoutKeeps bool
	// Spawn, when set, forks and execs the server in place of syscall.ForkExec, with the same
	// arguments: the broker runs it on a thread of its own and sets a parent-death signal.
	Spawn func(path string, argv []string, attr *syscall.ProcAttr) (int, error)
}

// FaultWait caps each of Close's waits once the server has misbehaved: a server that
// missed a deadline or broke the protocol gets no long grace.
const FaultWait = 100 * time.Millisecond

// Tool is one entry of tools/list.
type Tool struct {
	Name         string          // "" when absent or not a string: the caller judges
	Title        string          // "" when absent or not a string
	Description  string          // "" when absent or not a string
	InputSchema  json.RawMessage // as sent (may be absent/null/non-object: caller judges)
	OutputSchema json.RawMessage // nil when absent
	Annotations  json.RawMessage // nil when absent or null; never trusted (SPEC 2.3), only locked (SPEC 15)
	Raw          json.RawMessage // the whole tool object as sent
}

// CallResult is the whole result of tools/call.
type CallResult struct {
	Content           []Content
	IsError           bool
	StructuredContent json.RawMessage // nil when absent or null
	Meta              json.RawMessage // "_meta", nil when absent or null
	Raw               json.RawMessage // the whole result object
}

// Content is one item of a result's content.
type Content struct {
	Type     string // text, image, audio, resource_link, resource, ...
	Text     string // for text
	MimeType string
	Raw      json.RawMessage // the whole item
}
