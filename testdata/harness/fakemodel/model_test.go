package fakemodel

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Each API: a request offering the shell tool and answering step 0 gets step 1's call (streamed
// as that API streams), step 0's result is recorded once, and a request without the tool gets text.
func TestModelAnswersEachAPI(t *testing.T) {
	script := []string{"echo one", "echo 'two'\necho three"}
	tests := []struct {
		name, path, withTool, withoutTool string
		want                              []string // in the streamed answer
		output                            string   // recorded for step 0
	}{
		{
			name: "anthropic", path: "/v1/messages?beta=true",
			withTool: `{"model":"m","stream":true,"tools":[{"name":"Bash"}],"messages":[
				{"role":"user","content":"go"},
				{"role":"assistant","content":[{"type":"tool_use","id":"toolu_spear_000","name":"Bash","input":{}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_spear_000","content":[{"type":"text","text":"one"}]}]}]}`,
			withoutTool: `{"model":"m","messages":[{"role":"user","content":"title?"}]}`,
			want: []string{"event: message_start", `"name":"Bash"`, `"id":"toolu_spear_001"`,
				`"partial_json":"{\"command\":\"echo 'two'\\necho three\"`, `"stop_reason":"tool_use"`},
			output: "one",
		},
		{
			name: "openai", path: "/v1/responses",
			withTool: `{"model":"m","tools":[{"type":"function","name":"exec_command"}],"input":[
				{"type":"message","role":"user","content":[]},
				{"type":"function_call","call_id":"call_spear_000","name":"exec_command","arguments":"{}"},
				{"type":"function_call_output","call_id":"call_spear_000","output":"Process exited with code 0\nOutput:\none\n"}]}`,
			withoutTool: `{"model":"m","input":[]}`,
			want: []string{"event: response.created", "event: response.output_item.done", `"call_id":"call_spear_001"`,
				`"arguments":"{\"cmd\":\"echo 'two'\\necho three\"}"`, "event: response.completed"},
			output: "Process exited with code 0\nOutput:\none\n",
		},
		{
			name: "gemini", path: "/v1beta/models/g:streamGenerateContent?alt=sse",
			withTool: `{"tools":[{"functionDeclarations":[{"name":"run_shell_command"}]}],"contents":[
				{"role":"user","parts":[{"text":"go"}]},
				{"role":"model","parts":[{"functionCall":{"id":"call_spear_000","name":"run_shell_command","args":{}}}]},
				{"role":"user","parts":[{"functionResponse":{"id":"call_spear_000","name":"run_shell_command","response":{"output":"Output: one"}}}]}]}`,
			withoutTool: `{"contents":[{"role":"user","parts":[{"text":"title?"}]}]}`,
			want:        []string{"data: {", `"name":"run_shell_command"`, `"id":"call_spear_001"`, `"command":"echo 'two'\necho three"`},
			output:      "Output: one",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(script)
			var steps []int
			m.OnStep = func(n int, _ string) { steps = append(steps, n) }
			srv := httptest.NewServer(m.Handler())
			defer srv.Close()
			for range 2 { // a retried request is answered alike and recorded once
				got := post(t, srv.URL+tt.path, tt.withTool)
				for _, w := range tt.want {
					if !strings.Contains(got, w) {
						t.Errorf("answer lacks %s:\n%s", w, got)
					}
				}
			}
			recs := m.Records()
			if len(recs) != 1 || recs[0].Step != 0 || recs[0].Output != tt.output || recs[0].Command != script[0] {
				t.Errorf("records %+v, want step 0 with %q", recs, tt.output)
			}
			if len(steps) != 1 || steps[0] != 1 {
				t.Errorf("OnStep heard %v, want [1]", steps)
			}
			if got := post(t, srv.URL+tt.path, tt.withoutTool); !strings.Contains(got, "done") || strings.Contains(got, "spear_") {
				t.Errorf("a request without the shell tool got %s", got)
			}
		})
	}
}

