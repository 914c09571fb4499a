package mcpstdio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/spear-shell/spear-shell/testdata/testkit"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeModeEnv); mode != "" {
		os.Exit(fakeMain(mode))
	}
	if os.Getenv(ttyClientEnv) != "" {
		os.Exit(ttyClient())
	}
	testkit.Main(m, "mcpstdio-test-", func(dir string) error {
		binDir = dir
		return nil
	})
}

// fastClose shortens Close's waits so that tests of stubborn servers stay quick.
var fastClose = Options{StdinWait: 150 * time.Millisecond, TermWait: 150 * time.Millisecond}

// fakeCommand runs this test binary as the fake server mode, with pids recorded in a
// temp dir that processGone reads.
func fakeCommand(t *testing.T, mode string, extraEnv ...string) (Command, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// Under -race a process sleeps 1 s before exiting unless told otherwise.
	env := append([]string{fakeModeEnv + "=" + mode, fakePidEnv + "=" + dir, "GORACE=atexit_sleep_ms=0"}, extraEnv...)
	return Command{Path: exe, Dir: dir, Env: NewEnv(env)}, dir
}

// startFake starts mode and registers a check that Close leaves no process behind.
func startFake(t *testing.T, mode string, opts Options) *Client {
	t.Helper()
	cmd, dir := fakeCommand(t, mode)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Start(ctx, cmd, opts)
	if err != nil {
		t.Fatalf("Start(%s): %v", mode, err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		assertGone(t, dir)
	})
	return c
}

// assertGone checks that the fake's process group and its grandchild, if any, are gone.
// Killed orphans may stay zombies until init reaps them, hence the generous wait.
func assertGone(t *testing.T, dir string) {
	t.Helper()
	for _, name := range []string{"leader", "grandchild"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) && name == "grandchild" {
			continue
		}
		if err != nil {
			t.Errorf("pid file %s: %v", name, err)
			continue
		}
		pid, err := strconv.Atoi(string(b))
		if err != nil {
			t.Fatal(err)
		}
		target := pid
		if name == "leader" {
			target = -pid // the group the leader made
		}
		deadline := time.Now().Add(15 * time.Second)
		for {
			err := syscall.Kill(target, 0)
			if errors.Is(err, syscall.ESRCH) {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("%s %d still exists: kill(%d, 0) = %v", name, pid, target, err)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if name == "leader" && groupAlive(pid) {
			t.Errorf("group %d has live members", pid)
		}
	}
}

func callCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestStartFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode    string
		timeout time.Duration
		check   func(t *testing.T, err error)
		tail    string // expected in the stderr tail carried by the error
	}{
		{"crash-init", 5 * time.Second, isProtocol(StageInitialize, "unexpected EOF"), "boom before init"},
		{"hang-init", 300 * time.Millisecond, isTimeout(StageInitialize), "initialize 1 2025-06-18 caps={} client=t/9"},
		{"wrong-version", 5 * time.Second, func(t *testing.T, err error) {
			var ve *VersionError
			if !errors.As(err, &ve) || ve.Offered != "2024-11-05" || !errors.Is(err, ErrVersion) {
				t.Errorf("err = %v, want VersionError offering 2024-11-05", err)
			}
		}, ""},
		{"string-ids", 5 * time.Second, isProtocol(StageInitialize, `unknown id "\"1\""`), ""},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			cmd, dir := fakeCommand(t, tt.mode)
			ctx := callCtx(t, tt.timeout)
			begin := time.Now()
			c, err := Start(ctx, cmd, Options{ClientName: "t", ClientVersion: "9"})
			if c != nil || err == nil {
				t.Fatalf("Start = %v, %v; want an error", c, err)
			}
			tt.check(t, err)
			if StageOf(err) != StageInitialize {
				t.Errorf("StageOf = %q", StageOf(err))
			}
			if !strings.Contains(StderrOf(err), tt.tail) {
				t.Errorf("stderr tail %q lacks %q", StderrOf(err), tt.tail)
			}
			if d := time.Since(begin); d > tt.timeout+3*time.Second {
				t.Errorf("Start took %v", d) // does not hang
			}
			assertGone(t, dir)
		})
	}
}

func isProtocol(stage, msg string) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		t.Helper()
		var pe *ProtocolError
		if !errors.As(err, &pe) || !errors.Is(err, ErrProtocol) || pe.Stage != stage || !strings.Contains(err.Error(), msg) {
			t.Errorf("err = %v, want a protocol error at %s containing %q", err, stage, msg)
		}
		if errors.Is(err, ErrTimeout) || errors.Is(err, ErrClosed) {
			t.Errorf("err = %v is also a timeout or closed", err)
		}
	}
}

