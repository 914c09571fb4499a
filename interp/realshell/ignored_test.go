package realshell

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestIgnoredAtStart starts a probe with signals ignored (as bash's trap ” before exec
// leaves them) and compares what it reads with what was ignored, for a plain build, a PIE and
// a stripped binary (which knows only SIGHUP and SIGINT, and says why).
func TestIgnoredAtStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	buildProbes(t, dir, true)
	tests := []struct{ build, traps string }{
		{"plain", ""},
		{"plain", "trap '' TERM PIPE"},
		{"plain", "trap '' HUP INT QUIT USR1 ALRM CHLD URG WINCH 40"},
		{"pie", ""},
		{"pie", "trap '' TERM PIPE"},
	}
	for _, tc := range tests {
		want := "ignored: " + ignoredBy(t, tc.traps).String() + "\n"
		out, err := exec.Command("/bin/bash", "-c", tc.traps+"\nexec "+filepath.Join(dir, tc.build)).CombinedOutput()
		if err != nil || string(out) != want {
			t.Errorf("%s with %q: got %q (%v), want %q", tc.build, tc.traps, out, err, want)
		}
	}
	// A binary without a symbol table knows SIGHUP and SIGINT only, and says why.
	out, err := exec.Command("/bin/bash", "-c", "trap '' HUP TERM\nexec "+filepath.Join(dir, "stripped")).CombinedOutput()
	want := "unknown: ignored signals: /proc/self/exe: no symbol table (linked with -ldflags=-s?)\nknown: SIGHUP\n"
	if ignoredBy(t, "").Has(syscall.SIGINT) {
		want = strings.Replace(want, "SIGHUP", "SIGHUP SIGINT", 1)
	}
	if err != nil || string(out) != want {
		t.Errorf("stripped: got %q (%v), want %q", out, err, want)
	}
}

// buildProbes builds testdata/ignoredprobe in dir as plain, pie and (with stripped) stripped.
func buildProbes(t *testing.T, dir string, stripped bool) {
	builds := []struct {
		name  string
		flags []string
	}{
		{"plain", nil},
		{"pie", []string{"-buildmode=pie"}},
		{"stripped", []string{"-ldflags=-s"}},
	}
	if !stripped {
		builds = builds[:2]
	}
	for _, b := range builds {
		bin := filepath.Join(dir, b.name)
		args := append(append([]string{"build", "-o", bin}, b.flags...), "./testdata/ignoredprobe")
		cmd := exec.Command("go", args...)
		cmd.Env = append(cmd.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// ignoredBy is what a program exec'd after traps starts with ignored, as the kernel shows it
// (the test's own environment may ignore some already), less what Go's runtime never records:
// SIGCONT and the terminal stops, which it leaves as they are.
func ignoredBy(t *testing.T, traps string) SignalSet {
	out, err := exec.Command("/bin/bash", "-c", traps+"\nexec grep SigIgn: /proc/self/status").Output()
	if err != nil {
		t.Fatalf("grep SigIgn: %v", err)
	}
	mask, err := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(string(out), "SigIgn:")), 16, 64)
	if err != nil {
		t.Fatalf("SigIgn %q: %v", out, err)
	}
	set := SignalSet(mask)
	for _, sig := range []syscall.Signal{syscall.SIGCONT, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU} {
		set &^= 1 << (sig - 1)
	}
	return set
}

// BenchmarkReadIgnored is what every forwarded command pays for knowing the signals ignored
// at start (the -c fast path included); the test binary's symbol table is larger than
// spear-shell's. go test strips the test binaries it runs: build one with go test -c.
func BenchmarkReadIgnored(b *testing.B) {
	if _, err := readIgnored("/proc/self/exe"); errors.Is(err, errNoSymtab) {
		b.Skip("a stripped test binary: go test -c -o realshell.test ./interp/realshell && ./realshell.test -test.run=^$ -test.bench=ReadIgnored")
	}
	for b.Loop() {
		if _, err := readIgnored("/proc/self/exe"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPkgPath: findFwdSig names this package's data anchor by pkgPath, without asking the
// runtime (which reads the pclntab) in an ordinary executable; the name must be the symbol's.
func TestPkgPath(t *testing.T) {
	t.Parallel()
	if got, want := anchorFunc().Name(), pkgPath+".anchorFunc"; got != want {
		t.Errorf("anchorFunc is named %q; pkgPath gives %q", got, want)
	}
}
