package main

// The face's test suite runs the real binaries: spear-mcp, spear-shell (its keeper, and the
// shell's answers of the same turn) and spear-shell-schema, with the fake provider of
// testdata/fakeprovider, all built once into a private directory. The face is driven with the
// official go-sdk client over stdio, and with raw lines where that client cannot say what a
// case needs (a line that is not JSON-RPC, 64 MiB, a client that goes away mid-call).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/spear-shell/spear-shell/testdata/testkit"
)

var (
	binDir       string
	fakeProvider string
	raceEnabled  bool // set by race_test.go: spear-mcp is built with -race too
)

func TestMain(m *testing.M) {
	// Outside /tmp: the bwrap case's boundary gives the turn a /tmp of its own.
	root, err := testkit.Scratch("spear-mcp-test-")
	if err == nil {
		binDir = filepath.Join(root, "bin")
		fakeProvider = filepath.Join(binDir, "fakeprovider")
		err = build(binDir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		if root != "" {
			os.RemoveAll(root)
		}
		os.Exit(1)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { os.RemoveAll(root) }))
}

// build builds, into dir, both spear-shell binaries, the fake provider and spear-mcp (with -race
// when this test binary has it).
func build(dir string) error {
	if err := testkit.Build(dir+"/", "./cmd/spear-shell", "./cmd/spear-shell-schema"); err != nil {
		return err
	}
	if err := testkit.Build(filepath.Join(dir, "fakeprovider"), "./testdata/fakeprovider"); err != nil {
		return err
	}
	if raceEnabled {
		return testkit.Build(dir+"/", "-race", "./cmd/spear-mcp")
	}
	return testkit.Build(dir+"/", "./cmd/spear-mcp")
}

// fixture is one turn's world: a SPEAR_HOME whose one project is rooted at the workspace, a
// manifest, the audit file, the state directory, and the fake providers' configurations.
type fixture struct {
	dir, ws, home, manifest, audit string
	env                            []string
}

// newFixture lays out the world. caps is capabilities.json and files are more files of dir
// (the fake providers' configurations, prompts); "$WORK" and "$FAKEPROVIDER" are expanded in
// both. manifest holds the manifest's keys besides turn, task, audit and state_dir.
func newFixture(t *testing.T, caps string, manifest map[string]any, files map[string]string) *fixture {
	t.Helper()
	// Short paths (the keeper's socket is under the state directory), not under the test's name.
	dir, err := os.MkdirTemp("", "face-")
	if err != nil {
		t.Fatal(err)
	}
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		t.Fatal(err)
	}
	fx := &fixture{dir: dir, ws: filepath.Join(dir, "ws"), home: filepath.Join(dir, "home"),
		manifest: filepath.Join(dir, "m", "turn.json"), audit: filepath.Join(dir, "log", "audit.jsonl")}
	t.Cleanup(func() { os.RemoveAll(dir) })
	t.Cleanup(func() { fx.stop(t) })
	// the manifest and the audit file in directories of their own: the boundary masks them
	for _, d := range []string{fx.ws, fx.home, filepath.Join(dir, "run"), filepath.Join(dir, "m"), filepath.Join(dir, "log")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	fx.write(t, "home/projects.json", fmt.Sprintf(`{"projects": [{"name": "ws", "root": %q, "families": ["fw"]}]}`, fx.ws))
	fx.write(t, "home/capabilities.json", caps)
	for name, content := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		fx.write(t, name, content)
	}
	if manifest != nil {
		fx.setManifest(t, manifest)
	}
	fx.env = []string{"SPEAR_HOME=" + fx.home, "SPEAR_TURN_MANIFEST=" + fx.manifest, "SPEAR_ISOLATION=none",
		"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + dir, "XDG_RUNTIME_DIR=" + filepath.Join(dir, "run")}
	return fx
}

func (fx *fixture) expand(s string) string {
	return strings.NewReplacer("$WORK", fx.dir, "$FAKEPROVIDER", fakeProvider).Replace(s)
}

