package paths

import (
	"os"
	"path/filepath"
	"testing"
)

// Resolve answers as filepath.EvalSymlinks does, result and error, over paths with and without
// symlinks, `..`, missing parts, files and trailing slashes.
func TestResolveIsEvalSymlinks(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	mk := func(p string) {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mk("a/b/c")
	mk("x/y")
	if err := os.WriteFile(filepath.Join(root, "a/file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for link, to := range map[string]string{"a/lb": "b", "a/abs": filepath.Join(root, "x"), "x/up": "..", "loop": "loop", "dangling": "nowhere", "a/b/tofile": "../file"} {
		if err := os.Symlink(to, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	paths := []string{
		"a", "a/b/c", "a/b/c/", "a/./b//c", "a/b/../b/c", "a/b/c/../../..", "a/lb", "a/lb/c", "a/lb/../file",
		"a/abs/y", "a/abs/..", "x/up/a/b", "loop", "dangling", "missing", "a/b/missing/..", "a/file", "a/file/",
		"a/b/tofile", "a/b/tofile/", "a/lb/c/..",
	}
	for _, p := range paths {
		full := filepath.Join(root, p)
		if len(p) > 0 && p[len(p)-1] == '/' {
			full += "/"
		}
		want, werr := filepath.EvalSymlinks(full)
		got, gerr := Resolve(full)
		if got != want || (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
			t.Errorf("Resolve(%q) = %q, %v; EvalSymlinks = %q, %v", full, got, gerr, want, werr)
		}
	}
	for _, rel := range []string{".", "policy", ""} {
		want, werr := filepath.EvalSymlinks(rel)
		got, gerr := Resolve(rel)
		if got != want || (werr == nil) != (gerr == nil) {
			t.Errorf("Resolve(%q) = %q, %v; EvalSymlinks = %q, %v", rel, got, gerr, want, werr)
		}
	}
}
