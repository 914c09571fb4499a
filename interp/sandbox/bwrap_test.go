package sandbox

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

	"github.com/spear-shell/spear-shell/policy/paths"
	"github.com/spear-shell/spear-shell/testdata/testkit"
)

// helperEnv makes the test binary act as a helper instead of running tests (see TestHelper*).
const helperEnv = "BOUNDARY_TEST_HELPER"

// needBwrap skips unless a real bwrap works here.
func needBwrap(t *testing.T) string {
	t.Helper()
	bwrap, fi, err := FindBwrap(os.Getenv)
	if err != nil {
		t.Skipf("no bwrap: %v", err)
	}
	if ok, reason := Probe(bwrap, fi, t.TempDir()); !ok {
		t.Skipf("no working bwrap: %s", reason)
	}
	return bwrap
}

// fixture lays out secrets where spear-shell keeps them and returns the boundary around them.
type fixture struct {
	root, home, work, state, audit, manifest, runDir, stubDir string
	b                                                         Boundary
}

// outsideTmp is a temporary directory outside /tmp, which the boundary replaces by the turn's
// own: what the tests guard must be where the shell could otherwise see it.
func outsideTmp(t *testing.T) string {
	t.Helper()
	return testkit.ScratchDir(t, "spear-sandbox-test-")
}

// copyExe returns the copy of the test binary outside /tmp (see exeCopy), or skips.
func copyExe(t *testing.T) string {
	t.Helper()
	if exeCopy == "" {
		t.Skip("no copy of the test binary outside /tmp")
	}
	return exeCopy
}

func newFixture(t *testing.T, bwrap string) *fixture {
	t.Helper()
	r := outsideTmp(t)
	f := &fixture{root: r, home: r + "/home", work: r + "/w", state: r + "/state", audit: r + "/logs/audit.jsonl",
		manifest: r + "/turns/turn.json", runDir: r + "/run"}
	writeFile(t, f.home+"/capabilities.json", `{"providers":[{"id":"x","env":{"TOKEN":"SECRET-CAPS"}}]}`)
	writeFile(t, f.state+"/family.json", "SECRET-STATE")
	writeFile(t, f.audit, "SECRET-AUDIT")
	writeFile(t, f.manifest, `{"turn":"t1","task":"implementation","workspace":"`+f.work+`","state_dir":"`+f.state+`","note":"SECRET-MANIFEST"}`)
	writeFile(t, f.runDir+"/bus", "SECRET-SOCKET")
	mkdir(t, f.work, 0o700)
	getenv := envOf("SPEAR_HOME", f.home, "XDG_RUNTIME_DIR", f.runDir, "SPEAR_AUDIT_FILE", f.audit)
	parent, err := paths.EnsureStateParent(getenv)
	if err != nil {
		t.Fatal(err)
	}
	p := PlanBoundary(getenv, f.manifest, parent, f.work, []string{bwrap}, []string{"bwrap"})
	if p.Err != nil {
		t.Fatal(p.Err)
	}
	f.stubDir = filepath.Join(parent, "bin")
	f.b = Boundary{
		Bwrap:      bwrap,
		Masks:      p.Masks,
		Writable:   p.Writable,
		Tmp:        p.Tmp,
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
	cmd.Env = ShellEnv(append(os.Environ(), "SPEAR_HOME="+f.home, "SPEAR_AUDIT_FILE="+f.audit), f.stubDir, true)
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
	hostTmp := t.TempDir()
	writeFile(t, hostTmp+"/secret", "SECRET-HOST-TMP")
	tests := []struct {
		name, script string
		want         string // exact output; "*" = anything without SECRET
		code         int
	}{
		{"capabilities file gone", "cat " + f.home + "/capabilities.json 2>/dev/null", "", 1},
		{"SPEAR_HOME empty", "ls -A " + f.home, "", 0},
		{"SPEAR_HOME read-only", "touch " + f.home + "/x 2>/dev/null", "", 1},
		{"manifest's directory empty", "ls -A " + filepath.Dir(f.manifest) + "; cat " + f.manifest + " 2>/dev/null", "", 1},
		{"manifest's directory read-only", "echo x 2>/dev/null > " + f.manifest, "", 2},
		{"state empty", "ls -A " + f.state + "; cat " + f.state + "/family.json 2>/dev/null", "", 1},
		{"audit's directory empty", "ls -A " + filepath.Dir(f.audit) + "; cat " + f.audit + " 2>/dev/null", "", 1},
		{"XDG_RUNTIME_DIR hides the state parent and the user's sockets", "ls -A " + f.runDir + "; ls -A " + filepath.Dir(f.stubDir), "spear\nbin\n", 0},
		{"the root is read-only", "touch /usr/x " + f.root + "/x 2>/dev/null", "", 1},
		{"a parent of a mask cannot be moved away", "mv " + f.home + " " + f.root + "/elsewhere 2>/dev/null", "", 1},
		{"the turn's /tmp and /var/tmp are one writable directory", "echo hi > /tmp/f && cat /var/tmp/f", "hi\n", 0},
		{"the host's /tmp is not seen", "cat " + hostTmp + "/secret 2>/dev/null", "", 1},
		{"a private /dev/shm", "echo x > /dev/shm/y && cat /dev/shm/y", "x\n", 0},
		{"a minimal /dev", "ls /dev | tr '\\n' ' '", "core fd full null ptmx pts random shm stderr stdin stdout tty urandom zero ", 0},
		{"nothing to grep anywhere", "grep -rs SECRET " + f.root + "; echo $?", "1\n", 0},
		{"own PID namespace", "cat /proc/1/comm", "bwrap\n", 0},
		{"our process is invisible", "cat /proc/[0-9]*/cmdline | tr '\\0' ' ' | grep -c -- '-test\\.' ", "0\n", 1},
		{"our pid is not ours inside", "cat /proc/" + self + "/environ 2>/dev/null | tr '\\0' '\\n' | grep -c SPEAR_HOME", "0\n", 1},
		{"no SPEAR_ variables", "env | grep -c '^SPEAR_'", "0\n", 1},
		{"marker", "echo $" + BoundaryMarker, "bwrap\n", 0},
		{"stub first on PATH", "command -v spear-capability", f.stubDir + "/spear-capability\n", 0},
		{"stub runs its target", "spear-capability; echo $?", "0\n", 0},
		{"working directory unchanged", "pwd", f.work + "\n", 0},
		{"masks cannot be unmounted", "umount " + filepath.Dir(f.manifest) + " " + f.home + " 2>/dev/null; cat " + f.manifest + " 2>/dev/null; ls -A " + f.home, "", 0},
		{"no capabilities", "grep CapEff /proc/self/status", "CapEff:\t0000000000000000\n", 0},
		{"workspace writable", "echo hi > f && cat f && rm f", "hi\n", 0},
		{"exit status", "exit 7", "", 7},
		{"user unchanged", "id -u", strconv.Itoa(os.Getuid()) + "\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, code := f.run(t, f.b, tt.script)
			if tt.want == "*" && !strings.Contains(out, "SECRET") && code == tt.code {
				return
			}
			if out != tt.want || code != tt.code {
				t.Errorf("%s:\n got %q exit %d\nwant %q exit %d", tt.script, out, code, tt.want, tt.code)
			}
		})
	}
}

