package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/spear-shell/spear-shell/testdata/testkit"
)

// rawFace is spear-mcp driven by lines written by hand.
type rawFace struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *lockedBuffer
}

func (fx *fixture) startRaw(t *testing.T) *rawFace {
	t.Helper()
	r := &rawFace{stderr: &lockedBuffer{}}
	r.cmd = exec.Command(filepath.Join(binDir, "spear-mcp"))
	r.cmd.Dir, r.cmd.Env, r.cmd.Stderr = fx.ws, fx.env, r.stderr
	var err error
	if r.in, err = r.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	r.out = bufio.NewReaderSize(out, 1<<20)
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.in.Close()
		r.cmd.Wait()
		if strings.Contains(r.stderr.String(), "WARNING: DATA RACE") {
			t.Errorf("spear-mcp:\n%s", r.stderr.String())
		}
	})
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := r.read(t); m["id"] != 1.0 || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	r.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return r
}

func (r *rawFace) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		t.Fatalf("write: %v", err)
	}
}

// read reads the next message, skipping notifications.
func (r *rawFace) read(t *testing.T) map[string]any {
	t.Helper()
	for {
		line, err := r.out.ReadBytes('\n')
		if err != nil {
			t.Fatalf("read: %v (stderr %s)", err, r.stderr.String())
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("the face wrote a line that is not JSON: %q", line)
		}
		if _, isNote := m["method"]; isNote && m["id"] == nil {
			continue
		}
		return m
	}
}

func rpcCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

