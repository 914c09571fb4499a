package capability

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/capability/schema"
	"github.com/spear-shell/spear-shell/policy"
	"github.com/spear-shell/spear-shell/testdata/testkit"
)

// fakeBin is testdata/fakeprovider and helperBin is cmd/spear-shell-schema, built once for the
// package's tests.
var fakeBin, helperBin string

func TestMain(m *testing.M) {
	testkit.Main(m, "capability-test-", func(dir string) error {
		fakeBin, helperBin = filepath.Join(dir, "fakeprovider"), filepath.Join(dir, schema.HelperName)
		if err := testkit.Build(fakeBin, "./testdata/fakeprovider"); err != nil {
			return err
		}
		return testkit.Build(helperBin, "./cmd/"+schema.HelperName)
	})
}

// fixture is a SPEAR_HOME with one project rooted at the workspace and fake providers.
type fixture struct {
	t        testing.TB
	dir      string
	home     string
	ws       string
	state    string
	auditLog string
	manifest string
	env      map[string]string
}

// provSpec is one capabilities.json entry backed by the fake provider.
type provSpec struct {
	id    string
	entry map[string]any // extra keys (read, write, tasks, scope, env, timeout)
	fake  map[string]any // the fake provider's config
}

func newFixture(t testing.TB, manifest map[string]any, provs ...provSpec) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{t: t, dir: dir, home: filepath.Join(dir, "home"), ws: filepath.Join(dir, "ws"),
		state: filepath.Join(dir, "state"), auditLog: filepath.Join(dir, "audit.jsonl")}
	for _, d := range []string{f.home, f.ws} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f.write(filepath.Join(f.home, "projects.json"), map[string]any{
		"projects": []any{map[string]any{"name": "demo", "root": f.ws, "families": []string{"fw"}}}})
	var entries []any
	for _, p := range provs {
		cfgPath := filepath.Join(dir, p.id+".json")
		fake := map[string]any{"record": filepath.Join(dir, "record.jsonl")}
		for k, v := range p.fake {
			fake[k] = v
		}
		f.write(cfgPath, fake)
		e := map[string]any{"id": p.id, "command": []string{fakeBin, cfgPath}, "scope": "global"}
		for k, v := range p.entry {
			e[k] = v
		}
		entries = append(entries, e)
	}
	f.write(filepath.Join(f.home, "capabilities.json"), map[string]any{"providers": entries})
	m := map[string]any{"turn": "t1", "task": "implementation", "workspace": f.ws,
		"audit": f.auditLog, "state_dir": f.state}
	for k, v := range manifest {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	f.manifest = filepath.Join(dir, "turn.json")
	f.write(f.manifest, m)
	f.env = map[string]string{"SPEAR_HOME": f.home, "PATH": os.Getenv("PATH"), "HOME": dir}
	return f
}

func (f *fixture) write(path string, v any) {
	f.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) settings() Settings {
	return Settings{Settings: providers.Settings{Getenv: func(k string) string { return f.env[k] }, Cwd: f.ws,
		ManifestPath: f.manifest, Isolation: "none (test)", Isolated: false,
		CheckTrusted: checkTrustedLexically}, SchemaHelper: helperBin}
}

// checkTrustedLexically stands in for the boundary's check (cmd/spear-shell wires
// paths.CheckTrusted, tested there): a path inside a root as written is refused.
func checkTrustedLexically(path string, roots []string) error {
	for _, r := range roots {
		if path == r || strings.HasPrefix(path, r+"/") {
			return fmt.Errorf("lies in the writable root %s", r)
		}
	}
	return nil
}

// schemaEnv is a turn with nothing loaded but what validation needs: the schema helper, the
// trust check and, when not nil, the manifest (its workspace is a writable root).
func schemaEnv(helper string, check func(string, []string) error, man *policy.Manifest) *turnEnv {
	s := Settings{Settings: providers.Settings{CheckTrusted: check}, SchemaHelper: helper}
	return newEnv(s, &providers.Turn{Settings: s.Settings, Manifest: man})
}

// turn returns a new process's view of the turn, closed at the end of the test.
func (f *fixture) turn() *Turn {
	t := NewTurn(f.settings())
	f.t.Cleanup(func() { t.Close("test") })
	return t
}

type result struct {
	code           int
	stdout, stderr string
}

func ask(t *Turn, verb string, args ...string) result {
	r := Request{Verb: verb}
	switch verb {
	case "describe":
		r.Targets = args
	case "invoke":
		r.Targets = args[:1]
		if len(args) > 1 {
			r.Arguments = args[1]
		} else {
			r.Arguments = "{}"
		}
	}
	var out, errb bytes.Buffer
	code := t.Answer(context.Background(), r, &out, &errb)
	return result{code, out.String(), errb.String()}
}

// events returns the audit records, each a map.
func (f *fixture) events() []map[string]any {
	f.t.Helper()
	file, err := os.Open(f.auditLog)
	if err != nil {
		return nil
	}
	defer file.Close()
	var out []map[string]any
	sc := bufio.NewScanner(file)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			f.t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func (f *fixture) eventNames() []string {
	var names []string
	for _, e := range f.events() {
		names = append(names, fmt.Sprint(e["event"]))
	}
	return names
}

// record returns the tool calls the fake provider received.
func (f *fixture) record() []string {
	b, _ := os.ReadFile(filepath.Join(f.dir, "record.jsonl"))
	s := strings.TrimSpace(string(b))
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func (f *fixture) recordPath() string { return filepath.Join(f.dir, "record.jsonl") }

func obj(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// echoTool is a tool that echoes its arguments, with a schema of one string property.
func echoTool(name string) map[string]any {
	return obj("name", name, "description", "Echo "+name+".",
		"inputSchema", obj("type", "object", "properties", obj("message", obj("type", "string"))),
		"behavior", obj("echo", true))
}
