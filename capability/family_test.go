package capability

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/mcpstdio"
	"github.com/spear-shell/spear-shell/policy"
)

// sizedTools returns n READ tools whose description bytes plus compact inputSchema bytes
// total exactly total.
func sizedTools(n, total int) []any {
	schema := `{"type":"object"}` // 17 bytes compact
	var tools []any
	left := total
	for i := 0; i < n; i++ {
		d := (total - n*len(schema)) / n
		if i == n-1 {
			d = left - len(schema)
		}
		left -= d + len(schema)
		tools = append(tools, obj("name", fmt.Sprintf("t%d", i), "description", strings.Repeat("d", d),
			"inputSchema", obj("type", "object"), "behavior", obj("echo", true)))
	}
	return tools
}

func names(n int) []string {
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, fmt.Sprintf("t%d", i))
	}
	return out
}

func TestWholeOrIndex(t *testing.T) {
	t.Parallel()
	cases := []struct {
		n, bytes int
		mode     string
	}{
		{8, 6000, "whole"},
		{9, 600, "index"},
		{8, 6001, "index"},
		{1, 6000, "whole"},
		{1, 6001, "index"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%d-%d", c.n, c.bytes), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil, provSpec{id: "p", entry: obj("read", names(c.n)), fake: obj("tools", sizedTools(c.n, c.bytes))})
			tr := f.turn()
			var out, errb bytes.Buffer
			if code := tr.Context(context.Background(), &out, &errb); code != 0 {
				t.Fatalf("context: %d %s", code, errb.String())
			}
			want := map[string]string{"whole": "shown whole", "index": ", index"}[c.mode]
			if !strings.Contains(out.String(), want) {
				t.Fatalf("want %s:\n%s", c.mode, short(out.String()))
			}
			if l := ask(tr, "list"); l.stdout+"note: the shell runs without isolation: none (test)\n" != out.String() {
				t.Errorf("list differs from --context:\n%s\n%s", short(l.stdout), short(out.String()))
			}
			r := ask(tr, "invoke", "p/t0", `{}`)
			if c.mode == "whole" && r.code != 0 || c.mode == "index" && (r.code != 3 || !strings.Contains(r.stderr, "not-described")) {
				t.Fatalf("invoke before describe in %s mode: %+v", c.mode, r)
			}
			if c.mode == "index" {
				if d := ask(tr, "describe", "p/t0"); d.code != 0 {
					t.Fatalf("describe: %+v", d)
				}
				// described in an earlier process counts for a later one
				if r := ask(f.turn(), "invoke", "p/t0", `{}`); r.code != 0 {
					t.Fatalf("invoke after describe: %+v", r)
				}
			}
			ev := f.events()
			found := false
			for _, e := range ev {
				if e["event"] == "capability_index_exposed" && e["mode"] == c.mode {
					found = true
				}
			}
			if !found {
				t.Errorf("no capability_index_exposed with mode %s", c.mode)
			}
		})
	}
}