// TestHelperInside is not a test: run by the tests below inside the boundary.
func TestHelperInside(t *testing.T) {
	switch os.Getenv(helperEnv) {
	case "inside":
		fmt.Printf("inside=%v\n", InsideBoundary(os.Getenv))
	default:
		t.Skip("helper")
	}
}

func TestInsideBoundaryDetectsBwrap(t *testing.T) {
	t.Parallel()
	f := newFixture(t, needBwrap(t))
	exe := copyExe(t)
	// Without the marker, PID 1 being bwrap is enough.
	script := fmt.Sprintf("env -u %s %s=inside %s -test.run='^TestHelperInside$'", BoundaryMarker, helperEnv, exe)
	out, code := f.run(t, f.b, script)
	if !strings.Contains(out, "inside=true") || code != 0 {
		t.Errorf("got %q exit %d", out, code)
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
			mkdir(t, cache, 0o700)
			fake := bin + "/bwrap"
			writeFile(t, fake, "#!/bin/sh\necho run >> "+count+"\n"+tt.script+"\n")
			if err := os.Chmod(fake, 0o755); err != nil {
				t.Fatal(err)
			}
			getenv := envOf("SPEAR_BWRAP", fake, "PATH", "/usr/bin:/bin")
			runs := func() int {
				data, _ := os.ReadFile(count)
				return strings.Count(string(data), "run")
			}
			probe := func() (bool, string) {
				path, fi, err := FindBwrap(getenv)
				if err != nil || path != fake {
					t.Fatalf("FindBwrap: %q %v", path, err)
				}
				return Probe(path, fi, cache)
			}
			for i, wantRuns := range []int{1, 1, 1} {
				ok, reason := probe()
				if ok != tt.ok || !strings.Contains(reason, tt.reason) || (tt.ok && reason != "") {
					t.Fatalf("probe %d: %v %q", i, ok, reason)
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
			probe()
			if runs() != 2 {
				t.Fatalf("after a changed mtime bwrap ran %d times, want 2", runs())
			}
			// A cache others could have written is not trusted.
			if err := os.Chmod(cache+"/"+ProbeCacheName, 0o666); err != nil {
				t.Fatal(err)
			}
			probe()
			if runs() != 3 {
				t.Fatalf("with a world-writable cache bwrap ran %d times, want 3", runs())
			}
		})
	}
}

// bwrap is never looked up on PATH, which the agent may write.
func TestFindBwrap(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir+"/bwrap", "#!/bin/sh\n")
	if err := os.Chmod(dir+"/bwrap", 0o755); err != nil {
		t.Fatal(err)
	}
	if p, _, err := FindBwrap(envOf("PATH", dir)); err == nil && p == dir+"/bwrap" {
		t.Errorf("bwrap taken from PATH: %s", p)
	}
	if _, _, err := FindBwrap(envOf("SPEAR_BWRAP", "bwrap")); err == nil || !strings.Contains(err.Error(), "not an absolute path") {
		t.Errorf("relative SPEAR_BWRAP: %v", err)
	}
	if _, _, err := FindBwrap(envOf("SPEAR_BWRAP", dir)); err == nil || !strings.Contains(err.Error(), "not an executable file") {
		t.Errorf("SPEAR_BWRAP a directory: %v", err)
	}
}
