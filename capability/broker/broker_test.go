package broker

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/mcpstdio"
	"github.com/spear-shell/spear-shell/policy"
)

var fakeProvider string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "broker-test")
	if err != nil {
		panic(err)
	}
	fakeProvider = filepath.Join(dir, "fakeprovider")
	if out, err := exec.Command("go", "build", "-o", fakeProvider, "../../testdata/fakeprovider").CombinedOutput(); err != nil {
		panic(fmt.Sprintf("build fakeprovider: %v\n%s", err, out))
	}
	code := 0
	func() {
		defer os.RemoveAll(dir)
		goleak.VerifyTestMain(exitCatcher{&code, m})
	}()
	os.Exit(code)
}

// exitCatcher lets TestMain clean up after goleak's check.
type exitCatcher struct {
	code *int
	m    *testing.M
}

func (e exitCatcher) Run() int { *e.code = e.m.Run(); return *e.code }

// fixture is a broker serving a configuration of its own, in this process.
type fixture struct {
	t      *testing.T
	dir    string
	w      Where
	env    map[string]string
	done   chan struct{}
	stopMu sync.Once
}

// newFixture writes a configuration (project demo rooted at dir/proj; caps with $FAKE and $DIR
// replaced) and runs a broker on it.
func newFixture(t *testing.T, caps string) *fixture {
	t.Helper()
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	for _, d := range []string{home, filepath.Join(dir, "proj"), filepath.Join(dir, "other")} {
		os.MkdirAll(d, 0o700)
	}
	os.WriteFile(filepath.Join(home, "projects.json"), []byte(`{"projects": [{"name": "demo", "root": "`+dir+`/proj"}, {"name": "other", "root": "`+dir+`/other"}]}`), 0o600)
	caps = strings.NewReplacer("$FAKE", fakeProvider, "$DIR", dir).Replace(caps)
	os.WriteFile(filepath.Join(home, "capabilities.json"), []byte(caps), 0o600)
	runDir, err := os.MkdirTemp("", "bk") // short: a socket path holds 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(runDir) })
	f := &fixture{t: t, dir: dir, done: make(chan struct{}),
		env: map[string]string{"SPEAR_HOME": home, "XDG_RUNTIME_DIR": runDir}}
	w, err := whereFrom(f.getenv)
	if err != nil {
		t.Fatal(err)
	}
	f.w = w
	ln, err := listen(w)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(f.done)
		run(w, ln, false, false)
	}()
	t.Cleanup(f.stop)
	return f
}

func (f *fixture) getenv(k string) string { return f.env[k] }

func (f *fixture) write(name, content string) string {
	path := filepath.Join(f.dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		f.t.Fatal(err)
	}
	return path
}

func (f *fixture) stop() {
	f.stopMu.Do(func() {
		if code := Stop(f.getenv, os.Stderr); code != 0 {
			f.t.Errorf("Stop: %d", code)
		}
		select {
		case <-f.done:
		case <-time.After(10 * time.Second):
			f.t.Error("the broker did not end")
		}
	})
}

// records returns the broker's audit records of event name.
func (f *fixture) records(name string) []map[string]any {
	data, _ := os.ReadFile(filepath.Join(f.env["SPEAR_HOME"], "audit.jsonl"))
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r map[string]any
		if json.Unmarshal([]byte(line), &r) == nil && r["event"] == name {
			out = append(out, r)
		}
	}
	return out
}

// entry is the configuration's entry id, as a caller loads it.
func (f *fixture) entry(id string) *policy.Provider {
	reg, err := policy.Load(policy.Paths{Home: f.env["SPEAR_HOME"]})
	if err != nil {
		f.t.Fatal(err)
	}
	p := reg.Provider(id)
	if p == nil {
		f.t.Fatalf("no entry %s: %v", id, reg.Problems)
	}
	return p
}

