package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestBindFiles: a file an envelope writes for its terminal is made and bound alone, after the
// turn's /tmp; one reached through a symlink, one that is a symlink or has another name, and one
// inside a mask are refused and not bound.
func TestBindFiles(t *testing.T) {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"host", "mask", "ws", "other"} {
		if err := os.Mkdir(filepath.Join(d, n), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(filepath.Join(d, "host"), filepath.Join(d, "link")))
	must(os.WriteFile(filepath.Join(d, "other", "secret"), []byte("s"), 0o600))
	must(os.Symlink(filepath.Join(d, "other", "secret"), filepath.Join(d, "host", "sym-cwd")))
	must(os.Link(filepath.Join(d, "other", "secret"), filepath.Join(d, "host", "hard-cwd")))
	good := filepath.Join(d, "host", "claude-1-cwd")
	for _, tc := range []struct{ path, why string }{
		{good, ""},
		{filepath.Join(d, "ws", "in-workspace"), ""},
		{filepath.Join(d, "link", "claude-2-cwd"), "symlink"},
		{filepath.Join(d, "host", "sym-cwd"), "symbolic links"},
		{filepath.Join(d, "host", "hard-cwd"), "one name"},
		{filepath.Join(d, "mask", "claude-3-cwd"), "hides"},
		{d + "/host/../host/x", "clean"},
	} {
		b := &Boundary{
			Masks: []string{filepath.Join(d, "mask")}, Writable: []string{filepath.Join(d, "ws")},
			Tmp: filepath.Join(d, "tmp"), StubDir: filepath.Join(d, "state", "bin"),
		}
		_, err := b.BindFiles([]string{tc.path})
		switch {
		case tc.why == "" && err != nil:
			t.Errorf("%s: %v", tc.path, err)
		case tc.why != "" && (err == nil || !strings.Contains(err.Error(), tc.why)):
			t.Errorf("%s: got %v, want an error with %q", tc.path, err, tc.why)
		case tc.why != "" && len(b.Files) > 0:
			t.Errorf("%s: bound although refused", tc.path)
		}
	}
	if fi, err := os.Stat(good); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: %v %v, want a 0600 file", good, fi, err)
	}
	if _, err := os.Stat(filepath.Join(d, "ws", "in-workspace")); err == nil {
		t.Errorf("a file inside a writable root was made")
	}

	b := &Boundary{Bwrap: "/bwrap", Tmp: "/t", Files: []string{good}}
	a := b.Options()
	i, j := slices.Index(a, "/t"), slices.Index(a, good)
	if i < 0 || j < i || a[j-1] != "--bind" || a[j+1] != good {
		t.Errorf("options %q: want --bind %s %s after the turn's /tmp", a, good, good)
	}
}