func TestIndexLines(t *testing.T) {
	t.Parallel()
	tools := sizedTools(9, 900)
	tools[3].(map[string]any)["description"] = "First line \x1b[31mred\x1b[0m\u202e.\nSecond line."
	tools[4].(map[string]any)["description"] = strings.Repeat("long ", 100)
	f := newFixture(t, nil, provSpec{id: "p", entry: obj("read", names(4)), fake: obj("tools", tools)})
	r := ask(f.turn(), "list")
	lines := strings.Split(r.stdout, "\n")
	if !strings.Contains(r.stdout, "p/t3  READ  First line red.\n") {
		t.Errorf("index line not cleaned or not the first line:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "p/t5  WRITE  ") {
		t.Errorf("WRITE not marked:\n%s", r.stdout)
	}
	for _, l := range lines {
		if len(l) > 140 {
			t.Errorf("index line not bounded: %d bytes", len(l))
		}
	}
	var ids []string
	for _, l := range lines[1:10] {
		ids = append(ids, strings.Fields(l)[0])
	}
	for i := 1; i < len(ids); i++ {
		if ids[i-1] > ids[i] {
			t.Errorf("index not sorted: %v", ids)
		}
	}
}

func TestGeneralTurnHidesWrite(t *testing.T) {
	t.Parallel()
	f := newFixture(t, obj("task", "general"), provSpec{id: "p", entry: obj("read", []string{"r"}, "write", "allow",
		"tasks", []string{"general"}), fake: obj("tools", []any{echoTool("r"), echoTool("w")})})
	tr := f.turn()
	r := ask(tr, "list")
	if !strings.Contains(r.stdout, "p/r") || strings.Contains(r.stdout, "p/w") {
		t.Fatalf("general listing: %s", r.stdout)
	}
	if r := ask(tr, "invoke", "p/w", `{}`); r.code != 3 || !strings.Contains(r.stderr, "unknown-capability") {
		t.Fatalf("hidden WRITE: %+v", r)
	}
}

func TestFamilySharedAcrossProcesses(t *testing.T) {
	t.Parallel()
	fake := obj("tools", []any{echoTool("echo"), echoTool("put")})
	f := newFixture(t, nil, provSpec{id: "p", entry: obj("read", []string{"echo"}), fake: fake},
		provSpec{id: "q", entry: obj("read", []string{"echo"}), fake: obj("tools", []any{echoTool("echo")})})
	// three -c processes of one turn
	for i := 0; i < 3; i++ {
		tr := NewTurn(f.settings())
		r := ask(tr, "invoke", "p/echo", fmt.Sprintf(`{"message":"%d"}`, i))
		tr.Close("done")
		if r.code != 0 {
			t.Fatalf("process %d: %+v", i, r)
		}
	}
	count := map[string]int{}
	for _, n := range f.eventNames() {
		count[n]++
	}
	for _, ev := range []string{"turn_started", "provider_registered", "capability_family_selected"} {
		want := 1
		if ev == "provider_registered" {
			want = 2
		}
		if count[ev] != want {
			t.Errorf("%s recorded %d times, want %d", ev, count[ev], want)
		}
	}
	if count["capability_invoked"] != 6 {
		t.Errorf("capability_invoked: %d", count["capability_invoked"])
	}

	// An edited state cannot turn a WRITE into a READ: classes come from the configuration.
	pins, err := os.ReadFile(filepath.Join(f.state, "pins"))
	if err != nil || !strings.Contains(string(pins), "p/put ") {
		t.Fatalf("pins = %q, %v", pins, err)
	}
	for _, name := range []string{"pins", "family"} {
		os.Remove(filepath.Join(f.state, name))
	}
	os.WriteFile(filepath.Join(f.state, "family"), []byte("whole"), 0o600)
	os.WriteFile(filepath.Join(f.state, "class@p@put"), []byte("READ"), 0o600)
	os.WriteFile(filepath.Join(f.state, "pins"), append(pins, []byte("p/put READ\n")...), 0o600)
	r := ask(f.turn(), "invoke", "p/put", `{"message":"x"}`)
	if r.code != 3 || !strings.Contains(r.stderr, "write-refused") {
		t.Fatalf("edited state: %+v", r)
	}

	// A definition change between processes.
	f.write(filepath.Join(f.dir, "p.json"), obj("record", f.recordPath(), "tools", []any{
		obj("name", "echo", "description", "Changed.", "inputSchema", obj("type", "object"), "behavior", obj("echo", true)), echoTool("put")}))
	before := len(f.record())
	r = ask(f.turn(), "invoke", "p/echo", `{}`)
	if r.code != 3 || !strings.Contains(r.stderr, "definition-changed") || len(f.record()) != before {
		t.Fatalf("definition change: %+v", r)
	}
	if r := ask(f.turn(), "invoke", "q/echo", `{}`); r.code != 0 {
		t.Fatalf("other provider: %+v", r)
	}
}

func TestSessionEndsWithTurnEnded(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, provSpec{id: "p", entry: obj("read", []string{"echo"}), fake: obj("tools", []any{echoTool("echo")})})
	s := f.settings()
	s.Session = true
	tr := NewTurn(s)
	if r := ask(tr, "invoke", "p/echo", `{}`); r.code != 0 {
		t.Fatalf("%+v", r)
	}
	tr.Close("eof")
	tr.Close("eof") // idempotent
	names := f.eventNames()
	if names[len(names)-1] != "turn_ended" {
		t.Errorf("last event %s, want turn_ended", names[len(names)-1])
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil,
		provSpec{id: "good", entry: obj("read", []string{"echo", "ghost"}, "scope", "corpus demo, other"),
			fake: obj("tools", []any{echoTool("echo"), echoTool("put"), obj("name", "bad name", "inputSchema", obj())})},
		provSpec{id: "old", fake: obj("version", "2024-11-05")},
	)
	var out, errb bytes.Buffer
	code := Check(context.Background(), f.settings(), &out, &errb)
	s := out.String()
	for _, want := range []string{
		"good: ok (2 tools)", "  READ  echo", "  WRITE put", `left out: bad name`,
		`read entry "ghost" names no tool`, `scope names unknown corpus "other"`, "reaches projects demo; tasks implementation, mixed",
		`old: unavailable (it speaks protocol version "2024-11-05"`, "isolation: none (test)",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("--check lacks %q:\n%s", want, s)
		}
	}
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}

	f2 := newFixture(t, nil, provSpec{id: "good", entry: obj("read", []string{"echo"}), fake: obj("tools", []any{echoTool("echo")})})
	out.Reset()
	if code := Check(context.Background(), f2.settings(), &out, &errb); code != 0 {
		t.Errorf("healthy --check exit %d:\n%s", code, out.String())
	}
}

