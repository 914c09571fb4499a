package realshell

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// helperEnv makes the test binary act as a helper instead of running tests (see TestHelper*).
const helperEnv = "BOUNDARY_TEST_HELPER"

// needBwrap skips unless a real bwrap works here.
func needBwrap(t *testing.T) string {
	t.Helper()
	bwrap, ok, reason := Probe(os.Getenv, t.TempDir())
	if !ok {
		t.Skipf("no working bwrap: %s", reason)
	}
	return bwrap
}

// fixture lays out secrets where spear-shell keeps them and returns the boundary around them.
type fixture struct {
	root, home, work, state, audit, manifest, stubDir string
	b                                                 Boundary
}

func newFixture(t *testing.T, bwrap string) *fixture {
	t.Helper()
	r, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{root: r, home: r + "/home", work: r + "/w", state: r + "/state", audit: r + "/audit.jsonl", manifest: r + "/w/turn.json"}
	writeFile(t, f.home+"/capabilities.json", `{"providers":[{"id":"x","env":{"TOKEN":"SECRET-CAPS"}}]}`)
	writeFile(t, f.state+"/family.json", "SECRET-STATE")
	writeFile(t, f.audit, "SECRET-AUDIT")
	writeFile(t, f.manifest, `{"turn":"t1","task":"implementation","state_dir":"`+f.state+`","note":"SECRET-MANIFEST"}`)
	getenv := envOf("SPEAR_HOME", f.home, "TMPDIR", r+"/tmp", "SPEAR_AUDIT_FILE", f.audit)
	f.stubDir = filepath.Join(StateParent(getenv), "bin")
	f.b = Boundary{
		Bwrap:      bwrap,
		Masks:      CheapMasks(getenv, f.manifest),
		StubDir:    f.stubDir,
		StubTarget: "/bin/true",
		Dir:        f.work,
	}
	return f
}

// run runs script with /bin/sh inside the boundary; extra are ExtraFiles.
func (f *fixture) run(t *testing.T, b Boundary, script string, extra ...*os.File) (string, int) {
	t.Helper()
	args := b.Args([]string{"/bin/sh", "-c", script})
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = ShellEnv(append(os.Environ(), "SPEAR_HOME="+f.home, "SPEAR_AUDIT_FILE="+f.audit), f.stubDir)
	cmd.ExtraFiles = extra
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out.String(), 0
	case errors.As(err, &ee):
		return out.String(), ee.ExitCode()
	}
	t.Fatalf("run %q: %v", args, err)
	return "", -1
}

func TestBoundaryWithBwrap(t *testing.T) {
	t.Parallel()
	f := newFixture(t, needBwrap(t))
	self := strconv.Itoa(os.Getpid())
	tests := []struct {
		name, script string
		want         string // exact output; "*" = anything without SECRET
		code         int
	}{
		{"capabilities file gone", "cat " + f.home + "/capabilities.json 2>/dev/null", "", 1},
		{"SPEAR_HOME empty", "ls -A " + f.home, "", 0},
		{"SPEAR_HOME read-only", "touch " + f.home + "/x 2>/dev/null", "", 1},
		{"manifest empty", "cat " + f.manifest, "", 0},
		{"manifest read-only", "echo x 2>/dev/null > " + f.manifest, "", 2},
		{"manifest not removable", "rm -f " + f.manifest + " 2>/dev/null", "", 1},
		{"manifest a regular empty file", "test -f " + f.manifest + " && test ! -s " + f.manifest + " && echo ok", "ok\n", 0},
		{"state empty", "ls -A " + f.state + "; cat " + f.state + "/family.json 2>/dev/null", "", 1},
		{"audit empty", "cat " + f.audit, "", 0},
		{"state parent hides the empty file and the cache", "ls -A " + filepath.Dir(f.stubDir), "bin\n", 0},
		{"a parent of a mask cannot be moved away", "mv " + f.work + " " + f.root + "/elsewhere 2>/dev/null", "", 1},
		{"nothing to grep anywhere", "grep -rs SECRET " + f.root + "; echo $?", "1\n", 0},
		{"own PID namespace", "cat /proc/1/comm", "bwrap\n", 0},
		{"our process is invisible", "cat /proc/[0-9]*/cmdline | tr '\\0' ' ' | grep -c -- '-test\\.' ", "0\n", 1},
		{"our pid is not ours inside", "cat /proc/" + self + "/environ 2>/dev/null | tr '\\0' '\\n' | grep -c SPEAR_HOME", "0\n", 1},
		{"no SPEAR_ variables", "env | grep -c '^SPEAR_'", "0\n", 1},
		{"marker", "echo $" + BoundaryMarker, "bwrap\n", 0},
		{"stub first on PATH", "command -v spear-capability", f.stubDir + "/spear-capability\n", 0},
		{"stub runs its target", "spear-capability; echo $?", "0\n", 0},
		{"working directory unchanged", "pwd", f.work + "\n", 0},
		{"masks cannot be unmounted", "umount " + f.manifest + " " + f.home + " 2>/dev/null; cat " + f.manifest + "; ls -A " + f.home, "", 0},
		{"no capabilities", "grep CapEff /proc/self/status", "CapEff:\t0000000000000000\n", 0},
		{"workspace writable", "echo hi > f && cat f && rm f", "hi\n", 0},
		{"exit status", "exit 7", "", 7},
		{"user unchanged", "id -u", strconv.Itoa(os.Getuid()) + "\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, code := f.run(t, f.b, tt.script)
			if out != tt.want || code != tt.code {
				t.Errorf("%s:\n got %q exit %d\nwant %q exit %d", tt.script, out, code, tt.want, tt.code)
			}
		})
	}
}

