package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/spear-shell/spear-shell/testdata/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMedian(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	}
	for _, tt := range tests {
		if got := median(slices.Clone(tt.in)); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestJudge(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b, max float64
		ratio     string
		holds     string
	}{
		{1.1, 1, 1.10, "1.10", "yes"},
		{1.2, 1, 1.10, "1.20", "no"},
		{2, 1, 0, "2.00", "-"},
	}
	for _, tt := range tests {
		r := judge("x", tt.a, tt.b, "ms", tt.max)
		if r.ratio != tt.ratio || r.holds != tt.holds {
			t.Errorf("judge(%v, %v, %v) = ratio %s holds %s, want %s %s", tt.a, tt.b, tt.max, r.ratio, r.holds, tt.ratio, tt.holds)
		}
	}
}

func TestParseBwrapRecord(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		argv    []string
		env     []string
		wantErr bool
	}{
		{
			in:   "/usr/bin/bwrap\x00--bind\x00/\x00/\x00--\x00/bin/bash\x00-c\x00true\x00/bin/spear-shell\n\nA=1\x00B=2",
			argv: []string{"/usr/bin/bwrap", "--bind", "/", "/", "--", "/bin/bash", "-c", "true", "/bin/spear-shell"},
			env:  []string{"A=1", "B=2"},
		},
		{in: "/usr/bin/bwrap\x00--\x00/bin/bash\x00-c\x00true\x00n", wantErr: true},
		{in: "/usr/bin/bwrap\x00--bind\x00/\x00/\x00--\x00/bin/bash\x00-c\x00true\n\nA=1", wantErr: true},
		{in: "/usr/bin/bwrap\x00--bind\x00/\x00/\n\nA=1", wantErr: true},
		{in: "/usr/bin/bwrap\x00--\x00/bin/bash\x00-s\x00x\n\nA=1", wantErr: true},
	}
	for _, tt := range tests {
		argv, env, err := parseBwrapRecord([]byte(tt.in))
		if (err != nil) != tt.wantErr || !slices.Equal(argv, tt.argv) || !slices.Equal(env, tt.env) {
			t.Errorf("parseBwrapRecord(%q) = %q, %q, %v; want %q, %q (error %v)", tt.in, argv, env, err, tt.argv, tt.env, tt.wantErr)
		}
	}
}

