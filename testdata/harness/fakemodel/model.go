// Package fakemodel is a scripted model API for driving real agent terminals in tests.
//
// It speaks the three APIs the tested terminals call (Anthropic Messages for Claude Code, OpenAI
// Responses for Codex CLI, Gemini generateContent for Gemini CLI), each streamed as the CLI
// expects. Every request that offers the terminal's shell tool is answered with one tool call: the
// next step of the script, a command for that shell tool or a call of a tool of an MCP server the
// terminal has registered, named as that terminal names MCP tools to the model; when the script is
// done it answers with text, so a headless terminal ends its turn. Each tool result the terminal hands back is kept with the step it
// answers. Requests that offer no shell tool (titles, routing classifiers, quota probes) get a short
// text answer, or a value of the requested JSON schema.
package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Model holds the script and what has been recorded; one per terminal run.
type Model struct {
	script []Call
	// MCPServer is the name the terminal registered the MCP server of the script's tool calls
	// under ("spear" when empty).
	MCPServer string
	// OnStep, when set, is called as step n's tool call is sent (before the terminal can run it).
	OnStep func(n int, cmd string)
	// Extra holds, by step, more arguments of the shell tool's call (Codex's exec_command takes
	// "shell", "login", "tty"); only the OpenAI API uses them.
	Extra map[int]map[string]any
	// ToolSearch holds, by step, the query the model gives the terminal's tool search (Claude Code's
	// ToolSearch) for a deferred MCP tool, instead of "select:NAME".
	ToolSearch map[int]string
	// LogDir, when set, receives every request (method, URL, headers but keys, body).
	LogDir   string
	requests atomic.Int64

	mu      sync.Mutex
	sent    map[int]bool    // steps whose call has been sent
	seen    map[string]bool // tool call ids whose result is recorded
	records []Record
	loads   map[int]string // by step, what the terminal's tool search answered before it
}

// Loads are, by step, what the terminal's own tool search (Claude Code's ToolSearch) handed back
// when the model asked it for the step's deferred tool.
func (m *Model) Loads() map[int]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[int]string{}
	for k, v := range m.loads {
		out[k] = v
	}
	return out
}

func (m *Model) recordLoad(step int, output string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.loads == nil {
		m.loads = map[int]string{}
	}
	m.loads[step] = output
}

// New makes a model that asks for script's commands, one per turn.
func New(script []string) *Model {
	calls := make([]Call, len(script))
	for i, cmd := range script {
		calls[i] = Call{Command: cmd}
	}
	return NewCalls(calls)
}

// NewCalls makes a model that makes script's calls, one per turn.
func NewCalls(script []Call) *Model {
	return &Model{script: script, sent: map[int]bool{}, seen: map[string]bool{}}
}

// A Call is one step of a script: a command for the terminal's shell tool or, with Tool set, a
// call of the tool of that name (the MCP server's own name for it) with Args.
type Call struct {
	Command string
	Tool    string
	Args    map[string]any
}

// String is the command, or the tool and its arguments as JSON.
func (c Call) String() string {
	if c.Tool == "" {
		return c.Command
	}
	args, _ := json.Marshal(c.Args)
	if c.Args == nil {
		args = []byte("{}")
	}
	return c.Tool + " " + string(args)
}

// args are the call's arguments as JSON, an object even when there are none.
func (c Call) args() json.RawMessage {
	if c.Args == nil {
		return json.RawMessage("{}")
	}
	data, _ := json.Marshal(c.Args)
	return data
}

func (m *Model) server() string {
	if m.MCPServer == "" {
		return "spear"
	}
	return m.MCPServer
}

// Records are the tool results received so far, in arrival order.
func (m *Model) Records() []Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Record(nil), m.records...)
}

// Record is one line of the record file: the result a terminal handed back for a step.
type Record struct {
	Step    int    `json:"step"`
	Command string `json:"command"`
	API     string `json:"api"`
	Output  string `json:"output"`
	IsError bool   `json:"is_error,omitempty"`
}

// Handler serves every API on one listener.
func (m *Model) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/", m.dispatch)
	return mux
}

