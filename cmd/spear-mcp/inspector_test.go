package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spear-shell/spear-shell/testdata/testkit"
)

// The MCP Inspector's CLI mode (SPEC 13, Tested): the pinned @modelcontextprotocol/inspector of
// testdata/inspector (make deps installs it) starts spear-mcp over stdio, as any MCP client does,
// and calls tools/list, tools/call, prompts/list and prompts/get, one Inspector process per call,
// in one turn whose family is the demo's notes provider. Without node or the Inspector it skips,
// unless SPEAR_REQUIRE_INTEROP=1 (make test). SPEAR_MCP_BIN names a spear-mcp to test instead of
// building this package (a stand-in while the face is being written).

// inspectorCall is one Inspector run: its arguments after the server, and what its answer must be.
type inspectorCall struct {
	name  string
	args  []string
	check func(res map[string]any) []string // what is wrong with the answer
}

func TestInspector(t *testing.T) {
	insp := inspectorDeps(t)
	bin := inspectorBinaries(t)
	w := newInspectorWorld(t, bin)
	defer w.endTurn(t)

	calls := []inspectorCall{
		{"tools/list", []string{"--method", "tools/list"}, inspToolsList},
		{"tools/call spear_explain", []string{"--method", "tools/call", "--tool-name", "spear_explain", "--tool-arg", "code=write-refused"},
			func(res map[string]any) []string {
				return inspOK(res, "write-refused")
			}},
		{"tools/call spear_explain (unknown code)", []string{"--method", "tools/call", "--tool-name", "spear_explain", "--tool-arg", "code=no-such-code"},
			func(res map[string]any) []string { return inspRefusal(res, "malformed") }},
		{"tools/call spear_search", []string{"--method", "tools/call", "--tool-name", "spear_search", "--tool-arg", "query=find notes by a word", "limit=5"},
			func(res map[string]any) []string {
				bad := inspOK(res, "notes/search_notes")
				if sc, _ := res["structuredContent"].(map[string]any); sc["admitted"] != 3.0 {
					bad = append(bad, fmt.Sprintf("structuredContent.admitted %v, want 3 (the family)", sc["admitted"]))
				}
				return bad
			}},
		{"tools/call spear_describe", []string{"--method", "tools/call", "--tool-name", "spear_describe", "--tool-arg", `ids=["notes/get_note"]`},
			func(res map[string]any) []string { return inspOK(res, "Get one note by id") }},
		{"tools/call spear_invoke (READ)", []string{"--method", "tools/call", "--tool-name", "spear_invoke",
			"--tool-arg", "id=notes/search_notes", `arguments={"query":"spear"}`},
			func(res map[string]any) []string {
				bad := inspOK(res, "n2  spear-shell")
				sc, _ := res["structuredContent"].(map[string]any)
				if sc["decision"] != "ok" || sc["capability"] != "notes/search_notes" || sc["auditId"] == nil || sc["external"] == nil {
					bad = append(bad, fmt.Sprintf("structuredContent %v, want capability, auditId, decision ok, external", sc))
				}
				return bad
			}},
		{"tools/call spear_invoke (refused WRITE)", []string{"--method", "tools/call", "--tool-name", "spear_invoke",
			"--tool-arg", "id=notes/create_note", `arguments={"title":"t","body":"b"}`},
			func(res map[string]any) []string { return inspRefusal(res, "write-refused") }},
		{"prompts/list", []string{"--method", "prompts/list"},
			func(res map[string]any) []string {
				prompts, _ := res["prompts"].([]any)
				for _, p := range prompts {
					if p, _ := p.(map[string]any); p["name"] == "review" && p["description"] == "Review the change before it lands" {
						return nil
					}
				}
				return []string{fmt.Sprintf("prompts %v, want review with its front matter's description", prompts)}
			}},
		{"prompts/get", []string{"--method", "prompts/get", "--prompt-name", "review"},
			func(res map[string]any) []string {
				if b, _ := json.Marshal(res["messages"]); !bytes.Contains(b, []byte("Read the diff and list what breaks.")) {
					return []string{fmt.Sprintf("messages %s, want the file's body", b)}
				}
				return nil
			}},
	}
	var table strings.Builder
	table.WriteString("| call | as expected |\n|---|---|\n")
	ok := 0
	for _, c := range calls {
		before := inspSize(w.audit)
		res, exit, stderr := w.inspect(t, insp, c.args...)
		bad := c.check(res)
		// An isError result makes the Inspector exit 5; anything else must exit 0.
		if isErr, _ := res["isError"].(bool); (exit != 0) != isErr || (isErr && exit != 5) {
			bad = append(bad, fmt.Sprintf("Inspector exit %d with isError %v", exit, isErr))
		}
		bad = append(bad, w.checkAudit(t, c.name, before)...)
		if len(bad) > 0 {
			t.Errorf("%s:\n  %s\nanswer: %s\nstderr: %s", c.name, strings.Join(bad, "\n  "), inspBrief(res), inspBrief(stderr))
		} else {
			ok++
		}
		fmt.Fprintf(&table, "| %s | %v |\n", c.name, len(bad) == 0)
	}
	fmt.Fprintf(&table, "| all | %d/%d |\n", ok, len(calls))
	t.Logf("MCP Inspector %s (CLI, stdio) against spear-mcp:\n%s", inspectorVersion(t, insp), table.String())
}