// bwraprec must put the options it reads from --args FD in their place, and exec the real
// program with that argv.
func TestBwrapRecorder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := filepath.Join(dir, "bwrap")
	if err := testkit.Build(rec, "./bench/bwraprec"); err != nil {
		t.Fatal(err)
	}
	opts := filepath.Join(dir, "opts")
	if err := os.WriteFile(opts, []byte("--bind\x00/\x00/\x00--chdir\x00/a b\x00"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.WriteFile(filepath.Join(dir, "real"), []byte("/bin/echo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "record")
	cmd := exec.Command(rec, "--info-fd", "4", "--args", "3", "--", "/bin/bash", "-c", "true", "n")
	cmd.ExtraFiles = []*os.File{f}
	cmd.Env = []string{"X=1"}
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("bwraprec: %v", err)
	}
	want := "--info-fd 4 --bind / / --chdir /a b -- /bin/bash -c true n\n"
	if string(got) != want {
		t.Errorf("the real program got %q, want %q", got, want)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	argv, env, err := parseBwrapRecord(b)
	wantArgv := []string{"/bin/echo", "--info-fd", "4", "--bind", "/", "/", "--chdir", "/a b", "--", "/bin/bash", "-c", "true", "n"}
	if err != nil || !slices.Equal(argv, wantArgv) || !slices.Equal(env, []string{"X=1"}) {
		t.Errorf("record = %q, %q, %v; want %q, [X=1]", argv, env, err, wantArgv)
	}
}

func TestTail(t *testing.T) {
	t.Parallel()
	tl := newTail(4)
	for _, s := range []string{"ab", "cdefgh", "ij", "k"} {
		tl.Write([]byte(s))
	}
	if got := tl.String(); got != "hijk" || tl.n != 11 {
		t.Errorf("tail = %q (%d bytes written), want %q (11)", got, tl.n, "hijk")
	}
}

// The session cases check spear-shell's output against the line forwardedCommands
// expects; that line must be what bash itself prints.
func TestForwardedCommandsUnderBash(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	w := &world{ws: ws}
	for _, d := range []string{"a", "b"} {
		if err := exec.Command("mkdir", ws+"/"+d).Run(); err != nil {
			t.Fatal(err)
		}
	}
	cmds, last := forwardedCommands(w)
	if len(cmds) != 1000 {
		t.Fatalf("%d commands, want 1000", len(cmds))
	}
	cmd := exec.Command("/bin/bash", "-s")
	cmd.Dir = ws
	cmd.Stdin = strings.NewReader(strings.Join(cmds, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(out, []byte(last)) {
		t.Errorf("bash ends with %q, want %q", lastLines(string(out), 1), last)
	}
	// The interactive driver sees the same output once its markers are removed.
	per, got, err := w.interactive(context.Background(), []string{"/bin/bash", "-s"}, nil, cmds[:30])
	if err != nil {
		t.Fatal(err)
	}
	if len(per) != 30 || !strings.HasPrefix(string(out), got) || got == "" {
		t.Errorf("interactive: %d timings, output %q, want 30 and a prefix of bash's", len(per), got)
	}
}

// bareclient starts every copy, and fails when a server's answer is not a result (cat
// echoes the request back).
func TestBareClient(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tool := range []string{"bareclient", "slowprovider"} {
		if err := testkit.Build(filepath.Join(dir, tool), "./bench/"+tool); err != nil {
			t.Fatal(err)
		}
	}
	bare := filepath.Join(dir, "bareclient")
	if out, err := exec.Command(bare, "-parallel", "3", "--", filepath.Join(dir, "slowprovider"), "-tools", "2").CombinedOutput(); err != nil {
		t.Errorf("bareclient with slowprovider: %v\n%s", err, out)
	}
	out, err := exec.Command(bare, "--", "/bin/cat").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "not a result") {
		t.Errorf("bareclient with cat: %v, %s; want a failure naming what is not a result", err, out)
	}
}

// The face rows' helpers work together without spear-shell: faceclient alternates calls of
// fwdserver's echo (forwarded to slowprovider -catalog) with itself, fails on a result that lacks
// what it wants, and times listserver's start with the tools it dumped from fwdserver.
func TestFaceHelpers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tool := range []string{"faceclient", "fwdserver", "listserver", "slowprovider"} {
		if err := testkit.Build(filepath.Join(dir, tool), "./bench/"+tool); err != nil {
			t.Fatal(err)
		}
	}
	fwd := []string{filepath.Join(dir, "fwdserver"), "--", filepath.Join(dir, "slowprovider"), "-catalog", "-tools", "100"}
	echo := func(msg, want string) map[string]any {
		return map[string]any{"Tool": "echo", "Args": map[string]any{"message": msg}, "Want": want}
	}
	face := func(plan map[string]any) (string, error) {
		b, _ := json.Marshal(plan)
		out, err := exec.Command(filepath.Join(dir, "faceclient"), string(b)).Output()
		return string(out), err
	}
	out, err := face(map[string]any{"Servers": [][]string{fwd}, "Setup": []any{echo("a", "a")},
		"Sides": []any{echo("b", "b"), echo("c", "c")}, "Calls": 3})
	if lines := strings.Split(strings.TrimSpace(out), "\n"); err != nil || len(lines) != 2 ||
		len(strings.Fields(lines[0])) != 5 || !strings.HasPrefix(lines[1], "side 1 ") {
		t.Errorf("calls: %v, %q; want two sides of three times", err, out)
	}
	if _, err := face(map[string]any{"Servers": [][]string{fwd}, "Sides": []any{echo("b", "x")}, "Calls": 1}); err == nil {
		t.Error("a result without its want passed")
	}
	tools := filepath.Join(dir, "tools.json")
	out, err = face(map[string]any{"Servers": [][]string{fwd, {filepath.Join(dir, "listserver"), "-tools", tools}},
		"Start": true, "Rounds": 2, "WantTools": 1, "DumpTools": tools})
	if lines := strings.Split(strings.TrimSpace(out), "\n"); err != nil || len(lines) != 2 || len(strings.Fields(lines[1])) != 4 {
		t.Errorf("start: %v, %q; want two sides of two times", err, out)
	}
}

// The floor of the face's invoke row: fwdserver -relay reaches the provider through bench/relay
// over a unix socket, -audit appends an intent and an outcome per call (warm-up included), and
// when the client goes away the relay ends too (fwdserver waits for it, then removes its socket's
// directory).
func TestFloorHelpers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tool := range []string{"faceclient", "fwdserver", "relay", "slowprovider"} {
		if err := testkit.Build(filepath.Join(dir, tool), "./bench/"+tool); err != nil {
			t.Fatal(err)
		}
	}
	tmp, trail := t.TempDir(), filepath.Join(dir, "audit.jsonl")
	prov := []string{"--", filepath.Join(dir, "slowprovider"), "-catalog", "-tools", "100"}
	fwd := func(flags ...string) []string {
		return append(append([]string{filepath.Join(dir, "fwdserver")}, flags...), prov...)
	}
	echo := func(server int, msg string) map[string]any {
		return map[string]any{"Server": server, "Tool": "echo", "Args": map[string]any{"message": msg}, "Want": msg}
	}
	b, _ := json.Marshal(map[string]any{
		"Servers": [][]string{fwd("-relay", filepath.Join(dir, "relay"), "-audit", trail), fwd("-relay", filepath.Join(dir, "relay"))},
		"Sides":   []any{echo(0, "a"), echo(1, "b")}, "Calls": 3, "Shuffle": true})
	cmd := exec.Command(filepath.Join(dir, "faceclient"), string(b))
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	out, err := cmd.Output()
	if lines := strings.Split(strings.TrimSpace(string(out)), "\n"); err != nil || len(lines) != 2 {
		t.Fatalf("calls through the relay: %v, %q", err, out)
	}
	got, err := os.ReadFile(trail)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
	if len(lines) != 8 {
		t.Fatalf("audit: %d records, want 8 (an intent and an outcome for each of 4 calls):\n%s", len(lines), got)
	}
	for i, line := range lines {
		var r struct{ Event, Call string }
		want := []string{"intent", "outcome"}[i%2]
		if err := json.Unmarshal([]byte(line), &r); err != nil || r.Event != want || r.Call != strconv.Itoa(i/2+1) {
			t.Errorf("audit record %d: %v, %q; want %s of call %d", i, err, line, want, i/2+1)
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left in TMPDIR after the client went away: %v (a relay still running?)", left)
	}
}
