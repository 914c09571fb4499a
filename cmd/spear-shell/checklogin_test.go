package main

import (
	"os"
	"path/filepath"
	"testing"
)

// What --check reports of a login shell's output inside the boundary: the lines about files it
// could not write, each with the writable root that would let it (the directory itself, or the
// nearest one above a file that does not exist yet).
func TestLoginWrites(t *testing.T) {
	home := t.TempDir()
	shims := filepath.Join(home, ".pyenv", "shims")
	if err := os.MkdirAll(shims, 0o755); err != nil {
		t.Fatal(err)
	}
	out := "welcome\n" +
		"pyenv: cannot rehash: " + shims + " isn't writable\n" +
		"touch: cannot touch '" + filepath.Join(home, ".pyenv", "new", "x") + "': Read-only file system\n" +
		"bash: line 3: cannot create: Read-only file system\n"
	got := loginWrites(out)
	want := []loginNote{
		{line: "pyenv: cannot rehash: " + shims + " isn't writable", writable: shims},
		{line: "touch: cannot touch '" + filepath.Join(home, ".pyenv", "new", "x") + "': Read-only file system", writable: filepath.Join(home, ".pyenv")},
		{line: "bash: line 3: cannot create: Read-only file system"},
	}
	if len(got) != len(want) {
		t.Fatalf("loginWrites = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("note %d = %q, want %q", i, got[i], want[i])
		}
	}
}