// After the last step the model answers with text, so a headless terminal ends its turn.
func TestModelEndsAfterScript(t *testing.T) {
	m := New([]string{"true"})
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	got := post(t, srv.URL+"/v1/responses", `{"tools":[{"name":"exec_command"}],"input":[
		{"type":"function_call_output","call_id":"call_spear_000","output":"x"}]}`)
	if !strings.Contains(got, `"output_text"`) || strings.Contains(got, "function_call") {
		t.Errorf("after the script: %s", got)
	}
}

// Gemini's classifiers ask for JSON of a schema; a valid value at once spares their retries.
func TestGeminiJSONAnswer(t *testing.T) {
	srv := httptest.NewServer(New(nil).Handler())
	defer srv.Close()
	got := post(t, srv.URL+"/v1beta/models/g:generateContent", `{"contents":[],"generationConfig":{
		"responseMimeType":"application/json","responseJsonSchema":{"type":"OBJECT","properties":{
		"reasoning":{"type":"STRING"},"score":{"type":"INTEGER","minimum":5},"kind":{"type":"STRING","enum":["a","b"]}},
		"required":["reasoning","score","kind"]}}}`)
	var resp struct {
		Candidates []struct {
			Content struct {
				Parts []struct{ Text string }
			}
		}
	}
	if err := json.Unmarshal([]byte(got), &resp); err != nil || len(resp.Candidates) != 1 {
		t.Fatalf("answer %s: %v", got, err)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(resp.Candidates[0].Content.Parts[0].Text), &v); err != nil {
		t.Fatalf("text is not JSON: %v", err)
	}
	if v["reasoning"] != "fake" || v["score"] != 5.0 || v["kind"] != "a" {
		t.Errorf("value %v", v)
	}
}

func post(t *testing.T, url, body string) string {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %s", resp.Status, data)
	}
	return string(data)
}

// An MCP step is called by each terminal's name for the tool: Claude Code's after a ToolSearch
// that loads it (unless the request already lists it), Codex's in the server's namespace, Gemini's
// with the server in the name.
func TestModelCallsMCPTools(t *testing.T) {
	call := Call{Tool: "spear_search", Args: map[string]any{"query": "notes"}}
	tests := []struct {
		name, path, body string
		want             []string
	}{
		{"claude loads first", "/v1/messages", `{"model":"m","tools":[{"name":"Bash"},{"name":"ToolSearch"}],"messages":[]}`,
			[]string{`"name":"ToolSearch"`, `"id":"toolu_load_000"`, `"query":"select:mcp__spear__spear_search"`}},
		{"claude after the load", "/v1/messages", `{"model":"m","tools":[{"name":"Bash"},{"name":"ToolSearch"}],"messages":[
			{"role":"assistant","content":[{"type":"tool_use","id":"toolu_load_000","name":"ToolSearch","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_load_000","content":[{"type":"tool_reference","tool_name":"mcp__spear__spear_search"}]}]}]}`,
			[]string{`"name":"mcp__spear__spear_search"`, `"id":"toolu_spear_000"`, `"input":{"query":"notes"}`}},
		{"claude listed", "/v1/messages", `{"model":"m","tools":[{"name":"Bash"},{"name":"ToolSearch"},{"name":"mcp__spear__spear_search"}],"messages":[]}`,
			[]string{`"name":"mcp__spear__spear_search"`}},
		{"codex", "/v1/responses", `{"model":"m","tools":[{"type":"function","name":"exec_command"}],"input":[]}`,
			[]string{`"name":"spear_search"`, `"namespace":"mcp__spear"`, `"arguments":"{\"query\":\"notes\"}"`}},
		{"gemini", "/v1beta/models/g:streamGenerateContent?alt=sse", `{"tools":[{"functionDeclarations":[{"name":"run_shell_command"}]}],"contents":[]}`,
			[]string{`"name":"mcp_spear_spear_search"`, `"args":{"query":"notes"}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewCalls([]Call{call})
			srv := httptest.NewServer(m.Handler())
			defer srv.Close()
			got := post(t, srv.URL+tt.path, tt.body)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("answer lacks %s:\n%s", w, got)
				}
			}
			if tt.name == "claude after the load" {
				if l := m.Loads(); l[0] != "mcp__spear__spear_search" {
					t.Errorf("loads %v", l)
				}
			}
		})
	}
}
