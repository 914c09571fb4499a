package policy

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// The test binary doubles as the approver (and its children): the approver's
// environment is PATH and HOME only, so the mode travels as arguments.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "approver-helper":
			os.Exit(approverHelper(os.Args[2:]))
		case "approve-caller":
			os.Exit(approveCaller(os.Args[2:]))
		}
	}
	goleak.VerifyTestMain(m)
}

// approverHelper behaves as an approver told by args what to do.
func approverHelper(args []string) int {
	if len(args) == 0 {
		return 100
	}
	switch args[0] {
	case "approve":
		_, _ = io.Copy(io.Discard, os.Stdin)
		return 0
	case "approve-unread": // exits 0 without reading its stdin
		return 0
	case "deny":
		return 1
	case "crash":
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(time.Minute)
		return 0
	case "garbage": // garbage <exit code>
		fmt.Fprintln(os.Stdout, "\x1b[31mAPPROVED {not json")
		fmt.Fprintln(os.Stderr, "garbage on stderr \x00\xff")
		code, _ := strconv.Atoi(args[1])
		return code
	case "record": // record <file>: stdin, then the environment
		in, _ := io.ReadAll(os.Stdin)
		out := string(in) + "--env--\n" + strings.Join(os.Environ(), "\n")
		if err := os.WriteFile(args[1], []byte(out), 0o600); err != nil {
			return 101
		}
		return 0
	case "hang": // hang <pidfile>: start a child in the same group, then wait forever
		child := exec.Command(os.Args[0], "approver-helper", "sleep")
		if err := child.Start(); err != nil {
			return 102
		}
		pids := fmt.Sprintf("%d %d", os.Getpid(), child.Process.Pid)
		if err := os.WriteFile(args[1], []byte(pids), 0o600); err != nil {
			return 103
		}
		time.Sleep(time.Hour)
		return 0
	case "sleep":
		time.Sleep(time.Hour)
		return 0
	}
	return 104
}

// approveCaller calls Approve with an approver that prints garbage, and prints
// nothing itself: whatever appears on its streams came from the approver.
func approveCaller(args []string) int {
	self, err := os.Executable()
	if err != nil {
		return 110
	}
	ok, _ := Approve(context.Background(), append([]string{self, "approver-helper"}, args...), 30*time.Second, ApprovalRequest{Turn: "t"})
	if ok {
		return 0
	}
	return 3
}

// writeFile writes content with mode 0600 (the registry refuses writable files).
func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
}

// mkExec creates an executable (never run) for command resolution.
func mkExec(t testing.TB, path string) {
	t.Helper()
	writeFile(t, path, "#!/bin/sh\nexit 0\n")
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

// tempDir is t.TempDir with symlinks resolved, so expectations compare with
// resolved paths.
func tempDir(t testing.TB) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// expand replaces @T@ in JSON templates by dir.
func expand(s, dir string) string { return strings.ReplaceAll(s, "@T@", dir) }
