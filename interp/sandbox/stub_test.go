package sandbox

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// bashRun runs bash with args in dir, with the handler exported or not, and returns its
// stdout, stderr and status.
func bashRun(t *testing.T, dir string, handler string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/bash", args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir}
	if handler != "" {
		cmd.Env = append(cmd.Env, stubFuncVar+"="+StubFunc(handler))
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("bash %q hung", args)
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// The exported handler finds the stub whatever PATH becomes, and for any other name behaves as
// bash does without it (bash is the oracle): same message, same status, same trace.
func TestStubFunc(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stub := filepath.Join(dir, "stubdir", StubName)
	writeFile(t, stub, "#!/bin/sh\necho \"stub $*\"; exit 126\n")
	if err := os.Chmod(stub, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir+"/s.sh", "echo a\nfoo1 x\nf() { foo2; }\nf\n")
	writeFile(t, dir+"/lib.sh", "foo3\n")
	sameAsBash := [][]string{
		{"-c", "foo0"},
		{"-c", "true\nfoo0b", "nm"},
		{"s.sh"},
		{"-c", ". ./lib.sh"},
		{"-xc", "foo4; echo $?"},
		{"-c", "set -eu; foo5; echo not reached"},
		{"-c", "(foo6) 2>&1 | tr a-z A-Z"},
		{"-c", "enable -n builtin; builtin echo x; echo $?"},
		{"-c", "command_not_found_handle() { echo mine \"$@\"; return 5; }; foo7; echo $?"},
		// bash prints a name it cannot print as $'...' (printable_filename), by the locale's rules.
		{"-c", "$'5\\247@3\\231+\\306S8'; $'caf\\303\\251'; 'a b'"},
		{"-c", "export LC_ALL=C.UTF-8; $'caf\\303\\251'; $'a\\001b'; $'\\247x'; \"'q'\""},
	}
	for _, args := range sameAsBash {
		gotOut, gotErr, gotCode := bashRun(t, dir, stub, args...)
		wantOut, wantErr, wantCode := bashRun(t, dir, "", args...)
		if gotOut != wantOut || gotErr != wantErr || gotCode != wantCode {
			t.Errorf("bash %q:\n with the handler %q %q %d\n without          %q %q %d", args, gotOut, gotErr, gotCode, wantOut, wantErr, wantCode)
		}
	}
	for _, script := range []string{
		"PATH=/nowhere; spear-capability list",
		"export PATH=/usr/bin; x=spear-capability; $x list",
		"bash -c 'PATH=/nowhere; spear-capability list'",
	} {
		out, _, code := bashRun(t, dir, stub, "-c", script)
		if out != "stub list\n" || code != 126 {
			t.Errorf("%q: %q exit %d, want the stub's answer", script, out, code)
		}
	}
	// A session that disables the builtins the handler uses loses its message, never hangs.
	_, _, code := bashRun(t, dir, stub, "-c", "enable -n printf return; PATH=; foo8")
	if code == 0 {
		t.Errorf("foo8 found")
	}
}