func isTimeout(stage string) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		t.Helper()
		var te *TimeoutError
		if !errors.As(err, &te) || !errors.Is(err, ErrTimeout) || te.Stage != stage || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want a timeout at %s", err, stage)
		}
		if errors.Is(err, ErrProtocol) {
			t.Errorf("err = %v is also a protocol error", err)
		}
	}
}

func TestStartRefused(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	tests := []struct {
		name string
		cmd  Command
		msg  string
	}{
		{"zero env", Command{Path: exe}, "no environment"},
		{"relative path", Command{Path: "mcpstdio.test", Env: NewEnv(nil)}, "not absolute"},
		{"empty path", Command{Env: NewEnv(nil)}, "no program path"},
		{"bad env entry", Command{Path: exe, Env: NewEnv([]string{"SECRET"})}, "entry 0 is not KEY=value"},
		{"missing program", Command{Path: "/nonexistent/mcp-server", Env: NewEnv(nil)}, "no such file"},
		{"missing dir", Command{Path: exe, Dir: "/nonexistent/dir", Env: NewEnv(nil)}, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := Start(context.Background(), tt.cmd, Options{})
			if c != nil || !errors.Is(err, ErrStart) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("Start = %v, %v; want ErrStart containing %q", c, err, tt.msg)
			}
			if !strings.HasPrefix(err.Error(), "start: ") || StageOf(err) != StageStart {
				t.Errorf("err = %q, stage %q", err, StageOf(err))
			}
			if strings.Contains(err.Error(), "SECRET") {
				t.Errorf("err %q shows an environment entry", err)
			}
		})
	}
}

