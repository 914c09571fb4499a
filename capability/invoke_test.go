package capability

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spear-shell/spear-shell/capability/schema"
	"github.com/spear-shell/spear-shell/policy"
)

// demoTools is a family of more than 8 tools: shown as an index, describe before invoke.
func demoTools() []any {
	return []any{
		echoTool("echo"),
		obj("name", "typed", "description", "Typed arguments.",
			"inputSchema", obj("type", "object", "additionalProperties", true,
				"required", []string{"title"},
				"properties", obj("title", obj("type", "string"), "count", obj("type", "integer", "maximum", 10),
					"n", obj("type", "number"), "when", obj("type", "string", "format", "date"))),
			"behavior", obj("echo", true)),
		obj("name", "failing", "inputSchema", obj("type", "object"), "behavior", obj("text", []string{"it broke"}, "isError", true)),
		obj("name", "rpcerr", "inputSchema", obj("type", "object"), "behavior", obj("rpcError", obj("code", -32000, "message", "boom\x1b[31m"))),
		obj("name", "out_ok", "inputSchema", obj("type", "object"), "outputSchema", obj("type", "object", "required", []string{"n"}, "properties", obj("n", obj("type", "integer"))),
			"behavior", obj("structured", obj("n", 3))),
		obj("name", "out_bad", "inputSchema", obj("type", "object"), "outputSchema", obj("type", "object", "properties", obj("n", obj("type", "integer"))),
			"behavior", obj("structured", obj("n", "three"), "text", []string{"three"})),
		obj("name", "out_missing", "inputSchema", obj("type", "object"), "outputSchema", obj("type", "object"),
			"behavior", obj("text", []string{"no structure"})),
		obj("name", "hostile", "inputSchema", obj("type", "object"), "behavior", obj("hostile", true)),
		obj("name", "big", "inputSchema", obj("type", "object"), "behavior", obj("bigText", 100000)),
		obj("name", "media", "inputSchema", obj("type", "object"), "behavior", obj("content", []any{
			obj("type", "image", "data", "aGVsbG8=", "mimeType", "image/png"),
			obj("type", "resource", "resource", obj("uri", "file:///x", "blob", "AAAA", "mimeType", "application/octet-stream"))},
			"structured", obj("shown", true))),
		obj("name", "badref", "inputSchema", obj("type", "object", "properties", obj("a", obj("$ref", "https://example.com/s.json"))), "behavior", obj("echo", true)),
		obj("name", "secret", "inputSchema", obj("type", "object"), "behavior", obj("env", "TOKEN", "stderr", "s3cr3t-canary")),
		obj("name", "refused_w", "inputSchema", obj("type", "object", "properties", obj("a", obj("type", "string"))), "behavior", obj("echo", true)),
	}
}

func demoRead() []string {
	return []string{"echo", "typed", "failing", "rpcerr", "out_ok", "out_bad", "out_missing", "hostile", "big", "media", "badref", "secret"}
}

