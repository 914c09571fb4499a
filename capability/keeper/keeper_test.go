package capability

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The keeper, in this process (so under -race and goleak), serving the turn's "-c processes"
// (Turns of their own, as each -c process has): concurrent answers, a cancelled call, and
// --end-turn. The transcripts (testdata/script/keeper_*.txtar) run the same with real
// processes: the keeper started by an answer, idle exit, dead and foreign keepers.
func TestKeeperServesTheTurnsProcesses(t *testing.T) {
	t.Parallel()
	wait := obj("name", "wait", "inputSchema", obj("type", "object"), "behavior", obj("waitCancel", true))
	eof := filepath.Join(t.TempDir(), "eof")
	f := newFixture(t, nil, provSpec{id: "p", entry: obj("read", []string{"echo", "wait"}),
		fake: obj("tools", []any{echoTool("echo"), wait}, "eofFile", eof)})
	if err := os.Mkdir(f.state, 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: keeperSocketPath(f.state), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan int, 1)
	go func() { served <- serveKeeper(f.settings(), ln, false) }()

	// A process's settings: Self names no program, since a keeper listens it is never started.
	proc := func() *Turn {
		s := f.settings()
		s.Self, s.Environ = filepath.Join(f.dir, "never-run"), []string{}
		return NewTurn(s)
	}
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Go(func() {
			tr := proc()
			defer tr.Close("")
			msg := strings.Repeat("x", i+1)
			if r := ask(tr, "invoke", "p/echo", `{"message":"`+msg+`"}`); r.code != 0 || !strings.Contains(r.stdout, `{"message":"`+msg+`"}`) {
				t.Errorf("answer %d: %+v", i, r)
			}
		})
	}
	wg.Wait()

	// A call whose client goes away is cancelled in the keeper; the provider stays.
	tr := proc()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for !strings.Contains(strings.Join(f.record(), "\n"), `"name":"wait"`) {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	var out, errb bytes.Buffer
	code := tr.Answer(ctx, Request{Verb: "invoke", Targets: []string{"p/wait"}, Arguments: "{}"}, &out, &errb)
	tr.Close("")
	if code != 130 {
		t.Fatalf("cancelled call: %d %q", code, errb.String())
	}
	for !strings.Contains(strings.Join(f.record(), "\n"), `"name":"cancelled"`) {
		time.Sleep(5 * time.Millisecond) // the keeper cancels once it sees the client go
	}
	tr = proc()
	if r := ask(tr, "invoke", "p/echo", `{"message":"after"}`); r.code != 0 {
		t.Fatalf("after the cancel: %+v", r)
	}
	tr.Close("")

	if code := EndTurn(f.settings(), io.Discard); code != 0 {
		t.Fatalf("EndTurn: %d", code)
	}
	if code := <-served; code != 0 {
		t.Fatalf("serveKeeper: %d", code)
	}
	if _, err := os.Lstat(keeperSocketPath(f.state)); err == nil {
		t.Errorf("the socket outlived the keeper")
	}
	if _, err := os.Stat(eof); err != nil {
		t.Errorf("the provider was not stopped (its stdin closed) before the turn ended: %v", err)
	}
	names := strings.Join(f.eventNames(), " ")
	for _, want := range []string{"keeper_started", "keeper_ended turn_ended"} {
		if strings.Count(names, want) != 1 {
			t.Errorf("audit %q: want %q once", names, want)
		}
	}
	if strings.Contains(names, "keeper_unavailable") || strings.Contains(names, "provider_failed") {
		t.Errorf("audit %q", names)
	}
	if n := strings.Count(names, "capability_invoked"); n != 2*8 {
		t.Errorf("%d capability_invoked records, want 16: %s", n, names)
	}
}
