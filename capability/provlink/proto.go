package keeper

// The keeper's protocol (SPEC 12): JSON lines over the turn's unix socket, one connection per
// provider per answering process. A client sends hello, then start (of one provider, with its
// initialize), then list, tools and call requests, one at a time; while a call waits it may
// send cancel, or go away, and the keeper cancels the call (notifications/cancelled). stop ends
// the keeper (spear-shell --end-turn). Nothing else is served: every check, refusal, framing and
// capability record stays with the answering process, which gets the provider's tools and raw
// tools/call results as the provider sent them.
//
// A call may name the listing (its hash) that the caller checked the tool's definition against:
// the keeper then sends it only if the provider's listing, refreshed exactly as tools refreshes
// it, is still that listing, and otherwise answers moved with the tool's definition in the new
// one, for the caller to judge again. The keeper compares two hashes; it decides nothing.
//
// tools is list cut to the names asked: for each name, how many times the provider's last
// listing holds it and its first definition there (as list would have carried it), with the
// listing's hash and age. The keeper lists again exactly when list would (a change announced,
// or providers.RelistAfter passed), and judges nothing: a name listed twice, a name outside the
// charset, a schema that is not an object come back as listed, for the answering process to
// judge as it judges a whole listing.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"syscall"

	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/mcpstdio"
)

// protocol changes whenever a message changes: a client and a keeper of different
// builds then do not talk.
const protocol = 3

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
	opTools  = "tools"
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
	Names     []string        `json:"names,omitempty"`     // tools
	Arguments json.RawMessage `json:"arguments,omitempty"` // call
	// call: the hash of the listing the caller's definitions came from (a tools answer); the
	// call is sent only while the provider's listing, refreshed as tools would refresh it, is
	// still that one. "" sends it unconditionally.
	Listing string `json:"listing,omitempty"`
	Reason  string `json:"reason,omitempty"` // stop

	ctx context.Context // call: cancelled when the client cancels or goes away (readRequests)
}

type response struct {
	Err    *wireError      `json:"err,omitempty"`
	Tools  []wireTool      `json:"tools,omitempty"`  // list
	Defs   []wireDef       `json:"defs,omitempty"`   // tools: one per name asked, in the order asked
	Hash   string          `json:"hash,omitempty"`   // tools: the listing's hash (providers.ListingHash)
	AgeMS  int64           `json:"age_ms,omitempty"` // tools: how old the listing is
	Result json.RawMessage `json:"result,omitempty"` // call: the result object as the provider sent it
	// call with a listing that is no longer the provider's: the call was not sent; Defs holds
	// the called name as the new listing holds it, Hash and AgeMS say which listing that is.
	Moved bool   `json:"moved,omitempty"`
	Tail  string `json:"tail,omitempty"` // the provider's stderr tail, after a failure
}

// encodeResponse is r as one line. A call's result alone, the answer to nearly every call, is
// written around the provider's bytes as mcpstdio passed them on (one JSON value, valid, on
// one line), which json.Marshal would scan and compact once more.
func encodeResponse(r response) ([]byte, error) {
	if r.Result != nil && reflect.DeepEqual(r, response{Result: r.Result}) {
		line := make([]byte, 0, len(resultPrefix)+len(r.Result)+2)
		return append(append(append(line, resultPrefix...), r.Result...), '}', '\n'), nil
	}
	line, err := json.Marshal(r)
	return append(line, '\n'), err
}

const resultPrefix = `{"result":`

// decodeResponse reads one answer line. A call's result alone (encodeResponse) is taken from
// between its first key and its closing brace once those bytes are one valid JSON value;
// anything else is decoded whole.
func decodeResponse(line []byte) (response, error) {
	var rep response
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

type wireTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Input       json.RawMessage `json:"input,omitempty"`
	Output      json.RawMessage `json:"output,omitempty"`
}

// wireDef is one name asked of the last listing: how many of the listing's tools carry it
// and the first of them (nil when none does).
type wireDef struct {
	Name  string    `json:"name"`
	Count int       `json:"count"`
	Tool  *wireTool `json:"tool,omitempty"`
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

func fromWireDefs(defs []wireDef) []providers.Definition {
	out := make([]providers.Definition, len(defs))
	for i, d := range defs {
		out[i] = providers.Definition{Name: d.Name, Count: d.Count}
		if d.Tool != nil {
			t := fromWireTools([]wireTool{*d.Tool})[0]
			out[i].Tool = &t
		}
	}
	return out
}