func TestInvoke(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, provSpec{id: "demo",
		entry: obj("read", demoRead(), "env", obj("TOKEN", "s3cr3t-canary")),
		fake:  obj("tools", demoTools())})
	tr := f.turn()
	cases := []struct {
		name, target, args string
		exit               int
		stdout, stderr     []string // substrings
		reached            bool
	}{
		{"unknown provider", "nope/echo", `{}`, 3, nil, []string{"unknown-capability"}, false},
		{"unknown tool", "demo/nope", `{}`, 3, nil, []string{"unknown-capability: demo/nope"}, false},
		{"undeclared even with additionalProperties", "demo/typed", `{"title":"x","extra":1}`, 3, nil,
			[]string{`invalid-arguments: demo/typed: argument "extra" is not declared`, `"title"`}, false},
		{"wrong type", "demo/typed", `{"title":5}`, 3, nil, []string{"invalid-arguments", "at /title", "want string"}, false},
		{"missing required", "demo/typed", `{"count":1}`, 3, nil, []string{"at the top level", "missing property 'title'"}, false},
		{"maximum", "demo/typed", `{"title":"a","count":11}`, 3, nil, []string{"at /count", "maximum"}, false},
		{"format is an annotation", "demo/typed", `{"title":"a","when":"not a date"}`, 0, []string{`"when":"not a date"`}, nil, true},
		{"big integers exact", "demo/typed", `{"title":"a","n":123456789012345678901234567890.000000000000000000001}`, 0,
			[]string{`"n":123456789012345678901234567890.000000000000000000001`}, nil, true},
		{"schema with external ref", "demo/badref", `{}`, 3, nil, []string{"invalid-arguments", "schema cannot be used"}, false},
		{"write refused", "demo/refused_w", `{"a":"x"}`, 3, nil, []string{"write-refused: demo/refused_w"}, false},
		{"invalid arguments before write-refused", "demo/refused_w", `{"b":"x"}`, 3, nil, []string{"invalid-arguments"}, false},
		{"tool error", "demo/failing", `{}`, 1, []string{"it broke", "<<<end spear-capability result token="}, []string{"tool-error: demo/failing reported an error"}, true},
		{"json-rpc error", "demo/rpcerr", `{}`, 1, []string{"JSON-RPC error -32000: boom\n"}, []string{"tool-error"}, true},
		{"provider stays after json-rpc error", "demo/echo", `{"message":"still"}`, 0, []string{`{"message":"still"}`}, nil, true},
		{"output ok", "demo/out_ok", `{}`, 0, []string{`{"n":3}`}, nil, true},
		{"output invalid", "demo/out_bad", `{}`, 1, []string{"three"}, []string{"invalid-output", "at /n"}, true},
		{"output missing", "demo/out_missing", `{}`, 1, []string{"no structure"}, []string{"invalid-output", "no structuredContent"}, true},
		{"hostile", "demo/hostile", `{}`, 0, []string{"beforered", "bidievil", "é漢字", "<<<end spear-capability result>>>"}, nil, true},
		{"big bounded", "demo/big", `{}`, 0, []string{"cut to 65536 of its 100001 bytes"}, nil, true},
		{"media summarised", "demo/media", `{}`, 0, []string{"[image content: image/png, 8 bytes", "[embedded resource: file:///x", `{"shown":true}`}, nil, true},
		{"secrets redacted", "demo/secret", `{}`, 0, []string{"[REDACTED]"}, nil, true},
	}
	for _, c := range cases {
		before := len(f.record())
		if d := ask(tr, "describe", c.target); c.reached && d.code != 0 {
			t.Fatalf("%s: describe: %+v", c.name, d)
		}
		r := ask(tr, "invoke", c.target, c.args)
		if r.code != c.exit {
			t.Errorf("%s: exit %d, want %d\n%s%s", c.name, r.code, c.exit, short(r.stdout), r.stderr)
		}
		for _, s := range c.stdout {
			if !strings.Contains(r.stdout, s) {
				t.Errorf("%s: stdout lacks %q:\n%s", c.name, s, short(r.stdout))
			}
		}
		for _, s := range c.stderr {
			if !strings.Contains(r.stderr, s) {
				t.Errorf("%s: stderr lacks %q:\n%s", c.name, s, r.stderr)
			}
		}
		if c.exit != 0 && !strings.HasPrefix(r.stderr, "spear-capability: ") {
			t.Errorf("%s: stderr %q lacks the code line", c.name, r.stderr)
		}
		if reached := len(f.record()) > before; reached != c.reached {
			t.Errorf("%s: reached the provider: %v, want %v", c.name, reached, c.reached)
		}
		all := r.stdout + r.stderr
		if strings.Contains(all, "s3cr3t-canary") || strings.ContainsAny(all, "\x1b\u202e\r") {
			t.Errorf("%s: output not clean or not redacted: %q", c.name, all)
		}
		if strings.Contains(r.stdout, "<<<spear-capability result") {
			checkFrame(t, c.name, r.stdout)
		}
	}
	b, _ := os.ReadFile(f.auditLog)
	if bytes.Contains(b, []byte("s3cr3t-canary")) {
		t.Errorf("audit file holds the secret")
	}
}

