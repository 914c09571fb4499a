package mcpface

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestDirectNames(t *testing.T) {
	t.Parallel()
	got := DirectNames([]string{"notes/get", "fs/read-file", "fs/read_file", "a.b/x", "spear_x/y",
		"p/" + strings.Repeat("t", 48), "p/" + strings.Repeat("t", 47)})
	want := map[string]string{"notes/get": "notes__get", "a.b/x": "a_b__x", "p/" + strings.Repeat("t", 47): "p__" + strings.Repeat("t", 47)}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DirectNames = %v, want %v", got, want)
	}
}

// A line that is not JSON-RPC, or is too long, is answered -32700 and the session goes on.
func TestLineTransportParseErrors(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "ping", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, nil
		})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, &LineTransport{In: inR, Out: outW, Max: 1000}) }()
	out := bufio.NewReader(outR)
	send := func(line string) { io.WriteString(inW, line+"\n") }
	recv := func() map[string]any {
		line, err := out.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		return m
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	if r := recv(); r["result"] == nil {
		t.Fatalf("initialize: %v", r)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, bad := range []string{"not json", `{"jsonrpc":"2.0"`, `[1,2]`, `"str"`, `{"id":2,"method":` + strings.Repeat(" ", 1200) + `"x"}`} {
		send(bad)
		r := recv()
		e, _ := r["error"].(map[string]any)
		if e == nil || e["code"] != float64(-32700) || r["id"] != nil {
			t.Errorf("%.20q answered %v", bad, r)
		}
		if _, ok := r["id"]; !ok {
			t.Errorf("%.20q: the error has no id member: %v", bad, r)
		}
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ping","arguments":{}}}`)
	if r := recv(); r["id"] != float64(3) || !strings.Contains(toJSON(r), "pong") {
		t.Errorf("after the bad lines: %v", r)
	}
	send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nosuch","arguments":{}}}`)
	if r := recv(); r["error"] == nil && !strings.Contains(toJSON(r), `"isError":true`) {
		t.Errorf("unknown tool: %v", r)
	}
	inW.Close()
	if err := <-done; err != nil && err != io.EOF && !strings.Contains(err.Error(), "EOF") {
		t.Errorf("Run: %v", err)
	}
	outW.Close()
}

func toJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// The turn's files are read again only when a stat says they changed; a change of content
// of the same size is seen, a rewrite with the same content is no change.
func TestFingerprint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := dir + "/turn.json"
	write := func(s string) {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"turn":"a"}`)
	f := &Face{opts: Options{Files: func() []string { return []string{p, dir + "/missing"} }}}
	a := f.fingerprint()
	if f.fingerprint() != a {
		t.Fatal("no change, another fingerprint")
	}
	write(`{"turn":"a"}`)
	if f.fingerprint() != a {
		t.Error("the same content written again is a change")
	}
	write(`{"turn":"b"}`)
	b := f.fingerprint()
	if b == a {
		t.Error("a change of the same size was not seen")
	}
	if err := os.WriteFile(dir+"/missing", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if f.fingerprint() == b {
		t.Error("a file that appeared was not seen")
	}
	// An absent file is remembered as absent (not read again at every call), and its going
	// away again is seen.
	if err := os.Remove(dir + "/missing"); err != nil {
		t.Fatal(err)
	}
	if first, again := f.fingerprint(), f.fingerprint(); first != b || again != b {
		t.Error("a file that went away again was not seen as absent")
	}
}

// The face writes every message exactly as the SDK's EncodeMessage writes it: a response's
// result is only spared the copy EncodeMessage would make.
func TestEncodeMessageAsTheSDKDoes(t *testing.T) {
	id := func(v any) jsonrpc.ID {
		id, err := jsonrpc.MakeID(v)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	result := json.RawMessage(`{"content":[{"type":"text","text":"<a> & \u2028 é \"q\""}],"structuredContent":{"a":[1,2.5,null,true]}}`)
	msgs := []jsonrpc.Message{
		&jsonrpc.Response{ID: id(float64(7)), Result: result},
		&jsonrpc.Response{ID: id("req-<1>&\"x\""), Result: result},
		&jsonrpc.Response{ID: id("é"), Result: json.RawMessage(`{}`)},
		&jsonrpc.Response{ID: id(float64(1)), Error: &jsonrpc.Error{Code: -32601, Message: "unknown tool"}},
		&jsonrpc.Response{ID: id(float64(2)), Result: json.RawMessage("{\n}")},
		&jsonrpc.Request{Method: "notifications/tools/list_changed"},
		&jsonrpc.Request{ID: id(float64(3)), Method: "ping", Params: json.RawMessage(`{}`)},
	}
	for _, m := range msgs {
		got, err := encodeMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		want, err := jsonrpc.EncodeMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("wrote %s, the SDK %s", got, want)
		}
	}
}