// TestFaceBadLines: a line that is not JSON, JSON that is not JSON-RPC, and a line over 64
// MiB are each answered -32700 (id null) and the session goes on; an unknown tool gets the
// protocol's error.
func TestFaceBadLines(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, refusalCaps, map[string]any{}, refusalFiles)
	r := fx.startRaw(t)
	big := `{"jsonrpc":"2.0","id":99,"method":"tools/list","params":{"pad":"` + strings.Repeat("a", 64<<20) + `"}}`
	for name, line := range map[string]string{
		"not JSON":        "this is not json",
		"not JSON-RPC":    `{"hello": "world"}`,
		"an array":        `[1, 2, 3]`,
		"over 64 MiB":     big,
		"truncated JSON":  `{"jsonrpc":"2.0","id":5,"method":"tools/li`,
		"a bare string":   `"tools/list"`,
		"a wrong version": `{"jsonrpc":"1.0","id":6,"method":"tools/list"}`,
	} {
		r.send(t, line)
		m := r.read(t)
		if rpcCode(m) != -32700 {
			t.Errorf("%s: answered %v, want -32700", name, m)
		}
		if id, present := m["id"]; !present || id != nil {
			t.Errorf("%s: id %v, want null", name, m["id"])
		}
		// the session goes on
		r.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		if m := r.read(t); m["id"] != 2.0 || m["result"] == nil {
			t.Fatalf("after %s: tools/list answered %v", name, m)
		}
	}
	r.send(t, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}`)
	if m := r.read(t); m["id"] != 3.0 || rpcCode(m) != -32602 {
		t.Errorf("an unknown tool: %v", m)
	}
	r.send(t, `{"jsonrpc":"2.0","id":10,"method":"no/such/method"}`)
	if m := r.read(t); m["id"] != 10.0 || rpcCode(m) != -32601 {
		t.Errorf("an unknown method: %v", m)
	}
	r.send(t, `{"jsonrpc":"2.0","id":11,"method":"prompts/get","params":{"name":"nope"}}`)
	if m := r.read(t); m["id"] != 11.0 || rpcCode(m) != -32602 {
		t.Errorf("an unknown prompt: %v", m)
	}
	r.send(t, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"spear_invoke","arguments":{"id":"p/echo","arguments":{"message":"still here"}}}}`)
	m := r.read(t)
	res, _ := m["result"].(map[string]any)
	if m["id"] != 4.0 || res == nil || res["isError"] == true || !bytes.Contains(mustJSON(res), []byte(`still here`)) {
		t.Errorf("a call after the bad lines: %v", m)
	}
	// EOF ends the face, with 0
	r.in.Close()
	if err := r.cmd.Wait(); err != nil {
		t.Errorf("the face ended with %v; stderr %s", err, r.stderr.String())
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// TestFaceClientGoesAway: a client that disconnects (its stdin closed) mid-call: the call is
// cancelled at the provider (notifications/cancelled) and the face ends; with the keeper and
// with the providers the face runs itself.
func TestFaceClientGoesAway(t *testing.T) {
	t.Parallel()
	for _, keep := range []int{300, 0} {
		t.Run(map[int]string{300: "keeper", 0: "own providers"}[keep], func(t *testing.T) {
			t.Parallel()
			fx := newFixture(t, refusalCaps, map[string]any{"keep_providers": keep}, refusalFiles)
			r := fx.startRaw(t)
			r.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"spear_invoke","arguments":{"id":"p/wait","arguments":{}}}}`)
			fx.awaitCall(t, "p.record", "wait")
			r.in.Close()
			if err := r.cmd.Wait(); err != nil {
				t.Errorf("the face ended with %v; stderr %s", err, r.stderr.String())
			}
			fx.awaitCall(t, "p.record", "cancelled")
			fx.awaitRecord(t, "capability_invoked,face=mcp,phase=outcome,code=interrupted,capability=p/wait")
			if keep == 0 && !testkit.AwaitGone(filepath.Join(fx.dir, "p.json")) {
				t.Errorf("the face's own provider outlives it: %v", testkit.LivePids(filepath.Join(fx.dir, "p.json")))
			}
		})
	}
}

// TestFaceSIGTERM: SIGTERM ends the face (0), stopping the providers it runs itself; the
// turn's end is --end-turn's to record, so no turn_ended is written.
func TestFaceSIGTERM(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, refusalCaps, map[string]any{"keep_providers": 0}, refusalFiles)
	r := fx.startRaw(t)
	r.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"spear_invoke","arguments":{"id":"p/echo","arguments":{"message":"x"}}}}`)
	if m := r.read(t); m["id"] != 2.0 || mustJSON(m) == nil || bytes.Contains(mustJSON(m), []byte(`"isError":true`)) {
		t.Fatalf("invoke: %v", m)
	}
	pjson := filepath.Join(fx.dir, "p.json")
	if len(testkit.LivePids(pjson)) == 0 {
		t.Fatal("no provider runs")
	}
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Wait(); err != nil {
		t.Errorf("the face ended with %v; stderr %s", err, r.stderr.String())
	}
	if !testkit.AwaitGone(pjson) {
		t.Errorf("its providers outlive the face: %v", testkit.LivePids(pjson))
	}
	if n := fx.count(t, "turn_ended"); n != 0 {
		t.Errorf("%d turn_ended records", n)
	}
}

// TestFaceCancelledResult: a call the client cancels (notifications/cancelled) is answered as
// a refusal, interrupted, whose first text is the shell's line, and the cancellation is passed
// on to the provider.
func TestFaceCancelledResult(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, refusalCaps, map[string]any{}, refusalFiles)
	r := fx.startRaw(t)
	r.send(t, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"spear_invoke","arguments":{"id":"p/wait","arguments":{}}}}`)
	fx.awaitCall(t, "p.record", "wait")
	r.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"the user pressed Esc"}}`)
	m := r.read(t)
	var res struct {
		IsError           bool
		Content           []struct{ Text string }
		StructuredContent map[string]any
	}
	if err := json.Unmarshal(mustJSON(m["result"]), &res); err != nil || m["id"] != 7.0 {
		t.Fatalf("the cancelled call was answered %v", m)
	}
	const line = "spear-capability: interrupted: the answer was interrupted"
	if !res.IsError || len(res.Content) == 0 || res.Content[0].Text != line ||
		res.StructuredContent["code"] != "interrupted" || res.StructuredContent["message"] != "the answer was interrupted" {
		t.Errorf("the cancelled call: %s", mustJSON(m))
	}
	fx.awaitCall(t, "p.record", "cancelled")
	fx.want(t, "capability_invoked,face=mcp,phase=outcome,code=interrupted,capability=p/wait", "interrupted,face=mcp,capability=p/wait")
}