// write writes a file of dir (0644: spear refuses group- or world-writable configuration).
func (fx *fixture) write(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(fx.dir, name), []byte(fx.expand(content)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// setManifest writes the manifest: turn t1, task implementation, the workspace and the audit
// file, then m's keys (which may replace those). The state directory is the default one (under
// $XDG_RUNTIME_DIR/spear, keyed by the turn), so that a new turn id is a new turn state.
func (fx *fixture) setManifest(t *testing.T, m map[string]any) {
	t.Helper()
	full := map[string]any{"turn": "t1", "task": "implementation", "workspace": fx.ws, "audit": fx.audit}
	for k, v := range m {
		full[k] = v
	}
	b, err := json.Marshal(full)
	if err != nil {
		t.Fatal(err)
	}
	fx.write(t, "m/turn.json", string(b))
}

// stop ends the turn's keepers and waits until no process of the fixture is left (keepers,
// providers).
func (fx *fixture) stop(t *testing.T) {
	testkit.StopKeepers(fx.dir)
	if !testkit.AwaitGone(fx.dir) {
		t.Errorf("processes of %s still run: %v", fx.dir, testkit.LivePids(fx.dir))
		for _, pid := range testkit.LivePids(fx.dir) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// shell runs spear-shell with the fixture's environment in the workspace.
func (fx *fixture) shell(t *testing.T, args ...string) (stdout, stderr string, exit int) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "spear-shell"), args...)
	cmd.Dir, cmd.Env = fx.ws, fx.env
	return testkit.Run(t, cmd)
}

// records are the audit file's records; every one must parse and carry time, event, turn and
// session.
func (fx *fixture) records(t *testing.T) []map[string]any {
	t.Helper()
	recs, err := testkit.Records(fx.audit)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return recs
}

// count is how many records match spec (event[,key=value...], values compared as the shell's
// transcripts compare them: strings as such, anything else as compact JSON).
func (fx *fixture) count(t *testing.T, spec string) int {
	t.Helper()
	n := 0
	for _, m := range fx.records(t) {
		if testkit.Match(m, spec) {
			n++
		}
	}
	return n
}

// want fails unless some record matches each spec, and returns the last match of the last.
func (fx *fixture) want(t *testing.T, specs ...string) map[string]any {
	t.Helper()
	var last map[string]any
	recs := fx.records(t)
	for _, spec := range specs {
		last = nil
		for _, m := range recs {
			if testkit.Match(m, spec) {
				last = m
			}
		}
		if last == nil {
			t.Errorf("audit: no record matches %s; records:\n%s", spec, dumpRecords(recs))
		}
	}
	return last
}

// awaitRecord waits (up to a minute) until a record matches spec: records another process
// writes (the keeper's, a provider's cancellation) come after the answer.
func (fx *fixture) awaitRecord(t *testing.T, spec string) {
	t.Helper()
	if !testkit.Poll(func() bool { return fx.count(t, spec) > 0 }) {
		t.Errorf("audit: no record matches %s; records:\n%s", spec, dumpRecords(fx.records(t)))
	}
}

func dumpRecords(recs []map[string]any) string {
	var b strings.Builder
	if len(recs) > 40 {
		fmt.Fprintf(&b, "(%d records before these)\n", len(recs)-40)
		recs = recs[len(recs)-40:]
	}
	for _, m := range recs {
		j, _ := json.Marshal(m)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

// calls are the lines of a fake provider's record file: the tools/call names it received
// ("cancelled" for a notifications/cancelled).
func (fx *fixture) calls(t *testing.T, record string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fx.dir, record))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for line := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
		var m struct{ Name string }
		if json.Unmarshal([]byte(line), &m) == nil && m.Name != "" {
			names = append(names, m.Name)
		}
	}
	return names
}

// awaitCall waits (up to a minute) until the provider has received a call of name.
func (fx *fixture) awaitCall(t *testing.T, record, name string) {
	t.Helper()
	if !testkit.Poll(func() bool { return slices.Contains(fx.calls(t, record), name) }) {
		t.Fatalf("the provider never received %s: %v", name, fx.calls(t, record))
	}
}

// lockedBuffer is a stderr the test reads while the process writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// face is one spear-mcp process driven by the go-sdk client.
type face struct {
	s       *mcp.ClientSession
	stderr  *lockedBuffer
	mu      sync.Mutex
	changed int           // notifications/tools/list_changed received
	notify  chan struct{} // one token per notification (buffered)
}

