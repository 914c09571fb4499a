package mcpstdio

// The test binary doubles as a family of fake MCP servers: TestMain runs fakeMain when
// MCPSTDIO_FAKE names a mode. Each mode is one fault (or a well-behaved server).

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

const (
	fakeModeEnv = "MCPSTDIO_FAKE"
	fakePidEnv  = "MCPSTDIO_PIDDIR"
)

type fakeMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

type fake struct {
	mode string
	in   *bufio.Scanner
	mu   sync.Mutex
	out  *bufio.Writer
	late json.RawMessage // the id of a "late" call, answered only once it is cancelled
}

func fakeMain(mode string) int {
	if dir := os.Getenv(fakePidEnv); dir != "" {
		name := "leader"
		if mode == "sleeper" {
			name = "grandchild"
		}
		os.WriteFile(filepath.Join(dir, name), []byte(strconv.Itoa(os.Getpid())), 0o600)
	}
	// "a+b" sets up as a, then serves as b.
	modes := strings.Split(mode, "+")
	for _, mode := range modes {
		if code, done := fakeSetup(mode); done {
			return code
		}
	}
	mode = modes[len(modes)-1]
	f := &fake{mode: mode, in: bufio.NewScanner(os.Stdin), out: bufio.NewWriter(os.Stdout)}
	f.in.Buffer(make([]byte, 64<<10), 16<<20)
	for f.in.Scan() {
		var m fakeMsg
		if err := json.Unmarshal(f.in.Bytes(), &m); err != nil {
			fmt.Fprintln(os.Stderr, "fake: bad line:", err)
			return 2
		}
		f.handle(m)
	}
	switch mode {
	case "ignore-stdin", "ignore-term":
		fmt.Fprintln(os.Stderr, "stdin closed, staying")
		time.Sleep(time.Hour)
	}
	return 0
}

// fakeSetup does what mode does before serving; done means the process is finished.
func fakeSetup(mode string) (code int, done bool) {
	switch mode {
	case "sleeper": // a grandchild that holds the pipes and ignores SIGTERM
		signal.Ignore(syscall.SIGTERM)
		time.Sleep(time.Hour)
		return 0, true
	case "grandchild":
		exe, _ := os.Executable()
		gc := exec.Command(exe)
		gc.Env = append(os.Environ(), fakeModeEnv+"=sleeper")
		gc.Stdin, gc.Stdout, gc.Stderr = nil, os.Stdout, os.Stderr
		if err := gc.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "grandchild:", err)
			return 1, true
		}
	case "tty": // a hostile provider reaching for the agent's terminal
		ttyAttack()
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
		fmt.Fprintln(os.Stderr, "ignoring SIGTERM")
	case "ignore-stdin":
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGTERM)
		go func() {
			<-ch
			fmt.Fprintln(os.Stderr, "got SIGTERM")
			os.Exit(0)
		}()
	case "stderr-burst":
		w := bufio.NewWriterSize(os.Stderr, 64<<10)
		for i := 0; i*120 <= 4<<20; i++ { // lines of 120 bytes, 4 MiB in all
			fmt.Fprintf(w, "burst line %07d %s\n", i, strings.Repeat("x", 100))
		}
		fmt.Fprintln(w, "burst end")
		w.Flush()
	}
	return 0, false
}

func (f *fake) send(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	f.raw(string(b))
}

func (f *fake) raw(line string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.out.WriteString(line)
	f.out.WriteByte('\n')
	f.out.Flush()
}

func (f *fake) result(id json.RawMessage, result any) {
	f.send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

func (f *fake) handle(m fakeMsg) {
	if m.ID == nil && m.Method != "" {
		if m.Method == "notifications/cancelled" {
			fmt.Fprintf(os.Stderr, "cancelled %s\n", m.Params)
			if f.late != nil {
				f.result(f.late, text("too late"))
				f.late = nil
			}
		}
		return
	}
	switch m.Method {
	case "initialize":
		f.initialize(m)
	case "tools/list":
		f.list(m)
	case "tools/call":
		f.call(m)
	case "":
		fmt.Fprintf(os.Stderr, "unexpected response %s\n", m.ID)
	default:
		f.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "no " + m.Method}})
	}
}

