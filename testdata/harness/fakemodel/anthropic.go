package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The Anthropic Messages API as Claude Code calls it (ANTHROPIC_BASE_URL): its shell tool is Bash,
// and ToolSearch loads a deferred tool's schema.
const (
	anthropicShellTool  = "Bash"
	anthropicToolSearch = "ToolSearch"
)

// anthropicName is Claude Code's name for an MCP tool: mcp__<server>__<tool>.
func (m *Model) anthropicName(c Call) string { return "mcp__" + m.server() + "__" + c.Tool }

// loadID names the ToolSearch call made before step n; loadStepOf reads n back, -1 if not one.
func loadID(n int) string { return fmt.Sprintf("toolu_load_%03d", n) }

func loadStepOf(id string) int {
	var n int
	if _, err := fmt.Sscanf(id, "toolu_load_%d", &n); err != nil {
		return -1
	}
	return n
}

type anthropicRequest struct {
	Model    string      `json:"model"`
	Stream   bool        `json:"stream"`
	Tools    []namedTool `json:"tools"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

type anthropicBlock struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

func (m *Model) anthropic(w http.ResponseWriter, body []byte) {
	var req anthropicRequest
	if !decode(w, "anthropic", body, &req) {
		return
	}
	hasShell := offers(req.Tools, anthropicShellTool)
	answered := 0
	loaded := map[int]bool{} // steps whose tool ToolSearch has loaded
	for _, msg := range req.Messages {
		var blocks []anthropicBlock
		if json.Unmarshal(msg.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type != "tool_result" {
				continue
			}
			if n := loadStepOf(b.ToolUseID); n >= 0 {
				loaded[n] = true
				m.recordLoad(n, anthropicLoaded(b.Content))
				continue
			}
			if stepOf(b.ToolUseID) < 0 {
				continue
			}
			answered++
			m.record("anthropic", b.ToolUseID, anthropicText(b.Content), b.IsError)
		}
	}
	var content []map[string]any
	stop := "end_turn"
	// Claude Code names an MCP tool to the model mcp__<server>__<tool> and defers it: the request
	// lists only ToolSearch, and the system prompt names the deferred tools and asks for
	// ToolSearch "select:NAME" before a call. The model does so first, as a model would.
	if call, ok := m.peek(answered, hasShell); ok && call.Tool != "" && !loaded[answered] &&
		offers(req.Tools, anthropicToolSearch) && !offers(req.Tools, m.anthropicName(call)) {
		query := "select:" + m.anthropicName(call)
		if q, ok := m.ToolSearch[answered]; ok {
			query = q
		}
		input, _ := json.Marshal(map[string]any{"query": query})
		content = []map[string]any{{"type": "tool_use", "id": loadID(answered), "name": anthropicToolSearch, "input": json.RawMessage(input)}}
		stop = "tool_use"
	} else if call, ok := m.next(answered, hasShell); ok {
		name, input := anthropicShellTool, call.args()
		if call.Tool != "" {
			name = m.anthropicName(call)
		} else {
			input, _ = json.Marshal(map[string]string{"command": call.Command, "description": "scripted step"})
		}
		content = []map[string]any{{"type": "tool_use", "id": callID("toolu", answered), "name": name, "input": input}}
		stop = "tool_use"
	} else {
		content = []map[string]any{{"type": "text", "text": "done"}}
	}
	usage := map[string]int{"input_tokens": 10, "output_tokens": 10}
	msg := map[string]any{"id": "msg_fake", "type": "message", "role": "assistant", "model": req.Model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}
	if !req.Stream {
		msg["content"], msg["stop_reason"] = content, stop
		writeJSON(w, msg)
		return
	}
	startSSE(w)
	sse(w, "message_start", map[string]any{"type": "message_start", "message": msg})
	for i, c := range content {
		if c["type"] == "tool_use" {
			input := c["input"].(json.RawMessage)
			sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": c["id"], "name": c["name"], "input": map[string]any{}}})
			sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
		} else {
			sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "text_delta", "text": c["text"]}})
		}
		sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	sse(w, "message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 10}})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
}

// anthropicText flattens a tool_result's content (a string or text blocks).
func anthropicText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &blocks)
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// anthropicLoaded is what ToolSearch answered: the names of the tools it loaded (tool_reference
// blocks), one a line, and any text.
func anthropicLoaded(raw json.RawMessage) string {
	var blocks []struct {
		Type     string `json:"type"`
		ToolName string `json:"tool_name"`
		Text     string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return anthropicText(raw)
	}
	var lines []string
	for _, b := range blocks {
		if b.Type == "tool_reference" {
			lines = append(lines, b.ToolName)
		} else if b.Text != "" {
			lines = append(lines, b.Text)
		}
	}
	return strings.Join(lines, "\n")
}
