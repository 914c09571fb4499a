// Package provlink is the wire between an answering process and a process that holds providers
// for it (SPEC 12's keeper, SPEC 14's broker): JSON lines over a unix socket, one connection per
// provider per answering process. A client sends hello, then start (of one provider, with its
// initialize), then list, tools and call requests, one at a time; while a call waits it may
// send cancel, or go away, and the holder cancels the call (notifications/cancelled). Nothing
// else is served: every check, refusal, framing and capability record stays with the answering
// process, which gets the provider's tools and raw tools/call results as the provider sent them.
// It holds the messages, the failures carried across them, the client side of one provider's
// connection (Conn) and the reading of a connection's requests (ReadRequests). Layer 3: it
// imports capability/providers, policy and mcpstdio, never the keeper, the broker or capability.
//
// A call may name the listing (its hash) that the caller checked the tool's definition against:
// the holder then sends it only if the provider's listing, refreshed exactly as tools refreshes
// it, is still that listing, and otherwise answers moved with the tool's definition in the new
// one, for the caller to judge again. The holder compares two hashes; it decides nothing.
//
// tools is list cut to the names asked: for each name, how many times the provider's last
// listing holds it and its first definition there (as list would have carried it), with the
// listing's hash and age. The holder lists again exactly when list would (a change announced,
// or providers.RelistAfter passed), and judges nothing: a name listed twice, a name outside the
// charset, a schema that is not an object come back as listed, for the answering process to
// judge as it judges a whole listing.
package provlink

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"syscall"

	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/mcpstdio"
	"github.com/spear-shell/spear-shell/policy"
)

// ErrDown is a held provider that is down (the broker's upstream restarting or held down for
// flapping): the failure's message says why.
var ErrDown = errors.New("the provider's server is down")

// MaxNames bounds the names one tools request may ask (a describe of many ids asks them all);
// an answer that needs more lists the provider whole.
const MaxNames = 4096

// MaxSocketPath is the longest socket path: sun_path holds 108 bytes, its NUL included.
const MaxSocketPath = 107

// Request ops. hello, start, list, tools, call and cancel are both holders'; stop ends the
// keeper (--end-turn) or the broker (--broker-stop); status, drain and release are the broker's.
const (
	OpHello   = "hello"
	OpStart   = "start"
	OpList    = "list"
	OpTools   = "tools"
	OpCall    = "call"
	OpCancel  = "cancel"
	OpStop    = "stop"
	OpStatus  = "status"
	OpDrain   = "drain"
	OpRelease = "release"
)

type Request struct {
	Op string `json:"op"`

	// hello: who asks; the keeper serves only its own turn, manifest and configuration.
	Protocol int    `json:"protocol,omitempty"`
	Turn     string `json:"turn,omitempty"`
	Key      string `json:"key,omitempty"`
	// Ending: the hello of --end-turn, which reaches every keeper of the turn, whatever
	// configuration (Key) it serves; such a connection is served stop and nothing else.
	Ending bool `json:"ending,omitempty"`

	Provider string `json:"provider,omitempty"` // start; release
	// start at the broker: the share key (the caller's pinned project for share project, ""
	// for all) and the entry's launch-key hash, both checked against the configuration.
	ShareKey  string          `json:"share_key,omitempty"`
	Launch    string          `json:"launch,omitempty"`
	Name      string          `json:"name,omitempty"`      // call
	Names     []string        `json:"names,omitempty"`     // tools
	Arguments json.RawMessage `json:"arguments,omitempty"` // call
	// call: the hash of the listing the caller's definitions came from (a tools answer); the
	// call is sent only while the provider's listing, refreshed as tools would refresh it, is
	// still that one. "" sends it unconditionally.
	Listing string `json:"listing,omitempty"`
	// call: the caller's deadline for it; the broker applies it (its own timeout counts toward
	// stopping the upstream, a caller's cancel never does). The keeper uses its entry's.
	TimeoutMS int64  `json:"timeout_ms,omitempty"`
	Reason    string `json:"reason,omitempty"` // stop
	// hello at the broker: a foreground broker asks the one running to drain (takeover).
	Foreground bool `json:"foreground,omitempty"`

	// Ctx is a call's context: cancelled when the client cancels or goes away (ReadRequests).
	Ctx context.Context `json:"-"`
}

// Response is one answer line.
type Response struct {
	Err    *WireError      `json:"err,omitempty"`
	Tools  []WireTool      `json:"tools,omitempty"`  // list
	Defs   []WireDef       `json:"defs,omitempty"`   // tools: one per name asked, in the order asked
	Hash   string          `json:"hash,omitempty"`   // tools: the listing's hash (providers.ListingHash)
	AgeMS  int64           `json:"age_ms,omitempty"` // tools: how old the listing is
	Result json.RawMessage `json:"result,omitempty"` // call: the result object as the provider sent it
	// call with a listing that is no longer the provider's: the call was not sent; Defs holds
	// the called name as the new listing holds it, Hash and AgeMS say which listing that is.
	Moved bool   `json:"moved,omitempty"`
	Tail  string `json:"tail,omitempty"` // the provider's stderr tail, after a failure
	// start at the broker: the name the server gave in initialize's serverInfo (--lock's).
	Server string `json:"server,omitempty"`
	// status, and hello at the broker: the broker's state (its own pid and protocol, upstreams).
	Broker *BrokerStatus `json:"broker,omitempty"`
}

// BrokerStatus is what the broker says of itself (hello, status).
type BrokerStatus struct {
	Pid        int        `json:"pid"`
	Protocol   int        `json:"protocol"`
	Foreground bool       `json:"foreground,omitempty"`
	Upstreams  []Upstream `json:"upstreams,omitempty"` // status only
}

