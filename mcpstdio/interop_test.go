package mcpstdio

// Interoperability with servers nobody here wrote: one built with the official Go SDK,
// and the npm reference servers installed in testdata/interop/node_modules.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// binDir holds binaries built for the tests; TestMain creates and removes it.
var binDir string

var (
	goSDKOnce sync.Once
	goSDKPath string
	goSDKErr  error
)

// goSDKServer builds testdata/interop/gosdkserver once per test binary.
func goSDKServer(tb testing.TB) string {
	tb.Helper()
	goSDKOnce.Do(func() {
		goBin, err := exec.LookPath("go")
		if err != nil {
			goSDKErr = err
			return
		}
		goSDKPath = filepath.Join(binDir, "gosdkserver")
		out, err := exec.Command(goBin, "build", "-o", goSDKPath, "../testdata/interop/gosdkserver").CombinedOutput()
		if err != nil {
			goSDKErr = fmt.Errorf("build gosdkserver: %w\n%s", err, out)
		}
	})
	if goSDKErr != nil {
		tb.Fatal(goSDKErr)
	}
	return goSDKPath
}

func minimalEnv() Env {
	return NewEnv([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")})
}

func TestGoSDKServer(t *testing.T) {
	t.Parallel()
	cmd := Command{Path: goSDKServer(t), Args: []string{"-pagesize", "2", "-tools", "7"}, Dir: t.TempDir(), Env: minimalEnv()}
	ctx := callCtx(t, 30*time.Second)
	c, err := Start(ctx, cmd, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	if name, _ := c.ServerInfo(); name != "gosdkserver" {
		t.Errorf("ServerInfo name = %q", name)
	}

	tools, err := c.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	names := toolNames(tools)
	want := []string{"echo", "fail", "noop_000", "noop_001", "noop_002", "noop_003", "noop_004", "noop_005", "noop_006", "sum"}
	if !slices.Equal(names, want) { // 10 tools over 5 pages
		t.Errorf("tools = %v, want %v", names, want)
	}
	sum := tools[slices.Index(names, "sum")]
	if !strings.Contains(string(sum.OutputSchema), `"sum"`) || !strings.Contains(string(sum.InputSchema), `"required":["a","b"]`) {
		t.Errorf("sum schemas: in %s, out %s", sum.InputSchema, sum.OutputSchema)
	}

	res, err := c.CallTool(ctx, "echo", json.RawMessage(`{"message":"héllo"}`))
	if err != nil || len(res.Content) != 1 || res.Content[0].Text != "héllo" {
		t.Errorf("echo = %+v, %v", res, err)
	}
	res, err = c.CallTool(ctx, "sum", json.RawMessage(`{"a":1.5,"b":2}`))
	if err != nil || string(res.StructuredContent) != `{"sum":3.5}` || res.IsError {
		t.Errorf("sum = %+v, %v", res, err)
	}
	res, err = c.CallTool(ctx, "fail", json.RawMessage(`{"reason":"test"}`))
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].Text, "failing as asked: test") {
		t.Errorf("fail = %+v, %v", res, err)
	}
	_, err = c.CallTool(ctx, "no-such-tool", json.RawMessage(`{}`))
	var re *RPCError
	if !errors.As(err, &re) {
		t.Errorf("unknown tool: %v, want an RPC error", err)
	}
	if _, err := c.CallTool(ctx, "echo", json.RawMessage(`{"message":"again"}`)); err != nil {
		t.Errorf("after an RPC error: %v", err)
	}
}

// npmServer returns the command for an installed npm server, skipping the test when
// they are not installed unless SPEAR_REQUIRE_INTEROP=1.
func npmServer(t *testing.T, pkg string, args ...string) Command {
	t.Helper()
	mods, err := filepath.Abs("../testdata/interop/node_modules")
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(mods, "@modelcontextprotocol", pkg, "dist", "index.js")
	node, nodeErr := exec.LookPath("node")
	_, statErr := os.Stat(script)
	if err := errors.Join(nodeErr, statErr); err != nil {
		if os.Getenv("SPEAR_REQUIRE_INTEROP") == "1" {
			t.Fatalf("interop server %s not installed (npm ci --prefix testdata/interop): %v", pkg, err)
		}
		t.Skipf("interop server %s not installed (npm ci --prefix testdata/interop): %v", pkg, err)
	}
	if node, err = filepath.Abs(node); err != nil {
		t.Fatal(err)
	}
	return Command{Path: node, Args: append([]string{script}, args...), Dir: t.TempDir(), Env: minimalEnv()}
}

func TestServerEverything(t *testing.T) {
	t.Parallel()
	cmd := npmServer(t, "server-everything", "stdio")
	ctx := callCtx(t, 60*time.Second)
	c, err := Start(ctx, cmd, Options{})
	if err != nil {
		t.Fatalf("Start: %v (stderr %q)", err, StderrOf(err))
	}
	defer func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	tools, err := c.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	names := toolNames(tools)
	for _, n := range []string{"echo", "get-sum", "get-structured-content"} {
		if !slices.Contains(names, n) {
			t.Errorf("tools %v lack %s", names, n)
		}
	}
	if i := slices.Index(names, "get-structured-content"); i >= 0 && len(tools[i].OutputSchema) == 0 {
		t.Errorf("get-structured-content has no outputSchema: %s", tools[i].Raw)
	}

	res, err := c.CallTool(ctx, "echo", json.RawMessage(`{"message":"hi"}`))
	if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].Text != "Echo: hi" {
		t.Errorf("echo = %+v, %v", res, err)
	}
	res, err = c.CallTool(ctx, "get-sum", json.RawMessage(`{"a":2,"b":40}`))
	if err != nil || res.IsError || !strings.Contains(res.Content[0].Text, "42") {
		t.Errorf("get-sum = %+v, %v", res, err)
	}
	res, err = c.CallTool(ctx, "get-structured-content", json.RawMessage(`{"location":"Chicago"}`))
	if err != nil || res.IsError {
		t.Fatalf("get-structured-content = %+v, %v", res, err)
	}
	var weather struct{ Temperature, Humidity float64 }
	if err := json.Unmarshal(res.StructuredContent, &weather); err != nil || weather.Temperature != 36 || weather.Humidity != 82 {
		t.Errorf("structuredContent = %s (%v)", res.StructuredContent, err)
	}
	// A bad argument is the server's error to report; the session goes on either way.
	res, err = c.CallTool(ctx, "get-sum", json.RawMessage(`{"a":"two"}`))
	var re *RPCError
	if err != nil && !errors.As(err, &re) || err == nil && !res.IsError {
		t.Errorf("get-sum with a bad argument = %+v, %v", res, err)
	}
	if _, err := c.CallTool(ctx, "echo", json.RawMessage(`{"message":"again"}`)); err != nil {
		t.Errorf("after a tool error: %v", err)
	}
}