func (f *fixture) start(ctx context.Context, id, key string) (providers.Client, error) {
	return NewLink(f.getenv, "").Start(ctx, f.entry(id), key)
}

func call(t *testing.T, c providers.Client, name, args string) (*mcpstdio.CallResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.CallTool(ctx, name, json.RawMessage(args))
}

const echoTools = `{"tools": [
  {"name": "echo", "description": "Echo.", "inputSchema": {"type": "object"}, "behavior": {"echo": true}},
  {"name": "slow", "description": "Slow.", "inputSchema": {"type": "object"}, "behavior": {"echo": true, "sleepMs": 1500}},
  {"name": "crash", "description": "Crash.", "inputSchema": {"type": "object"}, "behavior": {"stderr": "dying", "crash": 2}}
]}`

// Six callers share one upstream over its one connection: each answer is its own caller's, the
// upstream runs once, and a caller's slow call does not hold another caller's calls back beyond
// the upstream's own serialization.
func TestCallersShareOneUpstream(t *testing.T) {
	t.Parallel()
	f := newFixture(t, `{"providers": [{"id": "p", "command": ["$FAKE", "$DIR/p.json"], "scope": "global", "share": "all"}]}`)
	f.write("p.json", echoTools)
	var wg sync.WaitGroup
	errs := make(chan error, 6*30)
	for i := range 6 {
		wg.Go(func() {
			c, err := f.start(context.Background(), "p", "")
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			for j := range 30 {
				want := fmt.Sprintf(`{"caller":%d,"n":%d}`, i, j)
				res, err := call(t, c, "echo", want)
				if err != nil {
					errs <- err
					return
				}
				if got := res.Content[0].Text; got != want {
					errs <- fmt.Errorf("caller %d got %s, want %s", i, got, want)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := len(f.records("provider_started")); n != 1 {
		t.Errorf("%d provider_started records, want 1", n)
	}
}

// A caller's cancel reaches the upstream and counts for nothing; the call's connection is let go
// and another caller's calls go on.
func TestCancelIsTheCallersOwn(t *testing.T) {
	t.Parallel()
	f := newFixture(t, `{"providers": [{"id": "p", "command": ["$FAKE", "$DIR/p.json"], "scope": "global", "share": "all", "timeout": 5}]}`)
	f.write("p.json", echoTools)
	a, err := f.start(context.Background(), "p", "")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := f.start(context.Background(), "p", "")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for range 4 { // more than three: a cancel is never a timeout
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		go func() { time.Sleep(50 * time.Millisecond); cancel() }()
		_, err := a.CallTool(ctx, "slow", json.RawMessage(`{}`))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled call: %v", err)
		}
		a.Close()
		if a, err = f.start(context.Background(), "p", ""); err != nil {
			t.Fatal(err)
		}
	}
	if res, err := call(t, b, "echo", `{"b":1}`); err != nil || res.Content[0].Text != `{"b":1}` {
		t.Fatalf("the other caller: %v %v", res, err)
	}
	if n := len(f.records("provider_failed")); n != 0 {
		t.Errorf("%d provider_failed records after cancels, want 0", n)
	}
}

// An upstream that dies under a call answers it unavailable and is started again after its
// restart_delay; meanwhile calls are refused restarting.
func TestRestartAfterAnExit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, `{"providers": [{"id": "p", "command": ["$FAKE", "$DIR/p.json"], "scope": "global", "share": "project", "restart_delay": 0.3}]}`)
	f.write("p.json", echoTools)
	c, err := f.start(context.Background(), "p", "demo")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := call(t, c, "crash", `{}`); err == nil || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("crash: %v", err)
	}
	_, err = call(t, c, "echo", `{}`)
	if why, down := IsDown(err); !down || why != "restarting" {
		t.Fatalf("during the restart: %v (%q %v)", err, why, down)
	}
	time.Sleep(600 * time.Millisecond)
	if res, err := call(t, c, "echo", `{"again":1}`); err != nil || res.Content[0].Text != `{"again":1}` {
		t.Fatalf("after the restart: %v %v", res, err)
	}
	if n := len(f.records("provider_restarted")); n != 1 {
		t.Errorf("%d provider_restarted records, want 1", n)
	}
	fails := f.records("provider_failed")
	if len(fails) != 1 || fails[0]["share_key"] != "demo" || fails[0]["stderr_tail"] != "dying" {
		t.Errorf("provider_failed: %v", fails)
	}
}

// An upstream that exits at each start is held down after flapping.exits stops within the
// window: one provider_flapping record, callers told so, until --broker-release.
func TestHeldDownAfterFlapping(t *testing.T) {
	t.Parallel()
	f := newFixture(t, `{"providers": [{"id": "p", "command": ["$FAKE", "$DIR/p.json"], "scope": "global", "share": "all", "restart_delay": 0}],
		"broker": {"flapping": {"exits": 3, "within": 60}}}`)
	f.write("p.json", `{"exit": 3, "tools": []}`)
	_, err := f.start(context.Background(), "p", "")
	if err == nil {
		t.Fatal("a server that exits at start was started")
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(f.records("provider_flapping")) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // nothing more comes
	if n := len(f.records("provider_flapping")); n != 1 {
		t.Fatalf("%d provider_flapping records, want 1", n)
	}
	if n := len(f.records("provider_failed")); n != 3 {
		t.Errorf("%d provider_failed records, want 3", n)
	}
	_, err = f.start(context.Background(), "p", "")
	if why, down := IsDown(err); !down || why != "held down after 3 exits in 60 seconds" {
		t.Fatalf("held: %v", err)
	}
	f.write("p.json", echoTools)
	null, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	defer null.Close()
	if code := Release(f.getenv, "p", null, os.Stderr); code != 0 {
		t.Fatalf("release: %d", code)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		c, err := f.start(context.Background(), "p", "")
		if err == nil {
			res, err := call(t, c, "echo", `{}`)
			c.Close()
			if err != nil || res.Content[0].Text != `{}` {
				t.Fatalf("after release: %v %v", res, err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not up after release: %v", err)
		}
	}
}

// A single timeout affects only its call; three in a row stop the upstream, which restarts.
func TestThreeTimeoutsInARow(t *testing.T) {
	t.Parallel()
	f := newFixture(t, `{"providers": [{"id": "p", "command": ["$FAKE", "$DIR/p.json"], "scope": "global", "share": "all", "restart_delay": 0.1, "timeout": 0.3}]}`)
	f.write("p.json", `{"tools": [
  {"name": "echo", "inputSchema": {"type": "object"}, "behavior": {"echo": true}},
  {"name": "hang", "inputSchema": {"type": "object"}, "behavior": {"sleepMs": 400}}]}`)
	c, err := f.start(context.Background(), "p", "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	timeout := func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		if _, err := c.CallTool(ctx, "hang", json.RawMessage(`{}`)); !errors.Is(err, mcpstdio.ErrTimeout) {
			t.Fatalf("hang: %v", err)
		}
	}
	timeout()
	time.Sleep(200 * time.Millisecond) // the late answer comes and is discarded
	if _, err := call(t, c, "echo", `{}`); err != nil {
		t.Fatalf("after one timeout: %v", err)
	}
	timeout()
	timeout()
	timeout()
	fails := f.records("provider_failed")
	if len(fails) != 1 || !strings.Contains(fails[0]["reason"].(string), "3 calls in a row") {
		t.Fatalf("provider_failed: %v", fails)
	}
}

// A request whose entry, share key or launch keys the configuration does not hold is refused
// and starts nothing.
func TestRefusesWhatTheConfigurationDoesNotHold(t *testing.T) {
	t.Parallel()
	f := newFixture(t, `{"providers": [
  {"id": "p", "command": ["$FAKE", "$DIR/p.json"], "scope": "corpus demo", "share": "project"},
  {"id": "q", "command": ["$FAKE", "$DIR/p.json"], "scope": "global"}]}`)
	f.write("p.json", echoTools)
	p := f.entry("p")
	l := NewLink(f.getenv, "")
	for name, try := range map[string]func() error{
		"unreached project": func() error { _, err := l.Start(context.Background(), p, "other"); return err },
		"unknown project":   func() error { _, err := l.Start(context.Background(), p, "nope"); return err },
		"empty key":         func() error { _, err := l.Start(context.Background(), p, ""); return err },
		"unshared entry":    func() error { _, err := l.Start(context.Background(), f.entry("q"), ""); return err },
		"other launch keys": func() error {
			other := *p
			other.Env = map[string]string{"X": "1"}
			_, err := l.Start(context.Background(), &other, "demo")
			return err
		},
	} {
		if err := try(); !errors.Is(err, ErrRefused) {
			t.Errorf("%s: %v, want a refusal", name, err)
		}
	}
	if n := len(f.records("provider_started")); n != 0 {
		t.Errorf("%d upstreams started", n)
	}
}

// A shared entry whose program lies in a registered project root is never started (stage trust).
func TestProgramInAProjectRootIsNotStarted(t *testing.T) {
	t.Parallel()
	f := newFixture(t, `{"providers": [{"id": "p", "command": ["$DIR/proj/fake", "$DIR/p.json"], "scope": "global", "share": "all", "restart_delay": 0}],
		"broker": {"flapping": {"exits": 1, "within": 60}}}`)
	data, _ := os.ReadFile(fakeProvider)
	os.WriteFile(filepath.Join(f.dir, "proj", "fake"), data, 0o700)
	f.write("p.json", echoTools)
	_, err := f.start(context.Background(), "p", "")
	if err == nil {
		t.Fatal("started")
	}
	fails := f.records("provider_failed")
	t.Log(err)
	if len(fails) != 1 || fails[0]["stage"] != StageTrust {
		t.Fatalf("provider_failed: %v", fails)
	}
	if n := len(f.records("provider_started")); n != 0 {
		t.Errorf("%d upstreams started", n)
	}
}

// The groups a killed broker recorded are reaped by the next one, and only those.
func TestReapKillsOnlyRecordedGroups(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := Locate(dir, dir, "")
	orphan := exec.Command("sleep", "60")
	orphan.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	stranger := exec.Command("sleep", "60")
	stranger.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	for _, c := range []*exec.Cmd{orphan, stranger} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		defer c.Process.Kill()
	}
	os_, _ := readStat(orphan.Process.Pid)
	st, _ := readStat(stranger.Process.Pid)
	dead := record{Broker: 1 << 22, Start: 1, Boot: bootID()} // no such broker runs
	lines := []record{dead, {Pgid: orphan.Process.Pid, Start: os_.Start, Boot: bootID()},
		{Pgid: stranger.Process.Pid, Start: st.Start + 1, Boot: bootID()}} // a start time that does not match
	var b []byte
	for _, r := range lines {
		l, _ := json.Marshal(r)
		b = append(append(b, l...), '\n')
	}
	os.WriteFile(w.Procs+"4194304.procs", b, 0o600)
	if n := reapOrphans(w); n != 1 {
		t.Errorf("reaped %d groups, want 1", n)
	}
	orphan.Wait()
	if err := stranger.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the stranger was killed: %v", err)
	}
	if _, err := os.Stat(w.Procs + "4194304.procs"); err == nil {
		t.Error("the dead broker's record is left")
	}
}

// fakeBroker answers hello on w's socket as a broker of protocol proto would; on drain it hands
// over to a real broker (a new socket at the same path) before it answers.
func fakeBroker(t *testing.T, w Where, proto int, handover func()) {
	ln, err := listen(w)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			conn, err := ln.AcceptUnix()
			if err != nil {
				return
			}
			r := bufio.NewReader(conn)
			r.ReadBytes('\n') // hello
			fmt.Fprintf(conn, `{"broker":{"pid":1,"protocol":%d}}`+"\n", proto)
			line, _ := r.ReadBytes('\n')
			if strings.Contains(string(line), `"drain"`) && handover != nil {
				ln.Close()
				os.Remove(w.Socket)
				handover()
				conn.Write([]byte("{}\n"))
				conn.Close()
				return
			}
			conn.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
}

// A caller older than the broker answers unavailable and leaves it be; a newer caller asks an
// older broker to drain and uses the one that takes over.
func TestProtocolVersions(t *testing.T) {
	t.Parallel()
	f := newFixture(t, `{"providers": [{"id": "p", "command": ["$FAKE", "$DIR/p.json"], "scope": "global", "share": "all"}]}`)
	f.write("p.json", echoTools)
	f.stop() // the fixture's broker; fakes take its socket

	fakeBroker(t, f.w, protocol+1, nil)
	_, err := f.start(context.Background(), "p", "")
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("a newer broker: %v", err)
	}
	os.Remove(f.w.Socket)

	f.done = make(chan struct{})
	f.stopMu = sync.Once{}
	fakeBroker(t, f.w, protocol-1, func() {
		ln, err := listen(f.w)
		if err != nil {
			t.Error(err)
			return
		}
		go func() {
			defer close(f.done)
			run(f.w, ln, false, false)
		}()
	})
	c, err := f.start(context.Background(), "p", "")
	if err != nil {
		t.Fatalf("after the older broker drained: %v", err)
	}
	defer c.Close()
	if res, err := call(t, c, "echo", `{"v":1}`); err != nil || res.Content[0].Text != `{"v":1}` {
		t.Fatalf("call: %v %v", res, err)
	}
}

