package keeper

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/capability/provlink"
	"github.com/spear-shell/spear-shell/testdata/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// buildFake builds testdata/fakeprovider for one test.
func buildFake(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "fakeprovider")
	if err := testkit.Build(bin, "./testdata/fakeprovider"); err != nil {
		t.Fatal(err)
	}
	return bin
}

// oneProviderTurn lays out, in dir, a turn offered one provider "p" (the fake provider with
// config fake, its tools READ) and returns the turn's settings.
func oneProviderTurn(t testing.TB, dir string, fake map[string]any) providers.Settings {
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

	endTurn(t, s, served)
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

// The tools request reports the provider's last listing as the provider sent it, for the names
// asked, and judges nothing: a name listed twice comes back with its count and its first
// definition, a name outside the charset and a schema that is not an object come back as
// listed, a name not listed with count 0; the listing's hash is that of the provider's own
// listing. The keeper lists again exactly when list would (here: the provider announced a
// change), so a changed definition reaches the answering process, which meets its pin there.
func TestKeeperToolsReportsTheListingAsListed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	listed := filepath.Join(dir, "listed")
	obj := map[string]any{"type": "object"}
	fake := func(echoDesc string) map[string]any {
		return map[string]any{"reload": true, "listRecord": listed, "tools": []any{
			map[string]any{"name": "echo", "description": echoDesc, "inputSchema": obj, "behavior": map[string]any{"echo": true}},
			map[string]any{"name": "dup", "description": "One.", "inputSchema": obj},
			map[string]any{"name": "dup", "description": "Two.", "inputSchema": obj},
			map[string]any{"name": "bad name", "description": "Outside the charset.", "inputSchema": obj},
			map[string]any{"name": "noobj", "description": "Not an object.", "inputSchema": []any{}},
			map[string]any{"name": "announce", "inputSchema": obj, "behavior": map[string]any{"listChanged": true, "text": []string{"ok"}}},
		}}
	}
	s := oneProviderTurn(t, dir, fake("Echo."))
	core, p, c, served := startKept(t, dir, s)
	defer c.Close()
	d, ok := c.(providers.Definer)
	if !ok {
		t.Fatalf("a kept provider is not a providers.Definer")
	}
	lists := func() int {
		b, _ := os.ReadFile(listed)
		return strings.Count(string(b), "tools/list")
	}
	// What the provider itself lists, from a process of its own: the hash to meet.
	direct := func() string {
		own, err := core.Launch(context.Background(), p.Config)
		if err != nil {
			t.Fatal(err)
		}
		defer own.Close()
		tools, err := own.ListTools(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return providers.ListingHash(tools)
	}
	names := []string{"echo", "dup", "bad name", "noobj", "missing", "echo"}
	defs, listing, err := d.Definitions(context.Background(), names)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		count       int
		description string
		input       string
	}{{1, "Echo.", `{"type":"object"}`}, {2, "One.", `{"type":"object"}`}, {1, "Outside the charset.", `{"type":"object"}`},
		{1, "Not an object.", `[]`}, {0, "", ""}, {1, "Echo.", `{"type":"object"}`}}
	for i, def := range defs {
		w := want[i]
		switch {
		case def.Name != names[i] || def.Count != w.count:
			t.Errorf("%s: name %q count %d, want count %d", names[i], def.Name, def.Count, w.count)
		case w.count == 0:
			if def.Tool != nil {
				t.Errorf("%s: a tool for a name not listed: %+v", names[i], def.Tool)
			}
		case def.Tool == nil || def.Tool.Name != names[i] || def.Tool.Description != w.description || string(def.Tool.InputSchema) != w.input:
			t.Errorf("%s: %+v, want description %q input %s", names[i], def.Tool, w.description, w.input)
		}
	}
	if h := direct(); listing.Hash != h {
		t.Errorf("listing hash %s, the provider's own listing %s", listing.Hash, h)
	}
	n := lists() - 1 // the direct listing
	if _, again, err := d.Definitions(context.Background(), []string{"echo"}); err != nil || again.Hash != listing.Hash {
		t.Errorf("asked again: %v, hash %s", err, again.Hash)
	}
	if got := lists() - 1; got != n || n != 1 {
		t.Errorf("the keeper listed %d times, then %d: want once, and not again before a change or providers.RelistAfter", n, got)
	}

	// The provider changes echo and says so: the next request lists it again.
	b, _ := json.Marshal(fake("Echo, changed."))
	if err := os.WriteFile(filepath.Join(dir, "p.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(context.Background(), "announce", json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	defs, changed, err := d.Definitions(context.Background(), []string{"echo"})
	if err != nil || defs[0].Tool == nil || defs[0].Tool.Description != "Echo, changed." {
		t.Fatalf("after the change: %+v %v", defs, err)
	}
	if changed.Hash == listing.Hash || changed.Hash != direct() {
		t.Errorf("after the change the listing hash is %s (before %s)", changed.Hash, listing.Hash)
	}
	c.Close()
	endTurn(t, s, served)
}

// TestKeeperGuardedCall: a call guarded by a listing is sent while that listing is the
// provider's; once the provider's listing changed (here: announced, so the keeper lists it
// again at the call) the call is not sent and the tool comes back as the new listing holds it,
// with that listing's hash, on which the next call is sent. An unguarded call is sent as ever.
func TestKeeperGuardedCall(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	record := filepath.Join(dir, "record")
	obj := map[string]any{"type": "object"}
	fake := func(otherDesc string) map[string]any {
		return map[string]any{"reload": true, "record": record, "tools": []any{
			map[string]any{"name": "echo", "description": "Echo.", "inputSchema": obj, "behavior": map[string]any{"echo": true}},
			map[string]any{"name": "other", "description": otherDesc, "inputSchema": obj, "behavior": map[string]any{"echo": true}},
			map[string]any{"name": "announce", "inputSchema": obj, "behavior": map[string]any{"listChanged": true, "text": []string{"ok"}}},
		}}
	}
	s := oneProviderTurn(t, dir, fake("Other."))
	_, _, c, served := startKept(t, dir, s)
	defer c.Close()
	gc, ok := c.(providers.GuardedCaller)
	if !ok {
		t.Fatalf("a kept provider is not a providers.GuardedCaller")
	}
	sent := func(word string) bool {
		b, _ := os.ReadFile(record)
		return strings.Contains(string(b), word)
	}
	call := func(word, listing string) (*providers.Moved, error) {
		res, moved, err := gc.CallToolIf(context.Background(), "echo", json.RawMessage(`{"w":"`+word+`"}`), listing)
		if err == nil && moved == nil && (len(res.Content) != 1 || !strings.Contains(res.Content[0].Text, word)) {
			t.Errorf("%s: result %+v", word, res)
		}
		return moved, err
	}
	_, first, err := gc.Definitions(context.Background(), []string{"echo"})
	if err != nil {
		t.Fatal(err)
	}
	if moved, err := call("alpha", first.Hash); moved != nil || err != nil || !sent("alpha") {
		t.Fatalf("guarded by the provider's listing: moved %+v, %v, sent %v", moved, err, sent("alpha"))
	}

	// Another tool changes and the provider says so: the listing echo came from is gone.
	b, _ := json.Marshal(fake("Other, changed."))
	if err := os.WriteFile(filepath.Join(dir, "p.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(context.Background(), "announce", json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	moved, err := call("beta", first.Hash)
	switch {
	case err != nil:
		t.Fatal(err)
	case moved == nil:
		t.Fatal("a call guarded by a listing that changed was answered")
	case sent("beta"):
		t.Error("a call guarded by a listing that changed reached the provider")
	case moved.Listing.Hash == first.Hash || moved.Listing.Hash == "":
		t.Errorf("moved to listing %q (it was %q)", moved.Listing.Hash, first.Hash)
	case moved.Def.Name != "echo" || moved.Def.Count != 1 || moved.Def.Tool == nil || moved.Def.Tool.Description != "Echo.":
		t.Errorf("moved: echo as %+v", moved.Def)
	}
	if moved, err := call("gamma", moved.Listing.Hash); moved != nil || err != nil || !sent("gamma") {
		t.Errorf("guarded by the new listing: moved %+v, %v, sent %v", moved, err, sent("gamma"))
	}
	if moved, err := call("delta", ""); moved != nil || err != nil || !sent("delta") {
		t.Errorf("unguarded: moved %+v, %v, sent %v", moved, err, sent("delta"))
	}
	c.Close()
	endTurn(t, s, served)
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
	endTurn(t, s, served)
}

// startKept serves turn s's keeper in this process (its state directory under dir) and
// starts provider p through it, from a turn core of its own: what an answering process does.
func startKept(t testing.TB, dir string, s providers.Settings) (*providers.Turn, providers.Offered, providers.Client, chan int) {
	t.Helper()
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
	return core, p, c, served
}

// endTurn ends turn s (--end-turn) and waits for its keeper, served in this process, to exit 0.
func endTurn(t testing.TB, s providers.Settings, served <-chan int) {
	t.Helper()
	if code := EndTurn(s, io.Discard); code != 0 {
		t.Fatalf("EndTurn: %d", code)
	}
	if code := <-served; code != 0 {
		t.Fatalf("serve: %d", code)
	}
}

// TestKeeperEndingHello: a hello of another configuration is refused, unless it says it ends
// the turn (--end-turn reaches every keeper of the turn, whatever configuration it serves), and
// then nothing but stop is served on that connection.
func TestKeeperEndingHello(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := oneProviderTurn(t, dir, map[string]any{"tools": []any{}})
	core, _, c, served := startKept(t, dir, s)
	c.Close()
	ask := func(reqs ...provlink.Request) string {
		t.Helper()
		conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: socketPath(core.State.Dir()), Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		for _, r := range reqs {
			b, _ := json.Marshal(r)
			conn.Write(append(b, '\n'))
		}
		b, _ := io.ReadAll(conn)
		return string(b)
	}
	other := provlink.Request{Op: provlink.OpHello, Protocol: protocol, Turn: core.Manifest.Turn, Key: strings.Repeat("0", 32)}
	if got := ask(other, provlink.Request{Op: provlink.OpStart, Provider: "p"}); !strings.Contains(got, "serves another turn, manifest or configuration") {
		t.Errorf("a hello of another configuration: %q", got)
	}
	ending := other
	ending.Ending = true
	if got := ask(ending, provlink.Request{Op: provlink.OpStart, Provider: "p"}); !strings.Contains(got, "only stop follows the hello of --end-turn") {
		t.Errorf("start after an ending hello: %q", got)
	}
	ending.Turn = "another"
	if got := ask(ending, provlink.Request{Op: provlink.OpStop}); !strings.Contains(got, "serves another turn") {
		t.Errorf("an ending hello of another turn: %q", got)
	}
	endTurn(t, s, served)
}