func TestServerFilesystem(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "hello.txt"), []byte("hello from a file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	root, _ = filepath.EvalSymlinks(root)
	cmd := npmServer(t, "server-filesystem", root)
	ctx := callCtx(t, 60*time.Second)
	c, err := Start(ctx, cmd, Options{})
	if err != nil {
		t.Fatalf("Start: %v (stderr %q)", err, StderrOf(err))
	}
	defer func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	tools, err := c.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tool := "read_text_file"
	if !slices.Contains(toolNames(tools), tool) {
		tool = "read_file"
	}
	args, _ := json.Marshal(map[string]string{"path": filepath.Join(root, "hello.txt")})
	res, err := c.CallTool(ctx, tool, args)
	if err != nil || res.IsError || len(res.Content) == 0 || res.Content[0].Text != "hello from a file\n" {
		t.Errorf("%s = %+v, %v", tool, res, err)
	}
	// Outside the allowed directory the server refuses; that is a result, not a broken session.
	args, _ = json.Marshal(map[string]string{"path": "/etc/hostname"})
	res, err = c.CallTool(ctx, tool, args)
	var re *RPCError
	if err != nil && !errors.As(err, &re) || err == nil && !res.IsError {
		t.Errorf("%s outside the root = %+v, %v", tool, res, err)
	}
}
