package realshell

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"testing"

	"go.uber.org/goleak"

	"github.com/spear-shell/spear-shell/interp/sandbox"
)

// helperEnv makes the test binary act as a helper instead of running tests (see TestHelperExec).
const helperEnv = "REALSHELL_TEST_HELPER"

// TestHelperExec is not a test: run by TestExecForwards, it forwards a -c string as the fast
// path does: bwrap forked, the status passed on.
func TestHelperExec(t *testing.T) {
	if os.Getenv(helperEnv) != "exec" {
		t.Skip("helper")
	}
	rs := &RealShell{Path: "/bin/bash", Env: os.Environ(),
		Boundary: &sandbox.Boundary{Bwrap: os.Getenv("BWRAP"), Masks: []string{os.Getenv("MASKED")}}}
	err := rs.Exec("myname", ParseArgs([]string{"-c", `echo "$0"; cat "$MASKED"/* 2>/dev/null; cat <&3; cat <&4; test -e /proc/self/fd/5 || echo "no fd 5"; exit 3`}))
	fmt.Println(err)
}

// Exec forwards as bash would: argv[0] as $0, inherited descriptors at their numbers and
// nothing of its own, the exit status; the masks hold.
func TestExecForwards(t *testing.T) {
	t.Parallel()
	bwrap, fi, err := sandbox.FindBwrap(os.Getenv)
	if err != nil {
		t.Skipf("no bwrap: %v", err)
	}
	dir := t.TempDir()
	if ok, reason := sandbox.Probe(bwrap, fi, dir); !ok {
		t.Skipf("no working bwrap: %s", reason)
	}
	var extra []*os.File
	for name, data := range map[string]string{"masked/secret": "SECRET", "three": "three\n", "four": "four\n"} {
		if err := os.MkdirAll(dir+"/masked", 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dir+"/"+name, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"three", "four"} {
		f, err := os.Open(dir + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		extra = append(extra, f)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestHelperExec$")
	cmd.Env = append(os.Environ(), helperEnv+"=exec", "BWRAP="+bwrap, "MASKED="+dir+"/masked")
	cmd.ExtraFiles = extra
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 || string(out) != "myname\nthree\nfour\nno fd 5\n" {
		t.Errorf("Exec: %q, %v; want $0, fds 3 and 4, no fd 5 and exit 3", out, err)
	}
}

func TestArgv0Args(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args  []string
		argv0 string
		want  []string
	}{
		{[]string{"-c", "echo $0"}, "/usr/bin/spear-shell", []string{"-c", "echo $0", "/usr/bin/spear-shell"}},
		{[]string{"-c", "echo $0", "name", "a"}, "/usr/bin/spear-shell", []string{"-c", "echo $0", "name", "a"}},
		{[]string{"-c", "shopt login_shell"}, "-mylogin", []string{"-l", "-c", "shopt login_shell", "-mylogin"}},
		{[]string{"script.sh", "a"}, "-sh", []string{"-l", "script.sh", "a"}},
		{[]string{"--noprofile", "--norc", "-c", "x"}, "-bash", []string{"--noprofile", "--norc", "-l", "-c", "x", "-bash"}},
		{[]string{"--version"}, "-sh", []string{"--version"}},
	}
	for _, tt := range tests {
		if got := ParseArgs(tt.args).Argv0Args(tt.argv0); !slices.Equal(got, tt.want) {
			t.Errorf("%q as %q: got %q, want %q", tt.args, tt.argv0, got, tt.want)
		}
	}
}

// TestMain checks that no test in the package leaves a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