// Upstream is one server the broker holds, for --check: never its environment.
type Upstream struct {
	Provider string `json:"provider"`
	ShareKey string `json:"share_key"`
	State    string `json:"state"` // "up", "restarting", "held", "starting", "stopping"
	Pid      int    `json:"pid,omitempty"`
	Starts   int    `json:"starts"`
	Why      string `json:"why,omitempty"`     // restarting or held: what the turn is told
	Failure  string `json:"failure,omitempty"` // why it last stopped (stage: reason), redacted
}

// EncodeResponse is r as one line. A call's result alone, the answer to nearly every call, is
// written around the provider's bytes as mcpstdio passed them on (one JSON value, valid, on
// one line), which json.Marshal would scan and compact once more.
func EncodeResponse(r Response) ([]byte, error) {
	if r.Result != nil && reflect.DeepEqual(r, Response{Result: r.Result}) {
		line := make([]byte, 0, len(resultPrefix)+len(r.Result)+2)
		return append(append(append(line, resultPrefix...), r.Result...), '}', '\n'), nil
	}
	line, err := json.Marshal(r)
	return append(line, '\n'), err
}

const resultPrefix = `{"result":`

// DecodeResponse reads one answer line. A call's result alone (EncodeResponse) is taken from
// between its first key and its closing brace once those bytes are one valid JSON value;
// anything else is decoded whole.
func DecodeResponse(line []byte) (Response, error) {
	var rep Response
	if r, ok := bytes.CutPrefix(line, []byte(resultPrefix)); ok {
		if r, ok = bytes.CutSuffix(bytes.TrimRight(r, "\n"), []byte("}")); ok && json.Valid(r) {
			rep.Result = r
			return rep, nil
		}
	}
	if err := json.Unmarshal(line, &rep); err != nil {
		return rep, fmt.Errorf("a reply that is not JSON: %w", err)
	}
	return rep, nil
}

type WireTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	Input       json.RawMessage `json:"input,omitempty"`
	Output      json.RawMessage `json:"output,omitempty"`
	Annotations json.RawMessage `json:"annotations,omitempty"` // for the lock's definitions (SPEC 15)
}

// WireDef is one name asked of the last listing: how many of the listing's tools carry it
// and the first of them (nil when none does).
type WireDef struct {
	Name  string    `json:"name"`
	Count int       `json:"count"`
	Tool  *WireTool `json:"tool,omitempty"`
}

// WireError carries a provider failure (or the keeper's refusal) with what the answering
// process needs to judge and record it exactly as if it had happened there: the message, the
// stage, the stderr tail and which sentinel errors it matches.
type WireError struct {
	Msg      string                  `json:"msg"`
	Stage    string                  `json:"stage,omitempty"`
	Tail     string                  `json:"tail,omitempty"`
	Is       []string                `json:"is,omitempty"`
	Offered  *string                 `json:"offered,omitempty"` // a *mcpstdio.VersionError
	RPC      *mcpstdio.RPCError      `json:"rpc,omitempty"`
	TooLarge *mcpstdio.TooLargeError `json:"too_large,omitempty"` // a result over the limit: the provider stays
	Keeper   bool                    `json:"keeper,omitempty"`    // the holder refused (not a provider failure)
	// Down: the broker holds the provider but its upstream is down (restarting, held down);
	// Msg says why, as the turn is told.
	Down bool `json:"down,omitempty"`
}

// Redacted returns a copy of e (nil for nil) with every string a provider could have put in
// it passed through str and the JSON-RPC error's data through js: a holder passes on nothing
// of the secrets it started a server with (SPEC 7, 14).
func (e *WireError) Redacted(str func(string) string, js func(json.RawMessage) json.RawMessage) *WireError {
	if e == nil {
		return nil
	}
	c := *e
	c.Msg, c.Tail = str(c.Msg), str(c.Tail)
	if c.RPC != nil {
		rpc := *c.RPC
		rpc.Message = str(rpc.Message)
		if rpc.Data != nil {
			rpc.Data = js(rpc.Data)
		}
		c.RPC = &rpc
	}
	return &c
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
	{"env-file", policy.ErrEnvFile},
}

func ToWire(err error, tail string) *WireError {
	w := &WireError{Msg: err.Error(), Stage: providers.StageOf(err), Tail: tail}
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
func (w *WireError) Err() error {
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
	if w.Down {
		e.Is = append(e.Is, ErrDown)
	}
	return e
}

func ToWireTools(tools []mcpstdio.Tool) []WireTool {
	out := make([]WireTool, len(tools))
	for i, t := range tools {
		out[i] = WireTool{Name: t.Name, Title: t.Title, Description: t.Description, Input: t.InputSchema, Output: t.OutputSchema,
			Annotations: t.Annotations}
	}
	return out
}

func FromWireTools(tools []WireTool) []mcpstdio.Tool {
	out := make([]mcpstdio.Tool, len(tools))
	for i, t := range tools {
		out[i] = mcpstdio.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.Input, OutputSchema: t.Output,
			Annotations: t.Annotations}
	}
	return out
}

func FromWireDefs(defs []WireDef) []providers.Definition {
	out := make([]providers.Definition, len(defs))
	for i, d := range defs {
		out[i] = providers.Definition{Name: d.Name, Count: d.Count}
		if d.Tool != nil {
			t := FromWireTools([]WireTool{*d.Tool})[0]
			out[i].Tool = &t
		}
	}
	return out
}