// dispatch routes on the path's shape rather than exact prefixes, since each CLI adds its own
// (/v1, /v1beta, ?beta=true).
func (m *Model) dispatch(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	m.logRequest(r, body)
	p := r.URL.Path
	switch {
	case strings.HasSuffix(p, "/messages/count_tokens"):
		writeJSON(w, map[string]any{"input_tokens": 10})
	case strings.HasSuffix(p, "/messages"):
		m.anthropic(w, body)
	case strings.HasSuffix(p, "/responses"):
		m.openai(w, body)
	case strings.Contains(p, ":streamGenerateContent"), strings.Contains(p, ":generateContent"):
		m.gemini(w, r, body)
	case strings.Contains(p, ":countTokens"):
		writeJSON(w, map[string]any{"totalTokens": 10})
	case strings.HasSuffix(p, "/models"):
		writeJSON(w, map[string]any{"data": []any{}, "models": []any{}})
	default:
		http.Error(w, "fakemodel: no such endpoint", http.StatusNotFound)
	}
}

// callID names step n's tool call so its result can be matched to the step.
func callID(prefix string, n int) string { return fmt.Sprintf("%s_spear_%03d", prefix, n) }

// stepOf reads the step back from a call id made by callID; -1 if it is not ours.
func stepOf(id string) int {
	i := strings.LastIndex(id, "_spear_")
	if i < 0 {
		return -1
	}
	var n int
	if _, err := fmt.Sscanf(id[i+len("_spear_"):], "%d", &n); err != nil {
		return -1
	}
	return n
}

// record appends a tool result once per call id.
func (m *Model) record(api, id, output string, isError bool) {
	step := stepOf(id)
	if step < 0 || step >= len(m.script) {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen[id] {
		return
	}
	m.seen[id] = true
	m.records = append(m.records, Record{Step: step, Command: m.script[step].String(), API: api, Output: output, IsError: isError})
}

// peek is the step next would ask for, without sending it.
func (m *Model) peek(answered int, hasShell bool) (Call, bool) {
	if !hasShell || answered >= len(m.script) {
		return Call{}, false
	}
	return m.script[answered], true
}

// next is the step to ask for, given how many of our calls the conversation has answered.
// OnStep hears of each step once, however often a terminal retries the request.
func (m *Model) next(answered int, hasShell bool) (Call, bool) {
	if !hasShell || answered >= len(m.script) {
		return Call{}, false
	}
	m.mu.Lock()
	first := !m.sent[answered]
	m.sent[answered] = true
	m.mu.Unlock()
	if first && m.OnStep != nil {
		m.OnStep(answered, m.script[answered].String())
	}
	return m.script[answered], true
}

func (m *Model) logRequest(r *http.Request, body []byte) {
	if m.LogDir == "" {
		return
	}
	n := m.requests.Add(1)
	name := filepath.Join(m.LogDir, fmt.Sprintf("%04d.txt", n))
	head := fmt.Sprintf("%s %s\n", r.Method, r.URL.String())
	for k, v := range r.Header {
		if strings.EqualFold(k, "authorization") || strings.EqualFold(k, "x-api-key") || strings.EqualFold(k, "x-goog-api-key") {
			continue
		}
		head += fmt.Sprintf("%s: %s\n", k, strings.Join(v, ", "))
	}
	os.WriteFile(name, append([]byte(head+"\n"), body...), 0o644)
}

// namedTool is a tool a request offers the model; only its name matters here.
type namedTool struct {
	Name string `json:"name"`
}

// offers says whether the request offers the terminal's shell tool: a request without it is not
// the agent's loop (a title, a classifier) and gets no tool call.
func offers(tools []namedTool, name string) bool {
	return slices.ContainsFunc(tools, func(t namedTool) bool { return t.Name == name })
}

// decode reads a request body into v, or answers 400 naming the API.
func decode(w http.ResponseWriter, api string, body []byte, v any) bool {
	if err := json.Unmarshal(body, v); err != nil {
		http.Error(w, "fakemodel: "+api+": "+err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// sse writes one server-sent event; an empty name writes a data-only event.
func sse(w http.ResponseWriter, name string, v any) {
	data, _ := json.Marshal(v)
	if name != "" {
		fmt.Fprintf(w, "event: %s\n", name)
	}
	fmt.Fprintf(w, "data: %s\n\n", data)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}
