package keeper

// The keeper's protocol (SPEC 12): JSON lines over the turn's unix socket, one connection per
// provider per answering process. A client sends hello, then start (of one provider, with its
// initialize), then list and call requests, one at a time; while a call waits it may send
// cancel, or go away, and the keeper cancels the call (notifications/cancelled). stop ends the
// keeper (spear-shell --end-turn). Nothing else is served: every check, refusal, framing and
// capability record stays with the answering process, which gets the provider's tools and raw
// tools/call results as the provider sent them.

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"syscall"

	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/mcpstdio"
)

// protocol changes whenever a message changes: a client and a keeper of different
// builds then do not talk.
const protocol = 1

// Names in the turn's state directory.
const (
	socketName = "keeper.sock"
	lockName   = "keeper.lock"
)

// socketPath is where the keeper of the turn whose state is in dir listens.
func socketPath(dir string) string {
	return filepath.Join(dir, socketName)
}

// maxSocketPath is the longest socket path: sun_path holds 108 bytes, its NUL included.
const maxSocketPath = 107

// Request ops.
const (
	opHello  = "hello"
	opStart  = "start"
	opList   = "list"
	opCall   = "call"
	opCancel = "cancel"
	opStop   = "stop"
)

type request struct {
	Op string `json:"op"`

	// hello: who asks; the keeper serves only its own turn, manifest and configuration.
	Protocol int    `json:"protocol,omitempty"`
	Turn     string `json:"turn,omitempty"`
	Key      string `json:"key,omitempty"`

	Provider  string          `json:"provider,omitempty"`  // start
	Name      string          `json:"name,omitempty"`      // call
	Arguments json.RawMessage `json:"arguments,omitempty"` // call
	Reason    string          `json:"reason,omitempty"`    // stop
}

type response struct {
	Err    *wireError      `json:"err,omitempty"`
	Tools  []wireTool      `json:"tools,omitempty"`  // list
	Result json.RawMessage `json:"result,omitempty"` // call: the result object as the provider sent it
	Tail   string          `json:"tail,omitempty"`   // the provider's stderr tail, after a failure
}

type wireTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Input       json.RawMessage `json:"input,omitempty"`
	Output      json.RawMessage `json:"output,omitempty"`
}

// wireError carries a provider failure (or the keeper's refusal) with what the answering
// process needs to judge and record it exactly as if it had happened there: the message, the
// stage, the stderr tail and which sentinel errors it matches.
type wireError struct {
	Msg      string                  `json:"msg"`
	Stage    string                  `json:"stage,omitempty"`
	Tail     string                  `json:"tail,omitempty"`
	Is       []string                `json:"is,omitempty"`
	Offered  *string                 `json:"offered,omitempty"` // a *mcpstdio.VersionError
	RPC      *mcpstdio.RPCError      `json:"rpc,omitempty"`
	TooLarge *mcpstdio.TooLargeError `json:"too_large,omitempty"` // a result over the limit: the provider stays
	Keeper   bool                    `json:"keeper,omitempty"`    // the keeper refused (not a provider failure)
}

// sentinels are the errors the answering process tells apart (capability's failReason and call).
var sentinels = []struct {
	name string
	err  error
}{
	{"start", mcpstdio.ErrStart},
	{"version", mcpstdio.ErrVersion},
	{"protocol", mcpstdio.ErrProtocol},
	{"timeout", mcpstdio.ErrTimeout},
	{"closed", mcpstdio.ErrClosed},
	{"deadline", context.DeadlineExceeded},
	{"canceled", context.Canceled},
	{"unexpected-eof", io.ErrUnexpectedEOF},
	{"eof", io.EOF},
	{"epipe", syscall.EPIPE},
}

func toWire(err error, tail string) *wireError {
	w := &wireError{Msg: err.Error(), Stage: mcpstdio.StageOf(err), Tail: tail}
	if t := mcpstdio.StderrOf(err); t != "" {
		w.Tail = t
	}
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			w.Is = append(w.Is, s.name)
		}
	}
	var ve *mcpstdio.VersionError
	if errors.As(err, &ve) {
		w.Offered = &ve.Offered
	}
	var re *mcpstdio.RPCError
	if errors.As(err, &re) {
		w.RPC = re
	}
	var tl *mcpstdio.TooLargeError
	if errors.As(err, &tl) {
		w.TooLarge = tl
	}
	return w
}

// err is the failure w carries, read back as the error it was (a *providers.Failure).
func (w *wireError) err() error {
	e := &providers.Failure{Msg: w.Msg, Stage: w.Stage, Tail: w.Tail}
	for _, name := range w.Is {
		for _, s := range sentinels {
			if s.name == name {
				e.Is = append(e.Is, s.err)
			}
		}
	}
	if w.Offered != nil {
		e.Is = append(e.Is, &mcpstdio.VersionError{Offered: *w.Offered})
	}
	if w.RPC != nil {
		e.Is = append(e.Is, w.RPC)
	}
	if w.TooLarge != nil {
		e.Is = append(e.Is, w.TooLarge)
	}
	return e
}

func toWireTools(tools []mcpstdio.Tool) []wireTool {
	out := make([]wireTool, len(tools))
	for i, t := range tools {
		out[i] = wireTool{Name: t.Name, Description: t.Description, Input: t.InputSchema, Output: t.OutputSchema}
	}
	return out
}

func fromWireTools(tools []wireTool) []mcpstdio.Tool {
	out := make([]mcpstdio.Tool, len(tools))
	for i, t := range tools {
		out[i] = mcpstdio.Tool{Name: t.Name, Description: t.Description, InputSchema: t.Input, OutputSchema: t.Output}
	}
	return out
}