// checkFrame checks that the opening and closing markers carry the same token and that the
// token occurs nowhere else.
func checkFrame(t *testing.T, name, out string) {
	t.Helper()
	i := strings.Index(out, "token=")
	if i < 0 {
		t.Fatalf("%s: no token in %q", name, out)
	}
	token := out[i+6 : i+6+24]
	if n := strings.Count(out, token); n != 2 {
		t.Errorf("%s: token %s occurs %d times", name, token, n)
	}
	if !strings.Contains(out, "<<<end spear-capability result token="+token+">>>\n") {
		t.Errorf("%s: no closing marker with the token", name)
	}
	if !strings.Contains(out[:strings.Index(out, "\n")], "audit_id=") {
		t.Errorf("%s: opening marker without audit_id", name)
	}
}

func TestWriteGate(t *testing.T) {
	t.Parallel()
	type gc struct {
		write, mode string
		approver    []string
		exit        int
		code        string
	}
	cases := []gc{
		{"refuse", "read-only", nil, 3, "write-refused"},
		{"refuse", "ask", []string{"/bin/true"}, 3, "write-refused"},
		{"refuse", "auto-approve", nil, 3, "write-refused"},
		{"confirm", "read-only", []string{"/bin/true"}, 3, "write-refused"},
		{"confirm", "ask", nil, 3, "not-confirmed"},
		{"confirm", "ask", []string{"/bin/false"}, 3, "not-confirmed"},
		{"confirm", "ask", []string{"/bin/true"}, 0, ""},
		{"confirm", "auto-approve", nil, 0, ""},
		{"allow", "read-only", nil, 3, "write-refused"},
		{"allow", "ask", nil, 0, ""},
		{"allow", "auto-approve", nil, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.write+"/"+c.mode, func(t *testing.T) {
			t.Parallel()
			m := obj("permission_mode", c.mode)
			if c.approver != nil {
				m["approver"] = c.approver
			}
			f := newFixture(t, m, provSpec{id: "w", entry: obj("write", c.write),
				fake: obj("tools", []any{echoTool("put")})})
			r := ask(f.turn(), "invoke", "w/put", `{"message":"x"}`)
			if r.code != c.exit || (c.code != "" && !strings.Contains(r.stderr, c.code+":")) {
				t.Fatalf("got %+v, want exit %d code %s", r, c.exit, c.code)
			}
			if got := len(f.record()); (got > 0) != (c.exit == 0) {
				t.Fatalf("calls reaching the provider: %d", got)
			}
		})
	}
}

func TestFailingProviders(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil,
		provSpec{id: "good", entry: obj("read", []string{"echo"}), fake: obj("tools", []any{echoTool("echo")})},
		provSpec{id: "crashy", entry: obj("read", []string{"crash"}), fake: obj("tools", []any{
			obj("name", "crash", "inputSchema", obj("type", "object"), "behavior", obj("crash", 3))})},
		provSpec{id: "slow", entry: obj("read", []string{"sleep"}, "timeout", 0.3), fake: obj("tools", []any{
			obj("name", "sleep", "inputSchema", obj("type", "object"), "behavior", obj("sleepMs", 3000))})},
		provSpec{id: "old", fake: obj("version", "2024-11-05", "tools", []any{echoTool("x")})},
		provSpec{id: "dead", fake: obj("exit", 1, "stderr", "cannot start")},
		provSpec{id: "hang", entry: obj("timeout", 0.3), fake: obj("hang", true)},
	)
	tr := f.turn()
	r := ask(tr, "list")
	if r.code != 0 {
		t.Fatalf("list: %+v", r)
	}
	for _, id := range []string{"old", "dead", "hang"} {
		if !strings.Contains(r.stdout, "Provider "+id+" is unavailable") {
			t.Errorf("listing does not name %s unavailable:\n%s", id, r.stdout)
		}
		if strings.Count(r.stderr, "provider "+id+" is unavailable") != 1 {
			t.Errorf("stderr does not say %s once:\n%s", id, r.stderr)
		}
	}
	if !strings.Contains(r.stderr, `protocol version "2024-11-05"`) {
		t.Errorf("stderr lacks the version: %s", r.stderr)
	}
	r = ask(tr, "list")
	if strings.Contains(r.stderr, "is unavailable") {
		t.Errorf("unavailable said twice in a turn: %s", r.stderr)
	}
	for _, c := range []struct {
		target string
		exit   int
		code   string
	}{
		{"crashy/crash", 4, "unavailable"},
		{"crashy/crash", 4, "unavailable"},
		{"crashy/anything", 4, "unavailable"},
		{"slow/sleep", 4, "timeout"},
		{"slow/sleep", 4, "unavailable"},
		{"dead/x", 4, "unavailable"},
		{"good/echo", 0, ""},
	} {
		r := ask(tr, "invoke", c.target, `{}`)
		if r.code != c.exit || !strings.Contains(r.stderr, c.code) {
			t.Errorf("%s: %+v, want %d %s", c.target, r, c.exit, c.code)
		}
	}
	// A later process of the turn knows without starting them.
	r = ask(f.turn(), "invoke", "dead/x", `{}`)
	if r.code != 4 || strings.Contains(r.stderr, "for the rest of this turn: it could not") && strings.Count(r.stderr, "\n") > 1 {
		t.Errorf("later process: %+v", r)
	}
	names := strings.Join(f.eventNames(), " ")
	for _, ev := range []string{"provider_failed", "capability_refused", "capability_invoked"} {
		if !strings.Contains(names, ev) {
			t.Errorf("audit lacks %s: %s", ev, names)
		}
	}
}