// --context only lists: each provider is stopped as soon as its tools are known, not when the
// turn closes. A later answer of the same Turn starts what it needs again and keeps it.
func TestContextStopsProvidersOnceListed(t *testing.T) {
	t.Parallel()
	eof := filepath.Join(t.TempDir(), "eof")
	f := newFixture(t, nil, provSpec{id: "p", entry: obj("read", names(1)),
		fake: obj("tools", sizedTools(1, 100), "eofFile", eof)})
	tr := f.turn()
	var out, errb bytes.Buffer
	if code := tr.Context(context.Background(), &out, &errb); code != 0 {
		t.Fatalf("context: %d %s", code, errb.String())
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(eof); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the provider's stdin was not closed after --context listed it")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := os.Remove(eof); err != nil {
		t.Fatal(err)
	}
	if r := ask(tr, "invoke", "p/t0", `{}`); r.code != 0 {
		t.Fatalf("invoke after --context: %+v", r)
	}
	if _, err := os.Stat(eof); err == nil {
		t.Error("the provider an invoke started was stopped after listing")
	}
}

// judgeDefinitions (a kept provider's tools asked by name) judges each tool exactly as
// judgeTools judges it within the whole listing: the same kept definition and hash, the same
// rejection and reason, the same WRITE tools hidden from a read-only offer.
func TestJudgeDefinitionsAsTheWholeListing(t *testing.T) {
	obj := json.RawMessage(`{"type":"object"}`)
	list := []mcpstdio.Tool{
		{Name: "echo", Description: "Echo.", InputSchema: json.RawMessage(`{ "type": "object" }`)},
		{Name: "dup", Description: "One.", InputSchema: obj},
		{Name: "dup", Description: "Two.", InputSchema: obj},
		{Name: "bad name", InputSchema: obj},
		{Name: "", InputSchema: obj},
		{Name: "noobj", InputSchema: json.RawMessage(`[]`)},
		{Name: "badout", InputSchema: obj, OutputSchema: json.RawMessage(`"x"`)},
		{Name: "nullout", InputSchema: obj, OutputSchema: json.RawMessage(`null`)},
		{Name: "out", InputSchema: obj, OutputSchema: json.RawMessage(`{"type": "object"}`)},
		{Name: "put", Description: "Writes.", InputSchema: obj},
	}
	count := map[string]int{}
	for _, tl := range list {
		count[tl.Name]++
	}
	cfg := &policy.Provider{ID: "p", Read: []string{"echo", "dup", "bad name", "noobj", "badout", "nullout", "out"}}
	for _, readOnly := range []bool{false, true} {
		kept, rejected := judgeTools(cfg, readOnly, nil, list)
		for _, name := range []string{"echo", "dup", "bad name", "", "noobj", "badout", "nullout", "out", "put", "missing"} {
			var defs []providers.Definition
			def := providers.Definition{Name: name, Count: count[name]}
			for i := range list {
				if list[i].Name == name {
					def.Tool = &list[i]
					break
				}
			}
			defs = append(defs, def, def) // a name asked twice is judged once
			k, r := judgeDefinitions(cfg, readOnly, nil, defs)
			var wantK []tool
			for _, tl := range kept {
				if tl.name == name {
					wantK = append(wantK, *tl)
				}
			}
			wantR := map[rejectedTool]bool{}
			for _, rj := range rejected {
				if rj.name == name {
					wantR[rj] = true
				}
			}
			var gotK []tool
			for _, tl := range k {
				gotK = append(gotK, *tl)
			}
			gotR := map[rejectedTool]bool{}
			for _, rj := range r {
				gotR[rj] = true
			}
			if !reflect.DeepEqual(gotK, wantK) || !maps.Equal(gotR, wantR) {
				t.Errorf("readOnly %v, %q: kept %+v rejected %v; the whole listing: kept %+v rejected %v", readOnly, name, gotK, gotR, wantK, wantR)
			}
		}
	}
}
