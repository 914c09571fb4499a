package fakemodel

import (
	"encoding/json"
	"net/http"
)

// The OpenAI Responses API as Codex CLI calls it (a model provider with wire_api "responses"):
// its shell tool is exec_command, whose result comes back as a function_call_output item.
const openaiShellTool = "exec_command"

type openaiRequest struct {
	Model string      `json:"model"`
	Tools []namedTool `json:"tools"`
	Input []struct {
		Type   string          `json:"type"`
		CallID string          `json:"call_id"`
		Output json.RawMessage `json:"output"`
	} `json:"input"`
}

func (m *Model) openai(w http.ResponseWriter, body []byte) {
	var req openaiRequest
	if !decode(w, "openai", body, &req) {
		return
	}
	hasShell := offers(req.Tools, openaiShellTool)
	answered := 0
	for _, it := range req.Input {
		if it.Type != "function_call_output" || stepOf(it.CallID) < 0 {
			continue
		}
		answered++
		m.record("openai", it.CallID, openaiText(it.Output), false)
	}
	var item map[string]any
	if call, ok := m.next(answered, hasShell); ok {
		item = map[string]any{"type": "function_call", "id": callID("fc", answered), "call_id": callID("call", answered),
			"name": openaiShellTool, "status": "completed"}
		if call.Tool != "" {
			// Codex offers an MCP server's tools as one namespace tool mcp__<server> holding a
			// function per tool; the call names the function and carries the namespace.
			item["name"], item["namespace"], item["arguments"] = call.Tool, "mcp__"+m.server(), string(call.args())
		} else {
			shell := map[string]any{"cmd": call.Command}
			for k, v := range m.Extra[answered] {
				shell[k] = v
			}
			args, _ := json.Marshal(shell)
			item["arguments"] = string(args)
		}
	} else {
		item = map[string]any{"type": "message", "id": "msg_fake", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": "done", "annotations": []any{}}}}
	}
	resp := map[string]any{"id": "resp_fake", "object": "response", "model": req.Model, "status": "in_progress", "output": []any{}}
	startSSE(w)
	sse(w, "response.created", map[string]any{"type": "response.created", "response": resp})
	sse(w, "response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
	sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	resp["status"], resp["output"] = "completed", []any{item}
	resp["usage"] = map[string]any{"input_tokens": 10, "input_tokens_details": map[string]int{"cached_tokens": 0},
		"output_tokens": 10, "output_tokens_details": map[string]int{"reasoning_tokens": 0}, "total_tokens": 20}
	sse(w, "response.completed", map[string]any{"type": "response.completed", "response": resp})
}

// openaiText flattens a function_call_output's output (a string or content items).
func openaiText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var items []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &items)
	out := ""
	for _, it := range items {
		out += it.Text
	}
	return out
}