// A broker that was killed and is a zombie (its parent has not reaped it) no longer runs: its
// upstreams' groups are reaped.
func TestReapAfterAZombieBroker(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := Locate(dir, dir, "")
	zombie := exec.Command("true") // exits at once and is not waited for until the end
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	defer zombie.Wait()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if st, err := readStat(zombie.Process.Pid); err == nil && st.State == 'Z' || time.Now().After(deadline) {
			break
		}
	}
	zs, _ := readStat(zombie.Process.Pid)
	orphan := exec.Command("sleep", "60")
	orphan.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := orphan.Start(); err != nil {
		t.Fatal(err)
	}
	defer orphan.Process.Kill()
	os_, _ := readStat(orphan.Process.Pid)
	var b []byte
	for _, r := range []record{{Broker: zombie.Process.Pid, Start: zs.Start, Boot: bootID()}, {Pgid: orphan.Process.Pid, Start: os_.Start, Boot: bootID()}} {
		l, _ := json.Marshal(r)
		b = append(append(b, l...), '\n')
	}
	os.WriteFile(w.Procs+strconv.Itoa(zombie.Process.Pid)+".procs", b, 0o600)
	if n := reapOrphans(w); n != 1 {
		t.Errorf("reaped %d groups, want 1", n)
	}
	orphan.Wait()
}

