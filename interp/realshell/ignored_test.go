package realshell

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestIgnoredAtStart starts a probe with signals ignored (as bash's trap ” before exec
// leaves them) and compares what it reads with what was ignored, for a plain build, a PIE and
// a stripped binary (which knows only SIGHUP and SIGINT, and says why).
func TestIgnoredAtStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	builds := []struct {
		name  string
		flags []string
	}{
		{"plain", nil},
		{"pie", []string{"-buildmode=pie"}},
		{"stripped", []string{"-ldflags=-s"}},
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
	tests := []struct {
		build, traps, want string
	}{
		{"plain", "", "ignored: \n"},
		{"plain", "trap '' TERM PIPE", "ignored: SIGPIPE SIGTERM\n"},
		{"plain", "trap '' HUP INT QUIT USR1 ALRM CHLD URG WINCH 40", "ignored: SIGHUP SIGINT SIGQUIT SIGUSR1 SIGALRM SIGCHLD SIGURG SIGWINCH signal 40\n"},
		{"pie", "", "ignored: \n"},
		{"pie", "trap '' TERM PIPE", "ignored: SIGPIPE SIGTERM\n"},
		{"stripped", "trap '' HUP TERM", "unknown: ignored signals: /proc/self/exe: no symbol table (linked with -ldflags=-s?)\nknown: SIGHUP\n"},
	}
	for _, tc := range tests {
		script := tc.traps + "\nexec " + filepath.Join(dir, tc.build)
		out, err := exec.Command("/bin/bash", "-c", script).CombinedOutput()
		if err != nil || string(out) != tc.want {
			t.Errorf("%s with %q: got %q (%v), want %q", tc.build, tc.traps, out, err, tc.want)
		}
	}
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
