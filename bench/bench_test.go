package main

import (
	"bytes"
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
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

func TestReferenceBwrap(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      []string
		want    []string
		wantErr bool
	}{
		{
			in:   []string{"/usr/bin/bwrap", "--info-fd", "3", "--bind", "/", "/", "--", "/bin/bash", "-c", "cat /proc/1/cmdline"},
			want: []string{"/usr/bin/bwrap", "--info-fd", "3", "--bind", "/", "/", "--", "/bin/bash", "-c", "true"},
		},
		{in: []string{"/usr/bin/bwrap", "--bind", "/", "/"}, wantErr: true},
		{in: []string{"/usr/bin/bwrap", "--", "/bin/bash", "-s"}, wantErr: true},
	}
	for _, tt := range tests {
		got, err := referenceBwrap(tt.in)
		if (err != nil) != tt.wantErr || !slices.Equal(got, tt.want) {
			t.Errorf("referenceBwrap(%q) = %q, %v; want %q (error %v)", tt.in, got, err, tt.want, tt.wantErr)
		}
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