// --broker-stop with a call in flight: the call is answered unavailable (the broker stopped),
// never a hang, and the upstream is gone.
func TestStopAnswersCallsInFlight(t *testing.T) {
	t.Parallel()
	f := newFixture(t, `{"providers": [{"id": "p", "command": ["$FAKE", "$DIR/p.json"], "scope": "global", "share": "all"}]}`)
	f.write("p.json", echoTools)
	c, err := f.start(context.Background(), "p", "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	done := make(chan error, 1)
	go func() {
		_, err := call(t, c, "slow", `{}`)
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	f.stop()
	select {
	case err := <-done:
		if why, down := IsDown(err); !down || !strings.Contains(why, "broker stopped") {
			t.Fatalf("the call in flight: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call in flight hangs")
	}
	if n := len(f.records("broker_ended")); n != 1 {
		t.Errorf("%d broker_ended records", n)
	}
}

// pidOf is the process id the broker's status gives the upstream of entry id and share key key
// (0 when it is not up).
func (f *fixture) pidOf(id, key string) int {
	_, st, err := Status(f.getenv)
	if err != nil || st == nil {
		return 0
	}
	for _, u := range st.Upstreams {
		if u.Provider == id && u.ShareKey == key && u.State == stateUp {
			return u.Pid
		}
	}
	return 0
}

// An entry's launch keys edited while a call is in flight: new calls go to a new process, the
// old one finishes its call and is stopped then; no restart, no flapping.
func TestLaunchKeysEditedMidCall(t *testing.T) {
	t.Parallel()
	caps := `{"providers": [{"id": "p", "command": ["$FAKE", "$DIR/p.json"], "scope": "global", "share": "all", "env": {"V": "%s"}}]}`
	f := newFixture(t, fmt.Sprintf(caps, "one"))
	f.write("p.json", echoTools)
	old, err := f.start(context.Background(), "p", "")
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	oldPid := f.pidOf("p", "")
	done := make(chan error, 1)
	go func() {
		res, err := call(t, old, "slow", `{"old":1}`)
		if err == nil && res.Content[0].Text != `{"old":1}` {
			err = fmt.Errorf("old call: %s", res.Content[0].Text)
		}
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	home := f.env["SPEAR_HOME"]
	os.WriteFile(filepath.Join(home, "capabilities.json"), []byte(strings.NewReplacer("$FAKE", fakeProvider, "$DIR", f.dir).Replace(fmt.Sprintf(caps, "two"))), 0o600)
	c, err := f.start(context.Background(), "p", "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	newPid := f.pidOf("p", "")
	if newPid == 0 || newPid == oldPid {
		t.Fatalf("after the edit: pid %d, the old one %d", newPid, oldPid)
	}
	if syscall.Kill(oldPid, 0) != nil {
		t.Fatal("the old process was stopped with its call in flight")
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if st, err := readStat(oldPid); err != nil || st.State == 'Z' {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the old process outlived its last call")
		}
	}
	if n := len(f.records("provider_failed")) + len(f.records("provider_restarted")); n != 0 {
		t.Errorf("%d provider_failed/provider_restarted records", n)
	}
}

// A capabilities file made invalid stops no running upstream (SPEC 14); a new request is refused
// (the broker finds no entry), and once the file is valid again the same process serves it.
func TestInvalidConfigurationStopsNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, `{"providers": [{"id": "p", "command": ["$FAKE", "$DIR/p.json"], "scope": "global", "share": "all"}]}`)
	f.write("p.json", echoTools)
	p := f.entry("p")
	c, err := NewLink(f.getenv, "").Start(context.Background(), p, "")
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	pid := f.pidOf("p", "")
	capsFile := filepath.Join(f.env["SPEAR_HOME"], "capabilities.json")
	good, _ := os.ReadFile(capsFile)
	os.WriteFile(capsFile, []byte(`{"providers": [`), 0o600)
	time.Sleep(2 * watchEvery)
	if got := f.pidOf("p", ""); got != pid {
		t.Fatalf("after the file went bad: pid %d, want %d", got, pid)
	}
	if _, err := NewLink(f.getenv, "").Start(context.Background(), p, ""); !errors.Is(err, ErrRefused) {
		t.Fatalf("a request while the file is bad: %v", err)
	}
	os.WriteFile(capsFile, good, 0o600)
	c, err = NewLink(f.getenv, "").Start(context.Background(), p, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := f.pidOf("p", ""); got != pid {
		t.Fatalf("after the file is good again: pid %d, want %d", got, pid)
	}
}