func TestBoundaryFileMaskFromFD(t *testing.T) {
	t.Parallel()
	f := newFixture(t, needBwrap(t))
	b := f.b
	b.Masks.Empty = ""
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	out, code := f.run(t, b, "cat "+f.manifest+" && test -f "+f.manifest+" && echo ok", devNull)
	if out != "ok\n" || code != 0 {
		t.Errorf("got %q exit %d", out, code)
	}
	// Without the descriptor bwrap refuses to start: closed, not open.
	out, code = f.run(t, b, "echo ran")
	if code == 0 || strings.Contains(out, "ran") {
		t.Errorf("ran without the empty descriptor: %q exit %d", out, code)
	}
}

// TestHelperInside is not a test: run by the tests below inside the boundary.
func TestHelperInside(t *testing.T) {
	switch os.Getenv(helperEnv) {
	case "inside":
		fmt.Printf("inside=%v\n", InsideBoundary(os.Getenv))
	case "exec":
		// The forwarding path of a -c string: bwrap forked, its options on a pipe, the status passed on.
		rs := &RealShell{Path: "/bin/sh", Env: os.Environ(),
			Boundary: &Boundary{Bwrap: os.Getenv("BWRAP"), Masks: Masks{Files: []string{os.Getenv("MASKED")}}}}
		err := rs.Exec("sh", []string{"-c", "cat \"$MASKED\"; echo done; exit 3"})
		fmt.Println(err)
	default:
		t.Skip("helper")
	}
}

func TestInsideBoundaryDetectsBwrap(t *testing.T) {
	t.Parallel()
	f := newFixture(t, needBwrap(t))
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Without the marker, PID 1 being bwrap is enough.
	script := fmt.Sprintf("env -u %s %s=inside %s -test.run='^TestHelperInside$'", BoundaryMarker, helperEnv, exe)
	out, code := f.run(t, f.b, script)
	if !strings.Contains(out, "inside=true") || code != 0 {
		t.Errorf("got %q exit %d", out, code)
	}
}

func TestExecMasksFiles(t *testing.T) {
	t.Parallel()
	bwrap := needBwrap(t)
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	writeFile(t, secret, "SECRET")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestHelperInside$")
	cmd.Env = append(os.Environ(), helperEnv+"=exec", "BWRAP="+bwrap, "MASKED="+secret)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 || string(out) != "done\n" {
		t.Errorf("Exec: %q, %v; want done and exit 3", out, err)
	}
}

func TestProbeCaches(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		script string
		ok     bool
		reason string
	}{
		{"works", "exit 0", true, ""},
		{"fails", "echo 'bwrap: No permissions to create new namespace' >&2; exit 1", false, "No permissions to create new namespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			bin, cache, count := dir+"/bin", dir+"/cache", dir+"/count"
			fake := bin + "/bwrap"
			writeFile(t, fake, "#!/bin/sh\necho run >> "+count+"\n"+tt.script+"\n")
			if err := os.Chmod(fake, 0o755); err != nil {
				t.Fatal(err)
			}
			getenv := envOf("PATH", "relative/dir:"+bin+":/usr/bin:/bin")
			runs := func() int {
				data, _ := os.ReadFile(count)
				return strings.Count(string(data), "run")
			}
			for i, wantRuns := range []int{1, 1, 1} {
				path, ok, reason := Probe(getenv, cache)
				if path != fake || ok != tt.ok || !strings.Contains(reason, tt.reason) || (tt.ok && reason != "") {
					t.Fatalf("probe %d: %q %v %q", i, path, ok, reason)
				}
				if runs() != wantRuns {
					t.Fatalf("probe %d: bwrap ran %d times, want %d", i, runs(), wantRuns)
				}
			}
			// A changed binary (mtime) is probed again.
			later := time.Now().Add(time.Hour)
			if err := os.Chtimes(fake, later, later); err != nil {
				t.Fatal(err)
			}
			Probe(getenv, cache)
			if runs() != 2 {
				t.Fatalf("after a changed mtime bwrap ran %d times, want 2", runs())
			}
			// A cache others could have written is not trusted.
			if err := os.Chmod(cache+"/"+ProbeCacheName, 0o666); err != nil {
				t.Fatal(err)
			}
			Probe(getenv, cache)
			if runs() != 3 {
				t.Fatalf("with a world-writable cache bwrap ran %d times, want 3", runs())
			}
		})
	}
}

func TestProbeNoBwrap(t *testing.T) {
	t.Parallel()
	path, ok, reason := Probe(envOf("PATH", t.TempDir()), t.TempDir())
	if path != "" || ok || reason != "bwrap not found on PATH" {
		t.Errorf("got %q %v %q", path, ok, reason)
	}
}