func TestHappyPath(t *testing.T) {
	t.Parallel()
	c := startFake(t, "ok", Options{})
	if name, version := c.ServerInfo(); name != "fake" || version != "1.2.3" {
		t.Errorf("ServerInfo = %q, %q", name, version)
	}
	ctx := callCtx(t, 10*time.Second)
	tools, err := c.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(tools); !slices.Equal(got, []string{"tool0000", "tool0001", "tool0002"}) {
		t.Errorf("tools = %v", got)
	}
	tool := tools[0]
	if tool.Description != "does tool0000" || !strings.Contains(string(tool.InputSchema), `"properties"`) ||
		string(tool.OutputSchema) != `{"type":"object"}` || !strings.Contains(string(tool.Raw), `"annotations":{"readOnlyHint":true}`) {
		t.Errorf("tool = %+v", tool)
	}

	res, err := c.CallTool(ctx, "echo", json.RawMessage(`{"message": "hi\nthere"}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 || res.Content[0].Type != "text" || res.Content[0].Text != "hi\nthere" || res.IsError {
		t.Errorf("echo = %+v", res)
	}

	// Every kind of content, unknown fields and exact numbers survive.
	res, err = c.CallTool(ctx, "content", nil)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, ct := range res.Content {
		types = append(types, ct.Type)
	}
	if want := []string{"text", "image", "audio", "resource_link", "resource", "x-future"}; !slices.Equal(types, want) {
		t.Errorf("content types = %v, want %v", types, want)
	}
	if res.Content[1].MimeType != "image/png" || !strings.Contains(string(res.Content[5].Raw), `"payload":[1,2,3]`) {
		t.Errorf("content = %+v", res.Content)
	}
	if string(res.StructuredContent) != `{"n":1.50000000000000000001}` || string(res.Meta) != `{"trace":"abc"}` ||
		!strings.Contains(string(res.Raw), `"x-later":{"a":null}`) {
		t.Errorf("result = %s / %s / %s", res.StructuredContent, res.Meta, res.Raw)
	}

	res, err = c.CallTool(ctx, "iserror", json.RawMessage(`{}`))
	if err != nil || !res.IsError || res.Content[0].Text != "bad input" {
		t.Errorf("iserror = %+v, %v", res, err)
	}
}

func toolNames(tools []Tool) []string {
	var names []string
	for _, t := range tools {
		names = append(names, t.Name)
	}
	return names
}

func TestEnvAndDir(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	dir := t.TempDir()
	pids := t.TempDir()
	env := []string{fakeModeEnv + "=ok", fakePidEnv + "=" + pids, "GORACE=atexit_sleep_ms=0", "ONLY=this", "EMPTY="}
	ctx := callCtx(t, 10*time.Second)
	c, err := Start(ctx, Command{Path: exe, Dir: dir, Env: NewEnv(env)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer assertGone(t, pids)
	defer c.Close()
	res, err := c.CallTool(ctx, "env", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Split(res.Content[0].Text, "\n"); !slices.Equal(got, env) {
		t.Errorf("server environment = %q, want exactly %q", got, env)
	}
	res, err = c.CallTool(ctx, "cwd", nil)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := filepath.EvalSymlinks(dir); res.Content[0].Text != want {
		t.Errorf("server cwd = %q, want %q", res.Content[0].Text, want)
	}
}

func TestRPCErrorKeepsSession(t *testing.T) {
	t.Parallel()
	c := startFake(t, "ok", Options{})
	ctx := callCtx(t, 10*time.Second)
	_, err := c.CallTool(ctx, "rpcerror", nil)
	var re *RPCError
	if !errors.As(err, &re) || re.Code != -32602 || re.Message != "unknown tool: rpcerror" || string(re.Data) != `{"why":"test"}` {
		t.Fatalf("err = %v, want RPCError -32602", err)
	}
	if errors.Is(err, ErrProtocol) || errors.Is(err, ErrClosed) || errors.Is(err, ErrTimeout) {
		t.Errorf("err = %v has the wrong kind", err)
	}
	res, err := c.CallTool(ctx, "echo", json.RawMessage(`{"message":"still here"}`))
	if err != nil || res.Content[0].Text != "still here" {
		t.Errorf("after an RPC error: %+v, %v", res, err)
	}
}

func TestCallFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode    string
		timeout time.Duration
		check   func(*testing.T, error)
		tail    string
	}{
		{"crash-call", 5 * time.Second, isProtocol(StageCall, "unexpected EOF"), "boom mid-call"},
		{"hang-call", 300 * time.Millisecond, isTimeout(StageCall), `cancelled {"reason":"timeout","requestId":2}`},
		{"garbage", 5 * time.Second, isProtocol(StageCall, `not a JSON-RPC message: "this is not JSON-RPC"`), ""},
		{"bad-jsonrpc", 5 * time.Second, isProtocol(StageCall, "not a JSON-RPC 2.0 message"), ""},
		{"both-result-error", 5 * time.Second, isProtocol(StageCall, "exactly one of result and error"), ""},
		{"unknown-id", 5 * time.Second, isProtocol(StageCall, "unknown id \"999\""), ""},
		{"no-newline-eof", 5 * time.Second, isProtocol(StageCall, "unexpected EOF"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			cmd, dir := fakeCommand(t, tt.mode)
			c, err := Start(callCtx(t, 10*time.Second), cmd, Options{})
			if err != nil {
				t.Fatal(err)
			}
			begin := time.Now()
			res, err := c.CallTool(callCtx(t, tt.timeout), "echo", json.RawMessage(`{"message":"x"}`))
			if res != nil {
				t.Errorf("result = %+v", res)
			}
			tt.check(t, err)
			if d := time.Since(begin); d > tt.timeout+3*time.Second {
				t.Errorf("call took %v", d)
			}
			// The client is unusable now, without sending anything.
			_, err = c.CallTool(callCtx(t, 5*time.Second), "echo", nil)
			if !errors.Is(err, ErrClosed) || errors.Is(err, ErrProtocol) {
				t.Errorf("next call: %v, want ErrClosed", err)
			}
			if _, err := c.ListTools(callCtx(t, 5*time.Second)); !errors.Is(err, ErrClosed) {
				t.Errorf("next list: %v, want ErrClosed", err)
			}
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if !strings.Contains(c.StderrTail(), tt.tail) {
				t.Errorf("stderr tail %q lacks %q", c.StderrTail(), tt.tail)
			}
			assertGone(t, dir)
		})
	}
}

// A cancelled call is not a timeout: the server is told, its late answer is discarded, and the
// session goes on.
func TestCancelIsNotTimeout(t *testing.T) {
	t.Parallel()
	c := startFake(t, "ok", Options{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := c.CallTool(ctx, "late", nil)
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) || StageOf(err) != StageCall {
		t.Fatalf("err = %v, want context.Canceled at tools/call", err)
	}
	for _, msg := range []string{"one", "two"} {
		res, err := c.CallTool(callCtx(t, 5*time.Second), "echo", json.RawMessage(`{"message":"`+msg+`"}`))
		if err != nil || res.Content[0].Text != msg {
			t.Fatalf("after cancel: %+v, %v, want %q", res, err, msg)
		}
	}
	c.Close()
	if want := `cancelled {"reason":"cancelled by the client","requestId":2}`; !strings.Contains(c.StderrTail(), want) {
		t.Errorf("stderr %q lacks %q", c.StderrTail(), want)
	}
}

func TestDoneContextSendsNothing(t *testing.T) {
	t.Parallel()
	c := startFake(t, "ok", Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.CallTool(ctx, "echo", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	// Nothing was sent, so the session goes on.
	if res, err := c.CallTool(callCtx(t, 5*time.Second), "echo", json.RawMessage(`{"message":"ok"}`)); err != nil || res.Content[0].Text != "ok" {
		t.Errorf("after a done context: %+v, %v", res, err)
	}
}

func TestNoisyServers(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"notify10k", "server-requests", "list-changed"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			c := startFake(t, mode, Options{})
			ctx := callCtx(t, 10*time.Second)
			tools, err := c.ListTools(ctx)
			if err != nil || len(tools) != 3 {
				t.Fatalf("ListTools = %d tools, %v", len(tools), err)
			}
			want := "x"
			if mode == "server-requests" {
				want = "ok" // the fake's verdict on our answers
			}
			// list-changed sends its notification before each response, so the flag is set
			// after the listing and again after the call; the other modes never set it.
			if got := c.ToolsChanged(); got != (mode == "list-changed") {
				t.Errorf("ToolsChanged after list = %v", got)
			}
			res, err := c.CallTool(ctx, "echo", json.RawMessage(`{"message":"x"}`))
			if err != nil || res.Content[0].Text != want {
				t.Fatalf("call = %+v, %v", res, err)
			}
			if got := c.ToolsChanged(); got != (mode == "list-changed") {
				t.Errorf("ToolsChanged after call = %v", got)
			}
		})
	}
}

func TestPagination(t *testing.T) {
	t.Parallel()
	t.Run("many-tools", func(t *testing.T) {
		t.Parallel()
		c := startFake(t, "many-tools", Options{})
		tools, err := c.ListTools(callCtx(t, 20*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if len(tools) != 5000 || tools[0].Name != "tool0000" || tools[4999].Name != "tool4999" {
			t.Fatalf("got %d tools", len(tools))
		}
		for i, tool := range tools {
			if want := fmt.Sprintf("tool%04d", i); tool.Name != want {
				t.Fatalf("tool %d = %q, want %q", i, tool.Name, want)
			}
		}
	})
	tests := []struct {
		mode string
		opts Options
		msg  string
	}{
		{"loop-cursor", Options{}, `cursor "again" repeated`},
		{"many-tools", Options{MaxPages: 100}, "more than 100 pages"},
		{"many-tools", Options{MaxTools: 1000}, "more than 1000 tools"},
	}
	for _, tt := range tests {
		t.Run(tt.msg, func(t *testing.T) {
			t.Parallel()
			c := startFake(t, tt.mode, tt.opts)
			_, err := c.ListTools(callCtx(t, 20*time.Second))
			isProtocol(StageList, tt.msg)(t, err)
			if _, err := c.ListTools(callCtx(t, 5*time.Second)); !errors.Is(err, ErrClosed) {
				t.Errorf("after a protocol error: %v, want ErrClosed", err)
			}
		})
	}
}

func TestStderrBurst(t *testing.T) {
	t.Parallel()
	c := startFake(t, "stderr-burst", Options{StderrTail: 4096})
	if _, err := c.CallTool(callCtx(t, 10*time.Second), "echo", nil); err != nil {
		t.Fatal(err)
	}
	c.Close()
	tail := c.StderrTail()
	if len(tail) > 4096 || !strings.HasPrefix(tail, "burst line ") || !strings.Contains(tail, "burst end\ninitialize 1 ") {
		t.Errorf("tail (%d bytes) = %q...", len(tail), tail[:min(len(tail), 200)])
	}
}

func TestClose(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode    string
		tail    string
		atLeast time.Duration // the waits Close must have gone through
	}{
		{"ok", "", 0},
		{"grandchild", "", 0},
		{"ignore-stdin", "got SIGTERM", fastClose.StdinWait},
		{"ignore-term", "stdin closed, staying", fastClose.StdinWait + fastClose.TermWait},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			cmd, dir := fakeCommand(t, tt.mode)
			c, err := Start(callCtx(t, 10*time.Second), cmd, fastClose)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.CallTool(callCtx(t, 10*time.Second), "echo", nil); err != nil {
				t.Fatal(err)
			}
			begin := time.Now()
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			d := time.Since(begin)
			if d < tt.atLeast || d > 5*time.Second {
				t.Errorf("Close took %v, want at least %v", d, tt.atLeast)
			}
			if err := c.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
			if !strings.Contains(c.StderrTail(), tt.tail) {
				t.Errorf("stderr %q lacks %q", c.StderrTail(), tt.tail)
			}
			if _, err := c.CallTool(callCtx(t, time.Second), "echo", nil); err != ErrClosed {
				t.Errorf("call after Close: %v", err)
			}
			assertGone(t, dir)
		})
	}
}

// A grandchild holding the pipes must not stall a failing Start either.
func TestGrandchildOnFailure(t *testing.T) {
	t.Parallel()
	cmd, dir := fakeCommand(t, "grandchild+ignore-term+hang-init")
	c := startFake(t, "ok", Options{}) // a second, unrelated client stays untouched
	begin := time.Now()
	_, err := Start(callCtx(t, 500*time.Millisecond), cmd, Options{})
	isTimeout(StageInitialize)(t, err)
	if d := time.Since(begin); d > 3*time.Second {
		t.Errorf("Start took %v", d)
	}
	if _, err := os.Stat(filepath.Join(dir, "grandchild")); err != nil {
		t.Errorf("the grandchild never ran: %v", err)
	}
	assertGone(t, dir)
	if _, err := c.CallTool(callCtx(t, 5*time.Second), "echo", nil); err != nil {
		t.Errorf("unrelated client: %v", err)
	}
}

func TestConcurrentCalls(t *testing.T) {
	t.Parallel()
	c := startFake(t, "ok", Options{})
	ctx := callCtx(t, 10*time.Second)
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for i := range 10 {
		wg.Go(func() {
			msg := fmt.Sprintf("m%d", i)
			res, err := c.CallTool(ctx, "slow", json.RawMessage(`{"message":"`+msg+`"}`))
			if err == nil && res.Content[0].Text != msg {
				err = fmt.Errorf("got %q, want %q", res.Content[0].Text, msg)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestCloseDuringCall(t *testing.T) {
	t.Parallel()
	c := startFake(t, "hang-call", fastClose)
	done := make(chan error, 1)
	go func() {
		_, err := c.CallTool(context.Background(), "echo", nil)
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	c.Close()
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Errorf("in-flight call after Close: %v, want ErrClosed", err)
	}
}

func TestInvalidArguments(t *testing.T) {
	t.Parallel()
	c := startFake(t, "ok", Options{})
	if _, err := c.CallTool(callCtx(t, 5*time.Second), "echo", json.RawMessage(`{"a":`)); err == nil {
		t.Fatal("invalid JSON arguments were sent")
	}
	if _, err := c.CallTool(callCtx(t, 5*time.Second), "echo", json.RawMessage(`{"message":"fine"}`)); err != nil {
		t.Errorf("after refusing invalid arguments: %v", err)
	}
}

// With CallTimeoutKeeps a call's timeout is given up like a cancel (the server told, its late
// answer discarded) and the session goes on; without it the client is unusable (SPEC 6).
func TestCallTimeoutKeeps(t *testing.T) {
	t.Parallel()
	for _, keeps := range []bool{true, false} {
		c := startFake(t, "ok", Options{CallTimeoutKeeps: keeps})
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		_, err := c.CallTool(ctx, "late", nil)
		cancel()
		if !errors.Is(err, ErrTimeout) || StageOf(err) != StageCall {
			t.Fatalf("keeps %v: err = %v, want a timeout at tools/call", keeps, err)
		}
		res, err := c.CallTool(callCtx(t, 5*time.Second), "echo", json.RawMessage(`{"message":"on"}`))
		if keeps && (err != nil || res.Content[0].Text != "on") {
			t.Fatalf("after a kept timeout: %+v, %v", res, err)
		}
		if !keeps && !errors.Is(err, ErrClosed) {
			t.Fatalf("after a timeout: %v, want ErrClosed", err)
		}
		c.Close()
		if want := `cancelled {"reason":"timeout","requestId":2}`; !strings.Contains(c.StderrTail(), want) {
			t.Errorf("keeps %v: stderr %q lacks %q", keeps, c.StderrTail(), want)
		}
	}
}