func (f *fake) initialize(m fakeMsg) {
	var p struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ClientInfo      struct{ Name, Version string }
	}
	json.Unmarshal(m.Params, &p)
	fmt.Fprintf(os.Stderr, "initialize %s %s caps=%s client=%s/%s\n", m.ID, p.ProtocolVersion, p.Capabilities, p.ClientInfo.Name, p.ClientInfo.Version)
	version := p.ProtocolVersion
	switch f.mode {
	case "crash-init":
		fmt.Fprintln(os.Stderr, "boom before init")
		os.Exit(3)
	case "hang-init":
		return
	case "wrong-version":
		version = "2024-11-05"
	case "string-ids":
		f.raw(`{"jsonrpc":"2.0","id":"` + string(m.ID) + `","result":{}}`)
		return
	}
	f.result(m.ID, map[string]any{
		"protocolVersion": version,
		"capabilities":    map[string]any{"tools": map[string]any{"listChanged": true}},
		"serverInfo":      map[string]any{"name": "fake", "version": "1.2.3", "extra": true},
		"instructions":    "unknown fields are fine",
		"x-unknown":       []int{1, 2},
	})
}

func (f *fake) list(m fakeMsg) {
	var p struct{ Cursor string }
	json.Unmarshal(m.Params, &p)
	total, size := 3, 2
	switch f.mode {
	case "loop-cursor":
		f.result(m.ID, map[string]any{"tools": []any{fakeTool("t")}, "nextCursor": "again"})
		return
	case "many-tools":
		total, size = 5000, 7
	case "list-changed":
		f.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
	case "big-list":
		f.result(m.ID, map[string]any{"tools": []any{map[string]any{"name": "t", "description": strings.Repeat("d", 2<<20)}}})
		return
	}
	start := 0
	if p.Cursor != "" {
		start, _ = strconv.Atoi(strings.TrimPrefix(p.Cursor, "c"))
	}
	var tools []any
	for i := start; i < total && i < start+size; i++ {
		tools = append(tools, fakeTool(fmt.Sprintf("tool%04d", i)))
	}
	res := map[string]any{"tools": tools}
	if start+size < total {
		res["nextCursor"] = fmt.Sprintf("c%d", start+size)
	}
	f.result(m.ID, res)
}

func fakeTool(name string) map[string]any {
	return map[string]any{
		"name":         name,
		"description":  "does " + name,
		"inputSchema":  map[string]any{"type": "object", "properties": map[string]any{"message": map[string]any{"type": "string"}}},
		"outputSchema": map[string]any{"type": "object"},
		"annotations":  map[string]any{"readOnlyHint": true},
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func text(s string) map[string]any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}}
}