// inspToolsList: the five tools of the face and the family's direct tools, READ marked
// read-only, none declaring an outputSchema.
func inspToolsList(res map[string]any) []string {
	var bad, names []string
	tools, _ := res["tools"].([]any)
	for _, x := range tools {
		tool, _ := x.(map[string]any)
		name, _ := tool["name"].(string)
		names = append(names, name)
		if _, has := tool["outputSchema"]; has {
			bad = append(bad, name+" declares an outputSchema")
		}
		ro := false
		if ann, _ := tool["annotations"].(map[string]any); ann != nil {
			ro, _ = ann["readOnlyHint"].(bool)
		}
		switch name {
		case "notes__search_notes", "notes__get_note":
			if !ro {
				bad = append(bad, name+" (READ) is not readOnlyHint")
			}
		case "notes__create_note":
			if ro {
				bad = append(bad, name+" (WRITE) is readOnlyHint")
			}
		}
	}
	for _, want := range []string{"spear_search", "spear_describe", "spear_invoke", "spear_preflight", "spear_explain",
		"notes__search_notes", "notes__get_note", "notes__create_note"} {
		if !slices.Contains(names, want) {
			bad = append(bad, fmt.Sprintf("no tool %s in %v", want, names))
		}
	}
	return bad
}

// inspOK: a result that is not an error, whose text holds want.
func inspOK(res map[string]any, want string) []string {
	var bad []string
	if isErr, _ := res["isError"].(bool); isErr {
		bad = append(bad, "isError")
	}
	if !strings.Contains(inspText(res), want) {
		bad = append(bad, fmt.Sprintf("content lacks %q", want))
	}
	return bad
}

// refusal: an isError result whose first text is the shell's line and whose structuredContent
// is {code, message}.
func inspRefusal(res map[string]any, code string) []string {
	var bad []string
	if isErr, _ := res["isError"].(bool); !isErr {
		bad = append(bad, "not isError")
	}
	if !strings.HasPrefix(inspText(res), "spear-capability: "+code+": ") {
		bad = append(bad, fmt.Sprintf("first text does not start %q", "spear-capability: "+code+": "))
	}
	sc, _ := res["structuredContent"].(map[string]any)
	if _, hasMsg := sc["message"].(string); sc["code"] != code || !hasMsg {
		bad = append(bad, fmt.Sprintf("structuredContent %v, want code %s and a message", sc, code))
	}
	return bad
}