func TestInterrupt(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, provSpec{id: "p", entry: obj("read", []string{"sleep", "echo"}), fake: obj("tools", []any{
		obj("name", "sleep", "inputSchema", obj("type", "object"), "behavior", obj("sleepMs", 5000)), echoTool("echo")})})
	tr := f.turn()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	var out, errb bytes.Buffer
	code := tr.Answer(ctx, Request{Verb: "invoke", Targets: []string{"p/sleep"}, Arguments: "{}"}, &out, &errb)
	if code != 130 || !strings.Contains(errb.String(), "interrupted") {
		t.Fatalf("interrupt: %d %q", code, errb.String())
	}
	// The session goes on: the provider is started again.
	if r := ask(tr, "invoke", "p/echo", `{"message":"again"}`); r.code != 0 {
		t.Fatalf("after interrupt: %+v", r)
	}
	if !strings.Contains(strings.Join(f.eventNames(), " "), "interrupted") {
		t.Errorf("no interrupted record")
	}
}

func TestNoCapabilities(t *testing.T) {
	t.Parallel()
	spec := provSpec{id: "secretprov", fake: obj("tools", []any{echoTool("echo")})}
	cases := []struct {
		name   string
		setup  func(f *fixture, s *Settings)
		reason string
	}{
		{"no manifest", func(f *fixture, s *Settings) { s.ManifestPath = "" }, "no turn manifest"},
		{"invalid manifest", func(f *fixture, s *Settings) { os.WriteFile(f.manifest, []byte(`{"turn":"t1"}`), 0o644) }, "invalid"},
		{"inside", func(f *fixture, s *Settings) { s.Inside = true }, "inside another's isolation boundary"},
		{"nested unconfined", func(f *fixture, s *Settings) { s.Inside, s.Unconfined = true, true }, "set the manifest's terminal"},
		{"standard question", func(f *fixture, s *Settings) {
			f.write(f.manifest, obj("turn", "t1", "task", "standard-question", "workspace", f.ws, "audit", f.auditLog, "state_dir", f.state))
		}, "no external capabilities are offered to this turn"},
		{"unregistered workspace", func(f *fixture, s *Settings) {
			f.write(f.manifest, obj("turn", "t1", "task", "implementation", "workspace", f.dir, "audit", f.auditLog, "state_dir", f.state))
		}, "no external capabilities are offered to this turn"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil, spec)
			s := f.settings()
			c.setup(f, &s)
			tr := NewTurn(s)
			defer tr.Close("test")
			for _, verb := range []string{"list", "describe", "invoke"} {
				r := ask(tr, verb, "secretprov/echo", "{}")
				if r.code != 3 || !strings.Contains(r.stderr, "no-capabilities: ") || !strings.Contains(r.stderr, c.reason) {
					t.Errorf("%s: %+v", verb, r)
				}
				if strings.Contains(r.stdout+r.stderr, "secretprov") {
					t.Errorf("%s names a provider not offered: %+v", verb, r)
				}
				if s.Unconfined && strings.Contains(r.stderr, "boundary") {
					t.Errorf("%s: no boundary, yet one is spoken of: %+v", verb, r)
				}
			}
			var out, errb bytes.Buffer
			if code := tr.Context(context.Background(), &out, &errb); code != 0 || !strings.Contains(out.String(), "no external capabilities") {
				t.Errorf("--context: %d %q %q", code, out.String(), errb.String())
			}
			if len(f.record()) != 0 {
				t.Errorf("the provider was called")
			}
		})
	}
}