func (f *fake) call(m fakeMsg) {
	var p struct {
		Name      string
		Arguments map[string]any
	}
	json.Unmarshal(m.Params, &p)
	switch f.mode {
	case "crash-call":
		fmt.Fprintln(os.Stderr, "boom mid-call")
		os.Exit(4)
	case "hang-call":
		return
	case "garbage":
		f.raw("this is not JSON-RPC")
		return
	case "notify10k":
		for i := range 10000 {
			f.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/message", "params": map[string]any{"level": "info", "data": i}})
		}
	case "list-changed":
		f.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
	case "server-requests":
		f.result(m.ID, text(f.serverRequests(m.ID)))
		return
	case "bad-jsonrpc":
		f.raw(`{"jsonrpc":"1.0","id":` + string(m.ID) + `,"result":{}}`)
		return
	case "both-result-error":
		f.raw(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{},"error":{"code":1,"message":"x"}}`)
		return
	case "unknown-id":
		f.raw(`{"jsonrpc":"2.0","id":999,"result":{"content":[]}}`)
		return
	case "no-newline-eof":
		f.mu.Lock()
		f.out.WriteString(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"content":[]}}`)
		f.out.Flush()
		os.Exit(0)
	}
	switch p.Name {
	case "late":
		f.late = m.ID
	case "echo":
		msg, _ := p.Arguments["message"].(string)
		f.result(m.ID, text(msg))
	case "env":
		f.result(m.ID, text(strings.Join(os.Environ(), "\n")))
	case "cwd":
		wd, _ := os.Getwd()
		f.result(m.ID, text(wd))
	case "slow":
		time.Sleep(50 * time.Millisecond)
		msg, _ := p.Arguments["message"].(string)
		f.result(m.ID, text(msg))
	case "big": // 2 MiB of text, "result" before "id" as the TypeScript SDK writes it
		f.raw(`{"result":` + mustJSON(text(strings.Repeat("a", 2<<20))) + `,"jsonrpc":"2.0","id":` + string(m.ID) + `}`)
	case "big-id-first":
		f.result(m.ID, map[string]any{"structuredContent": map[string]any{"id": 999, "text": strings.Repeat("[{\"", 1<<19)}, "content": []any{}})
	case "big-error": // a JSON-RPC error answer over the limit
		f.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32000, "message": strings.Repeat("e", 2<<20)}})
	case "big-notify": // a notification over the limit, then the answer
		f.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/message", "params": map[string]any{"data": strings.Repeat("n", 2<<20)}})
		f.result(m.ID, text("late"))
	case "big-unknown": // a response over the limit to a request never made
		f.result(json.RawMessage("999"), text(strings.Repeat("u", 2<<20)))
	case "big-request": // a server request over the limit
		f.raw(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"method":"sampling/createMessage","params":` + mustJSON(text(strings.Repeat("r", 2<<20))) + `}`)
	case "big-unended": // a message over the limit that never ends
		f.mu.Lock()
		f.out.WriteString(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 2<<20))
		f.out.Flush()
		f.mu.Unlock()
	case "content":
		f.raw(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"x-extra":1,"result":` + allContent + `}`)
	case "iserror":
		f.result(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "bad input"}}, "isError": true})
	case "rpcerror":
		f.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32602, "message": "unknown tool: rpcerror", "data": map[string]any{"why": "test"}}})
	default:
		f.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32602, "message": "no tool " + p.Name}})
	}
}

// allContent is a result with every kind of content item and the optional fields.
const allContent = `{"content":[` +
	`{"type":"text","text":"hello","annotations":{"audience":["user"]}},` +
	`{"type":"image","data":"aGk=","mimeType":"image/png"},` +
	`{"type":"audio","data":"aGk=","mimeType":"audio/wav"},` +
	`{"type":"resource_link","uri":"file:///x","name":"x","mimeType":"text/plain"},` +
	`{"type":"resource","resource":{"uri":"file:///y","text":"y","mimeType":"text/plain"}},` +
	`{"type":"x-future","payload":[1,2,3]}],` +
	`"isError":false,"structuredContent":{"n":1.50000000000000000001},"_meta":{"trace":"abc"},"x-later":{"a":null}}`

// serverRequests sends requests to the client while call callID is in flight, one of
// them reusing callID, and checks the answers: ping gets {}, the rest -32601.
func (f *fake) serverRequests(callID json.RawMessage) string {
	reqs := []struct {
		id, method string
	}{
		{string(callID), "sampling/createMessage"},
		{`"r-1"`, "roots/list"},
		{`77`, "elicitation/create"},
		{`"p-1"`, "ping"},
	}
	for _, r := range reqs {
		f.raw(`{"jsonrpc":"2.0","id":` + r.id + `,"method":"` + r.method + `","params":{}}`)
	}
	got := map[string]fakeMsg{}
	for len(got) < len(reqs) && f.in.Scan() {
		var m fakeMsg
		json.Unmarshal(f.in.Bytes(), &m)
		if m.Method != "" {
			return "unexpected request " + m.Method
		}
		got[string(m.ID)] = m
	}
	for _, r := range reqs {
		m, ok := got[r.id]
		switch {
		case !ok:
			return "no answer to " + r.method
		case r.method == "ping" && (string(m.Result) != "{}" || m.Error != nil):
			return "bad ping answer"
		case r.method != "ping" && !strings.Contains(string(m.Error), "-32601"):
			return "bad answer to " + r.method + ": " + string(m.Error)
		}
	}
	return "ok"
}