func inspText(res map[string]any) string {
	var parts []string
	items, _ := res["content"].([]any)
	for _, x := range items {
		if item, _ := x.(map[string]any); item["type"] == "text" {
			s, _ := item["text"].(string)
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n")
}

// inspectorDeps finds node and the pinned Inspector, or skips (fails with SPEAR_REQUIRE_INTEROP=1).
func inspectorDeps(t *testing.T) string {
	dir, err := filepath.Abs("../../testdata/inspector")
	if err != nil {
		t.Fatal(err)
	}
	_, npxErr := exec.LookPath("npx")
	_, modErr := os.Stat(filepath.Join(dir, "node_modules", ".bin", "mcp-inspector"))
	if npxErr != nil || modErr != nil {
		msg := fmt.Sprintf("the MCP Inspector is not installed (make deps installs testdata/inspector): npx %v; inspector %v", npxErr, modErr)
		if os.Getenv("SPEAR_REQUIRE_INTEROP") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return dir
}

func inspectorVersion(t *testing.T, dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "inspector", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p struct{ Version string }
	json.Unmarshal(data, &p)
	return p.Version
}

// inspectorBinaries builds spear-mcp (or takes SPEAR_MCP_BIN), spear-shell (for --end-turn) and
// the demo's provider into a directory of the test's own.
func inspectorBinaries(t *testing.T) string {
	own := os.Getenv("SPEAR_MCP_BIN")
	if srcs, _ := filepath.Glob("*.go"); own == "" && !slices.ContainsFunc(srcs, func(s string) bool {
		return !strings.HasSuffix(s, "_test.go")
	}) {
		t.Skip("spear-mcp is not in this tree yet (SPEAR_MCP_BIN names one to test)")
	}
	dir := testkit.ScratchDir(t, "spear-mcp-inspector-")
	if err := testkit.Build(dir+"/", "./cmd/spear-shell", "./testdata/demo/spear-demo-notes"); err != nil {
		t.Fatal(err)
	}
	if own != "" {
		data, err := os.ReadFile(own)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "spear-mcp"), data, 0o755); err != nil {
			t.Fatal(err)
		}
	} else if err := testkit.Build(filepath.Join(dir, "spear-mcp"), "./cmd/spear-mcp"); err != nil {
		t.Fatal(err)
	}
	return dir
}

// An inspectorWorld is one turn: the demo's notes provider in family docs, one prompt directory.
type inspectorWorld struct {
	bin, dir, audit string
	env             map[string]string // spear-mcp's environment, given to the Inspector with -e
}

func newInspectorWorld(t *testing.T, bin string) *inspectorWorld {
	dir := testkit.ScratchDir(t, "spear-mcp-inspector-")
	w := &inspectorWorld{bin: bin, dir: dir, audit: filepath.Join(dir, "turn", "audit.jsonl")}
	home, ws, prompts := filepath.Join(dir, "spear"), filepath.Join(dir, "ws"), filepath.Join(dir, "prompts")
	for _, d := range []string{home, ws, prompts, filepath.Join(dir, "turn"), filepath.Join(dir, "home")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	js := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	manifest := filepath.Join(dir, "turn", "turn.json")
	files := map[string]string{
		filepath.Join(home, "projects.json"): js(map[string]any{"projects": []any{
			map[string]any{"name": "ws", "root": ws, "families": []string{"docs"}}}}),
		filepath.Join(home, "capabilities.json"): js(map[string]any{
			"providers": []any{map[string]any{"id": "notes", "command": []string{filepath.Join(bin, "spear-demo-notes"), "notes"},
				"scope": "family docs", "read": []string{"search_notes", "get_note"}, "write": "refuse", "timeout": 10}},
			"prompts": map[string]any{"paths": []string{prompts}}}),
		manifest: js(map[string]any{"turn": "inspector", "session": "inspector", "task": "implementation",
			"workspace": ws, "audit": w.audit, "state_dir": filepath.Join(dir, "state")}),
		filepath.Join(prompts, "review.md"): "---\ndescription: Review the change before it lands\n---\nRead the diff and list what breaks.\n",
	}
	for name, text := range files {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w.env = map[string]string{"SPEAR_HOME": home, "SPEAR_TURN_MANIFEST": manifest, "SPEAR_ISOLATION": "none"}
	return w
}

// inspect runs the Inspector's CLI mode once against spear-mcp and reads its JSON answer (on
// stdout, or on stderr for an error).
func (w *inspectorWorld) inspect(t *testing.T, insp string, args ...string) (map[string]any, int, string) {
	// The Inspector passes the server only a few variables of its own (PATH, HOME, ...): the
	// turn's go with -e, as a terminal's MCP configuration gives them.
	cli := []string{"--no-install", "mcp-inspector", "--cli", filepath.Join(w.bin, "spear-mcp")}
	for _, k := range []string{"SPEAR_HOME", "SPEAR_TURN_MANIFEST", "SPEAR_ISOLATION"} {
		cli = append(cli, "-e", k+"="+w.env[k])
	}
	cmd := exec.Command("npx", append(cli, args...)...)
	// Its own HOME: the Inspector keeps a catalog under ~/.mcp-inspector.
	cmd.Dir = insp
	cmd.Env = append(os.Environ(), "HOME="+filepath.Join(w.dir, "home"), "npm_config_update_notifier=false")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if _, isExit := err.(*exec.ExitError); err != nil && !isExit {
		t.Fatalf("npx mcp-inspector %v: %v", args, err)
	}
	var res map[string]any
	if json.Unmarshal(out.Bytes(), &res) != nil {
		t.Errorf("Inspector %v: stdout is not one JSON object (exit %d)\nstdout: %s\nstderr: %s",
			args, cmd.ProcessState.ExitCode(), inspBrief(out.String()), inspBrief(errOut.String()))
	}
	return res, cmd.ProcessState.ExitCode(), errOut.String()
}

// checkAudit reads the records the call left: its decision, with "face":"mcp" (SPEC 7); explain
// and the prompts are not recorded.
func (w *inspectorWorld) checkAudit(t *testing.T, call string, from int64) []string {
	var events []string
	recs := inspRecords(t, w.audit, from)
	for _, r := range recs {
		ev, _ := r["event"].(string)
		code, _ := r["code"].(string)
		switch ev {
		case "capability_index_exposed", "capability_searched", "capability_described", "capability_invoked",
			"capability_refused", "capability_preflighted":
		default:
			continue // the turn's and providers' own records
		}
		if r["face"] != "mcp" {
			return []string{fmt.Sprintf("a record without \"face\":\"mcp\": %v", r)}
		}
		events = append(events, strings.TrimSuffix(ev+"/"+code, "/"))
	}
	want := map[string][]string{
		"tools/list":                              {"capability_index_exposed"},
		"tools/call spear_search":                 {"capability_searched"},
		"tools/call spear_describe":               {"capability_described"},
		"tools/call spear_invoke (READ)":          {"capability_invoked", "capability_invoked/ok"},
		"tools/call spear_invoke (refused WRITE)": {"capability_refused/write-refused"},
	}[call]
	// Each Inspector run is a new session: what a client lists at its start is not the call's.
	if call != "tools/list" {
		events = slices.DeleteFunc(events, func(e string) bool { return strings.HasPrefix(e, "capability_index_exposed") })
	}
	if !slices.Equal(events, want) {
		return []string{fmt.Sprintf("audit %v, want %v", events, want)}
	}
	return nil
}

// endTurn stops the turn's keeper, which the face may have started.
func (w *inspectorWorld) endTurn(t *testing.T) {
	cmd := exec.Command(filepath.Join(w.bin, "spear-shell"), "--end-turn")
	cmd.Dir = w.dir
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + filepath.Join(w.dir, "home")}
	for k, v := range w.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("spear-shell --end-turn: %v\n%s", err, out)
	}
}

func inspRecords(t *testing.T, name string, from int64) []map[string]any {
	f, err := os.Open(name)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Seek(from, 0); err != nil {
		t.Fatal(err)
	}
	var recs []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r map[string]any
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Errorf("audit: %v: %s", err, sc.Bytes())
			continue
		}
		recs = append(recs, r)
	}
	return recs
}

func inspSize(name string) int64 {
	fi, err := os.Stat(name)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func inspBrief(v any) string {
	s, ok := v.(string)
	if !ok {
		b, _ := json.Marshal(v)
		s = string(b)
	}
	if len(s) > 1500 {
		s = s[:1500] + "..."
	}
	return s
}