func TestAuditUnavailable(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, provSpec{id: "p", entry: obj("read", []string{"echo"}), fake: obj("tools", []any{echoTool("echo")})})
	f.write(f.manifest, obj("turn", "t1", "task", "implementation", "workspace", f.ws,
		"audit", filepath.Join(f.dir, "missing", "audit.jsonl"), "state_dir", f.state))
	r := ask(f.turn(), "invoke", "p/echo", `{}`)
	if r.code != 3 || !strings.Contains(r.stderr, "audit-unavailable: ") || len(f.record()) != 0 {
		t.Fatalf("%+v", r)
	}
}

func short(s string) string {
	if len(s) > 600 {
		return s[:600] + "..."
	}
	return s
}

// Prepare starts the family's providers ahead of the first answer, which takes them; a
// turn closed without an answer stops them (goleak and the race detector watch both).
func TestPrepare(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, provSpec{id: "demo", entry: obj("read", demoRead()), fake: obj("tools", demoTools())})

	tr := f.turn()
	ctx := context.Background()
	tr.Prepare(ctx)
	tr.Prepare(ctx) // loaded once: a second call starts nothing more
	var out, errb bytes.Buffer
	if code := tr.Answer(ctx, Request{Verb: "list"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "demo/echo") {
		t.Fatalf("list after Prepare = %d, %q, %q", code, out.String(), errb.String())
	}
	if r := ask(tr, "describe", "demo/echo"); r.code != 0 {
		t.Fatalf("describe = %+v", r)
	}

	// another process of a new turn: prepared, never asked
	g := newFixture(t, nil, provSpec{id: "demo", entry: obj("read", demoRead()), fake: obj("tools", demoTools())})
	unused := NewTurn(g.settings())
	unused.Prepare(ctx)
	unused.Close("never asked")
	unused.Prepare(ctx) // closed: nothing
	for _, name := range g.eventNames() {
		if name == "family_selected" || name == "provider_failed" {
			t.Errorf("an unanswered turn recorded %s", name)
		}
	}
}

// The answers' schema checker trusts the helper as it trusts a provider's programs: it is never
// started when it lies where the agent writes, or when no trust check was given; the schema is
// then unusable, never judged by the agent's program.
func TestSchemaHelperUntrusted(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	planted := filepath.Join(ws, schema.HelperName)
	ran := filepath.Join(ws, "ran")
	if err := os.WriteFile(planted, []byte("#!/bin/sh\ntouch "+ran+"\nwhile read l; do echo '{\"ok\":true}'; done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	man := &policy.Manifest{Workspace: ws}
	for _, e := range []*turnEnv{
		schemaEnv(planted, checkTrustedLexically, man),
		schemaEnv(helperBin, nil, man),
	} {
		unusable, _ := e.schemas.Check(json.RawMessage(`{"$id":"urn:x"}`), float64(1))
		if !strings.HasPrefix(unusable, "the schema checker cannot run: program refused: ") {
			t.Errorf("%s: unusable %q", e.s.SchemaHelper, unusable)
		}
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the planted helper ran")
	}
	// A trusted helper is asked.
	e := schemaEnv(helperBin, checkTrustedLexically, man)
	if unusable, failures := e.schemas.Check(json.RawMessage(`{"$id":"urn:x","type":"string"}`), float64(1)); unusable != "" || len(failures) != 1 {
		t.Errorf("trusted helper: unusable %q, failures %q", unusable, failures)
	}
}

// At most five failures are named, and how many more there are.
func TestJoinFailures(t *testing.T) {
	t.Parallel()
	var failures []string
	for i := range 7 {
		failures = append(failures, fmt.Sprintf("at /%d: got number, want string", i))
	}
	failures[1] += "\x1b[31m"
	got := joinFailures(failures)
	want := "at /0: got number, want string; at /1: got number, want string; at /2: got number, want string; " +
		"at /3: got number, want string; at /4: got number, want string (and 2 more)"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
