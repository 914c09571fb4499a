package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestWriteGate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		write, mode string
		want        Gate
	}{
		{"refuse", "read-only", GateRefuse},
		{"refuse", "ask", GateRefuse},
		{"refuse", "auto-approve", GateRefuse},
		{"confirm", "read-only", GateRefuse},
		{"confirm", "ask", GateAsk},
		{"confirm", "auto-approve", GateAutoApproved},
		{"allow", "read-only", GateRefuse},
		{"allow", "ask", GateRun},
		{"allow", "auto-approve", GateRun},
		// Anything unknown fails closed.
		{"", "ask", GateRefuse},
		{"Allow", "auto-approve", GateRefuse},
		{"allow", "", GateRefuse},
		{"allow", "Ask", GateRefuse},
		{"confirm", "yolo", GateRefuse},
	}
	for _, tt := range tests {
		if got := WriteGate(tt.write, tt.mode); got != tt.want {
			t.Errorf("WriteGate(%q, %q) = %v, want %v", tt.write, tt.mode, got, tt.want)
		}
	}
	for g, s := range map[Gate]string{GateRefuse: "refuse", GateRun: "run", GateAsk: "ask", GateAutoApproved: "auto-approved", Gate(9): "Gate(9)"} {
		if g.String() != s {
			t.Errorf("Gate(%d).String() = %q, want %q", int(g), g.String(), s)
		}
	}
}

func TestClass(t *testing.T) {
	t.Parallel()
	p := &Provider{Read: []string{"search", "get.issue"}}
	for tool, want := range map[string]string{"search": "READ", "get.issue": "READ", "create": "WRITE", "Search": "WRITE", "": "WRITE", "search ": "WRITE"} {
		if got := p.Class(tool); got != want {
			t.Errorf("Class(%q) = %q, want %q", tool, got, want)
		}
	}
	if got := (&Provider{}).Class("search"); got != "WRITE" {
		t.Errorf("no read list: Class = %q, want WRITE", got)
	}
}

func selfExe(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func TestApprove(t *testing.T) {
	t.Parallel()
	exe := selfExe(t)
	dir := tempDir(t)
	notExec := filepath.Join(dir, "not-exec")
	writeFile(t, notExec, "#!/bin/sh\nexit 0\n")
	helper := func(args ...string) []string { return append([]string{exe, "approver-helper"}, args...) }
	tests := []struct {
		name     string
		approver []string
		timeout  time.Duration
		ok       bool
		reason   string
	}{
		{"approve", helper("approve"), 30 * time.Second, true, "approved"},
		{"approve without reading stdin", helper("approve-unread"), 30 * time.Second, true, "approved"},
		{"deny", helper("deny"), 30 * time.Second, false, "denied (exit status 1)"},
		{"crash", helper("crash"), 30 * time.Second, false, "crashed (signal: killed)"},
		{"garbage then exit 0", helper("garbage", "0"), 30 * time.Second, true, "approved"},
		{"garbage then exit 1", helper("garbage", "1"), 30 * time.Second, false, "denied"},
		{"hang past the timeout", helper("sleep"), 300 * time.Millisecond, false, "did not answer within 300ms"},
		{"missing program", []string{filepath.Join(dir, "nonesuch")}, 30 * time.Second, false, "cannot be started"},
		{"not executable", []string{notExec}, 30 * time.Second, false, "cannot be started"},
		{"a directory", []string{dir}, 30 * time.Second, false, "cannot be started"},
		{"no approver", nil, 30 * time.Second, false, "no approver"},
		{"relative program", []string{"approve"}, 30 * time.Second, false, "absolute"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			ok, reason := Approve(context.Background(), tt.approver, tt.timeout, ApprovalRequest{Turn: "t1", Capability: "x/y", Class: "WRITE", Arguments: json.RawMessage(`{"a":1}`)})
			if ok != tt.ok || !strings.Contains(reason, tt.reason) {
				t.Errorf("Approve = %v, %q; want %v, %q", ok, reason, tt.ok, tt.reason)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("Approve took %v", d)
			}
		})
	}
}

func TestApproveInterrupted(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	ok, reason := Approve(ctx, []string{selfExe(t), "approver-helper", "sleep"}, time.Minute, ApprovalRequest{})
	if ok || reason != "approval interrupted" {
		t.Errorf("Approve = %v, %q; want interrupted", ok, reason)
	}
	ok, reason = Approve(ctx, []string{selfExe(t), "approver-helper", "approve"}, time.Minute, ApprovalRequest{})
	if ok || reason != "approval interrupted" {
		t.Errorf("cancelled before start: Approve = %v, %q", ok, reason)
	}
}

