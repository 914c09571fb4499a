package keeper

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/spear-shell/spear-shell/capability/providers"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// buildFake builds testdata/fakeprovider for one test.
func buildFake(t *testing.T) string {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	bin := filepath.Join(t.TempDir(), "fakeprovider")
	src := filepath.Join(filepath.Dir(self), "..", "..", "testdata", "fakeprovider")
	if out, err := exec.Command("go", "build", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("build fakeprovider: %v\n%s", err, out)
	}
	return bin
}

// oneProviderTurn lays out, in dir, a turn offered one provider "p" (the fake provider with
// config fake, its tools READ) and returns the turn's settings.
func oneProviderTurn(t *testing.T, dir string, fake map[string]any) providers.Settings {
	t.Helper()
	ws, home := filepath.Join(dir, "ws"), filepath.Join(dir, "home")
	files := map[string]any{
		"p.json": fake,
		"home/projects.json": map[string]any{"projects": []any{
			map[string]any{"name": "demo", "root": ws}}},
		"home/capabilities.json": map[string]any{"providers": []any{map[string]any{
			"id": "p", "command": []string{buildFake(t), filepath.Join(dir, "p.json")}, "scope": "global",
			"read": []string{"echo", "wait"}}}},
		"turn.json": map[string]any{"turn": "t1", "task": "implementation", "workspace": ws,
			"audit": filepath.Join(dir, "audit.jsonl"), "state_dir": filepath.Join(dir, "state")},
	}
	for _, d := range []string{ws, home} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, v := range files {
		b, err := json.Marshal(v)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, name), b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"SPEAR_HOME": home, "PATH": os.Getenv("PATH"), "HOME": dir}
	return providers.Settings{Getenv: func(k string) string { return env[k] }, Cwd: ws,
		ManifestPath: filepath.Join(dir, "turn.json"), Isolation: "none (test)",
		// The boundary's check is policy/paths', tested there: here every program is trusted.
		CheckTrusted: func(string, []string) error { return nil }}
}

// The keeper, in this process (so under -race and goleak), serving the turn's "-c processes"
// (a provider core and a Link of their own, as each -c process has): concurrent calls, a
// cancelled call, and --end-turn. The transcripts (testdata/script/keeper_*.txtar) run the same
// with real processes and answers: the keeper started by an answer, idle exit, dead and
// foreign keepers.
func TestKeeperServesTheTurnsProcesses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	record, eof := filepath.Join(dir, "record.jsonl"), filepath.Join(dir, "eof")
	schema := map[string]any{"type": "object"}
	s := oneProviderTurn(t, dir, map[string]any{"record": record, "eofFile": eof, "tools": []any{
		map[string]any{"name": "echo", "inputSchema": schema, "behavior": map[string]any{"echo": true}},
		map[string]any{"name": "wait", "inputSchema": schema, "behavior": map[string]any{"waitCancel": true}},
	}})
	recorded := func(what string) int {
		b, _ := os.ReadFile(record)
		return strings.Count(string(b), what)
	}
	state := filepath.Join(dir, "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: socketPath(state), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan int, 1)
	go func() { served <- serve(s, ln, false) }()

	// A process's provider p, through the keeper: Self names no program, since a keeper
	// listens it is never started.
	kept := func() providers.Client {
		ps := s
		ps.Self, ps.Environ = filepath.Join(dir, "never-run"), []string{}
		core := providers.Load(ps, nil)
		link := Reach(core)
		if link == nil {
			t.Fatalf("no link to the keeper: %s", core.None)
		}
		p, _ := core.Provider("p")
		c, reached, err := link.Start(context.Background(), p.Config)
		if !reached || err != nil {
			t.Fatalf("start through the keeper: reached %v, %v", reached, err)
		}
		if _, err := c.ListTools(context.Background()); err != nil {
			t.Fatalf("list through the keeper: %v", err)
		}
		return c
	}
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Go(func() {
			c := kept()
			defer c.Close()
			msg := `{"message":"` + strings.Repeat("x", i+1) + `"}`
			res, err := c.CallTool(context.Background(), "echo", json.RawMessage(msg))
			if err != nil || len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, msg) {
				t.Errorf("call %d: %+v %v", i, res, err)
			}
		})
	}
	wg.Wait()

	// A call whose client goes away is cancelled in the keeper; the provider stays.
	c := kept()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for recorded(`"name":"wait"`) == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	_, err = c.CallTool(ctx, "wait", json.RawMessage(`{}`))
	c.Close()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	for recorded(`"name":"cancelled"`) == 0 {
		time.Sleep(5 * time.Millisecond) // the keeper cancels once it sees the client go
	}
	c = kept()
	if _, err := c.CallTool(context.Background(), "echo", json.RawMessage(`{"message":"after"}`)); err != nil {
		t.Fatalf("after the cancel: %v", err)
	}
	c.Close()

	if code := EndTurn(s, io.Discard); code != 0 {
		t.Fatalf("EndTurn: %d", code)
	}
	if code := <-served; code != 0 {
		t.Fatalf("serve: %d", code)
	}
	if _, err := os.Lstat(socketPath(state)); err == nil {
		t.Errorf("the socket outlived the keeper")
	}
	if _, err := os.Stat(eof); err != nil {
		t.Errorf("the provider was not stopped (its stdin closed) before the turn ended: %v", err)
	}
	if n := recorded(`"name":"echo"`); n != 7 {
		t.Errorf("the provider got %d echo calls, want 7", n)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	var names []string
	for line := range strings.Lines(string(b)) {
		var ev struct{ Event string }
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		names = append(names, ev.Event)
	}
	all := strings.Join(names, " ")
	for _, want := range []string{"keeper_started", "keeper_ended turn_ended"} {
		if strings.Count(all, want) != 1 {
			t.Errorf("audit %q: want %q once", all, want)
		}
	}
	if strings.Contains(all, "keeper_unavailable") || strings.Contains(all, "provider_failed") {
		t.Errorf("audit %q", all)
	}
}

// TestKeeperWritesOnlyItsRecords: a keeper that loads its turn before any answer has (it
// started sooner than the answer that spawned it wrote the turn's first records) writes none
// of the turn's records: turn_started would say the turn runs no real shell (SPEC 12: the
// keeper records only keeper_started, keeper_ended and provider failures).
func TestKeeperWritesOnlyItsRecords(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := oneProviderTurn(t, dir, map[string]any{"tools": []any{}})
	state := filepath.Join(dir, "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: socketPath(state), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan int, 1)
	go func() { served <- serve(s, ln, false) }()
	var all string
	for !strings.Contains(all, `"keeper_started"`) {
		time.Sleep(5 * time.Millisecond)
		b, _ := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
		all = string(b)
	}
	if n := strings.Count(all, "\n"); n != 1 {
		t.Errorf("the keeper wrote the turn's records:\n%s", all)
	}
	if code := EndTurn(s, io.Discard); code != 0 {
		t.Fatalf("EndTurn: %d", code)
	}
	if code := <-served; code != 0 {
		t.Fatalf("serve: %d", code)
	}
}
