package mcpface

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/spear-shell/spear-shell/capability"
)

// middleware follows the turn on the requests that list: tools/list is a listing (recorded
// via mcp) that registers the family's direct tools when it is shown whole; prompts/list and
// prompts/get read the prompt directories again.
func (f *Face) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/list":
			f.syncDirect(ctx)
		case "tools/call":
			// a direct tool removed when its provider left the turn is answered as its id
			// would be (unavailable), not with the protocol's unknown tool
			if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil {
				f.mu.Lock()
				id, left := f.left[r.Params.Name]
				_, direct := f.direct[r.Params.Name]
				f.mu.Unlock()
				if left && !direct {
					raw := r.Params.Arguments
					if len(raw) == 0 {
						raw = json.RawMessage(`{}`)
					}
					return f.invoke(ctx, id, raw)
				}
			}
		case "prompts/list":
			return f.listPrompts(ctx)
		case "prompts/get":
			r, ok := req.(*mcp.GetPromptRequest)
			if !ok || r.Params == nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "prompts/get needs a name"}
			}
			return f.getPrompt(ctx, r.Params.Name)
		}
		return next(ctx, method, req)
	}
}

// syncDirect lists the family for the face's tools/list (capability_index_exposed, via mcp)
// and registers one tool per capability when the family is shown whole (SPEC 13): its name
// from its id, its input schema, readOnlyHint for READ. A capability whose name is too long,
// taken twice, or whose schema the SDK will not take is reached through spear_invoke only.
func (f *Face) syncDirect(ctx context.Context) {
	var want map[string]capability.Entry
	down := map[string]bool{} // providers out of the turn: their direct tools answer unavailable
	_, _ = f.with(ctx, func(g *generation, t *capability.Turn) *mcp.CallToolResult {
		l, r := t.FaceToolsList(ctx)
		if r != nil {
			if r.Ended() {
				go g.close(capability.CodeNoCapabilities)
			}
			return nil
		}
		for _, d := range l.Down {
			down[d.Provider] = true
		}
		if l.Mode != "whole" {
			return nil
		}
		ids := make([]string, len(l.Entries))
		for i, e := range l.Entries {
			ids[i] = e.ID
		}
		names := DirectNames(ids)
		want = map[string]capability.Entry{}
		for _, e := range l.Entries {
			if n, ok := names[e.ID]; ok {
				want[n] = e
			}
		}
		return nil
	})
	f.mu.Lock()
	defer f.mu.Unlock()
	var gone []string
	for name, id := range f.direct {
		if e, ok := want[name]; !ok || e.ID != id {
			gone = append(gone, name)
			delete(f.direct, name)
			if p, _, _ := strings.Cut(id, "/"); down[p] {
				f.left[name] = id
			}
		}
	}
	if len(gone) > 0 {
		f.server.RemoveTools(gone...)
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		e := want[name]
		if _, ok := f.direct[name]; ok {
			continue
		}
		if f.addDirect(name, e) {
			f.direct[name] = e.ID
			delete(f.left, name)
		}
	}
}

// addDirect registers one direct tool; false when the SDK refuses its schema.
func (f *Face) addDirect(name string, e capability.Entry) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	var probe struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(e.Input, &probe) != nil || probe.Type != "object" {
		return false
	}
	id := e.ID
	tool := &mcp.Tool{
		Name:        name,
		Description: capability.Shown(e.Description, 2000) + fmt.Sprintf("\n(%s capability %s, through spear)", e.Class, capability.Clean(id)),
		InputSchema: json.RawMessage(e.Input),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: e.Class == "READ"},
	}
	f.server.AddTool(tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		raw := req.Params.Arguments
		if len(raw) == 0 {
			raw = json.RawMessage(`{}`)
		}
		if err := noDuplicateKeys(raw); err != nil {
			return f.malformed(ctx, name, err)
		}
		return f.invoke(ctx, id, raw)
	})
	return true
}

// prompts reads the configuration's prompt directories now, each trusted (outside every
// writable root) before it is read; what is left out is said on stderr and recorded.
func (f *Face) prompts(ctx context.Context) []capability.Prompt {
	var out []capability.Prompt
	_, _ = f.with(ctx, func(g *generation, t *capability.Turn) *mcp.CallToolResult {
		var skipped []capability.SkippedPrompt
		out, skipped = t.Prompts()
		for _, s := range skipped {
			fmt.Fprintf(f.opts.Stderr, "spear-mcp: prompt %s left out: %s\n", s.Path, s.Reason)
			t.FaceSkippedPrompt(s.Path, s.Reason)
		}
		return nil
	})
	return out
}

func (f *Face) listPrompts(ctx context.Context) (mcp.Result, error) {
	res := &mcp.ListPromptsResult{Prompts: []*mcp.Prompt{}}
	for _, p := range f.prompts(ctx) {
		res.Prompts = append(res.Prompts, &mcp.Prompt{Name: p.Name, Description: p.Description})
	}
	return res, nil
}

func (f *Face) getPrompt(ctx context.Context, name string) (mcp.Result, error) {
	for _, p := range f.prompts(ctx) {
		if p.Name == name {
			return &mcp.GetPromptResult{Description: p.Description,
				Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: p.Text}}}}, nil
		}
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", name)}
}