// The approver reads exactly one JSON object with the six keys, and its environment
// is PATH and HOME only.
func TestApproveRequestAndEnv(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	out := filepath.Join(dir, "record")
	req := ApprovalRequest{Turn: "t1", Session: "s1", Capability: "tracker/create_issue", Class: "WRITE",
		Description: "Create an issue\nin the tracker", Arguments: json.RawMessage(`{"title": "x", "n": 1.50}`)}
	ok, reason := Approve(context.Background(), []string{selfExe(t), "approver-helper", "record", out}, 30*time.Second, req)
	if !ok {
		t.Fatalf("Approve: %s", reason)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	stdin, env, _ := strings.Cut(string(data), "--env--\n")
	if strings.Count(stdin, "\n") != 1 || !strings.HasSuffix(stdin, "\n") {
		t.Errorf("stdin %q, want one line", stdin)
	}
	dec := json.NewDecoder(strings.NewReader(stdin))
	dec.UseNumber()
	var got map[string]any
	if err := dec.Decode(&got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"turn": "t1", "session": "s1", "capability": "tracker/create_issue", "class": "WRITE",
		"description": "Create an issue\nin the tracker", "arguments": map[string]any{"title": "x", "n": json.Number("1.50")}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("request %#v, want %#v", got, want)
	}
	var keys []string
	for _, kv := range strings.Split(env, "\n") {
		k, _, _ := strings.Cut(kv, "=")
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var wantKeys []string
	for _, k := range []string{"HOME", "PATH"} {
		if os.Getenv(k) != "" {
			wantKeys = append(wantKeys, k)
		}
	}
	if !reflect.DeepEqual(keys, wantKeys) {
		t.Errorf("approver environment keys %v, want %v", keys, wantKeys)
	}
}

func TestApprovalRequestJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		req  ApprovalRequest
		want string
	}{
		{ApprovalRequest{}, `{"turn":"","session":"","capability":"","class":"","arguments":{},"description":""}`},
		{ApprovalRequest{Turn: "t", Arguments: json.RawMessage(`{"a": [1]}`)}, `{"turn":"t","session":"","capability":"","class":"","arguments":{"a":[1]},"description":""}`},
	}
	for _, tt := range tests {
		got, err := json.Marshal(tt.req)
		if err != nil || string(got) != tt.want {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", tt.req, got, err, tt.want)
		}
	}
	ok, reason := Approve(context.Background(), []string{selfExe(t), "approver-helper", "approve"}, time.Minute, ApprovalRequest{Arguments: json.RawMessage(`{bad`)})
	if ok || !strings.Contains(reason, "cannot be encoded") {
		t.Errorf("bad arguments: Approve = %v, %q", ok, reason)
	}
}

// What the approver prints never reaches the caller's stdout or stderr: a child
// process calls Approve with a garbage-printing approver and must print nothing.
func TestApproveOutputNeverReachesCaller(t *testing.T) {
	t.Parallel()
	for _, code := range []string{"0", "1"} {
		cmd := exec.Command(selfExe(t), "approve-caller", "garbage", code)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exitErr *exec.ExitError
		wantExit := map[string]int{"0": 0, "1": 3}[code]
		gotExit := 0
		if errors.As(err, &exitErr) {
			gotExit = exitErr.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if gotExit != wantExit {
			t.Errorf("exit %d: caller exit %d, want %d (stderr %q)", len(code), gotExit, wantExit, stderr.String())
		}
		if stdout.Len() != 0 || stderr.Len() != 0 {
			t.Errorf("approver output reached the caller: stdout %q stderr %q", stdout.String(), stderr.String())
		}
	}
}

// On timeout the approver's whole process group is killed, its children included.
func TestApproveKillsGroupOnTimeout(t *testing.T) {
	t.Parallel()
	pidfile := filepath.Join(tempDir(t), "pids")
	ok, reason := Approve(context.Background(), []string{selfExe(t), "approver-helper", "hang", pidfile}, 5*time.Second, ApprovalRequest{})
	if ok || !strings.Contains(reason, "did not answer") {
		t.Fatalf("Approve = %v, %q", ok, reason)
	}
	data, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatalf("the helper did not record its pids in time: %v", err)
	}
	var approver, child int
	if _, err := fmt.Sscan(string(data), &approver, &child); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for alive(child) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(child, syscall.SIGKILL)
			t.Fatalf("the approver's child %d survived the timeout", child)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports whether pid is a process that is not a zombie (a zombie is dead but
// may not be reaped where no init reaps orphans).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}