// startFace starts spear-mcp with the fixture's environment (and env's additions).
func (fx *fixture) startFace(t *testing.T, env ...string) *face {
	t.Helper()
	f := &face{stderr: &lockedBuffer{}, notify: make(chan struct{}, 1000)}
	cmd := exec.Command(filepath.Join(binDir, "spear-mcp"))
	cmd.Dir, cmd.Env, cmd.Stderr = fx.ws, append(slices.Clone(fx.env), env...), f.stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "face-test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			f.mu.Lock()
			f.changed++
			f.mu.Unlock()
			f.notify <- struct{}{}
		},
	})
	s, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	f.s = s
	t.Cleanup(func() {
		s.Close()
		if strings.Contains(f.stderr.String(), "WARNING: DATA RACE") {
			t.Errorf("spear-mcp:\n%s", f.stderr.String())
		}
	})
	return f
}

// drainChanged forgets the notifications received so far (the SDK debounces and may send one
// after the first tools/list registers direct tools).
func (f *face) drainChanged() {
	for {
		select {
		case <-f.notify:
		default:
			return
		}
	}
}

// awaitChanged waits for a notifications/tools/list_changed.
func (f *face) awaitChanged(t *testing.T) {
	t.Helper()
	select {
	case <-f.notify:
	case <-time.After(time.Minute):
		t.Fatal("no notifications/tools/list_changed")
	}
}

// call calls a tool; args is marshalled as the arguments (a json.RawMessage as it is).
func (f *face) call(t *testing.T, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := f.s.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func (f *face) invoke(t *testing.T, id string, args any) *mcp.CallToolResult {
	t.Helper()
	if args == nil {
		return f.call(t, "spear_invoke", map[string]any{"id": id})
	}
	return f.call(t, "spear_invoke", map[string]any{"id": id, "arguments": args})
}

func (f *face) tools(t *testing.T) map[string]*mcp.Tool {
	t.Helper()
	res, err := f.s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		out[tl.Name] = tl
	}
	return out
}

// sc is a result's structuredContent as a map.
func sc(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("structuredContent %s is not an object: %v", b, err)
	}
	return m
}

func texts(res *mcp.CallToolResult) []string {
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return out
}

func show(res *mcp.CallToolResult) string {
	b, _ := json.Marshal(res)
	return string(b)
}

// refused checks a refusal: isError, structuredContent's code (and message containing msg),
// the first text the shell's line `spear-capability: CODE: ...`. It returns the message.
func refused(t *testing.T, res *mcp.CallToolResult, code, msg string) string {
	t.Helper()
	m := sc(t, res)
	message, _ := m["message"].(string)
	if prefix, rest, found := strings.Cut(msg, ": "); found && strings.HasPrefix(prefix, "spear_") {
		// the face's own tools: the tool's name, then what is wrong
		if !strings.HasPrefix(message, prefix+": ") {
			t.Errorf("message %q does not start with %s", message, prefix)
		}
		msg = rest
	}
	if !res.IsError || m["code"] != code || !strings.Contains(message, msg) {
		t.Errorf("want isError %s (%q), got %s", code, msg, show(res))
		return message
	}
	if tx := texts(res); len(tx) == 0 || tx[0] != "spear-capability: "+code+": "+message {
		t.Errorf("first text %q, want the shell's line for %s: %s", tx, code, message)
	}
	return message
}

// ok checks a call that went through: decision ok, the capability, an audit id recorded with
// its intent and outcome (face mcp), the first text naming it. It returns the structured content.
func ok(t *testing.T, fx *fixture, res *mcp.CallToolResult, id string) map[string]any {
	t.Helper()
	m := sc(t, res)
	if res.IsError || m["decision"] != "ok" || m["capability"] != id || m["external"] == nil {
		t.Fatalf("want ok for %s, got %s", id, show(res))
	}
	aid, _ := m["auditId"].(string)
	if aid == "" {
		t.Fatalf("no auditId: %s", show(res))
	}
	fx.want(t, "capability_invoked,face=mcp,phase=intent,audit_id="+aid+",capability="+id,
		"capability_invoked,face=mcp,phase=outcome,code=ok,audit_id="+aid)
	if tx := texts(res); len(tx) == 0 || !strings.Contains(tx[0], "capability "+id) || !strings.Contains(tx[0], aid) {
		t.Errorf("first text %q does not name %s and %s", tx, id, aid)
	}
	return m
}
