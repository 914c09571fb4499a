package providers

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStateMap: a mapped fact is what Read gives, and Map refuses what Read refuses (a
// symlink, a directory); an absent fact is not ok; an empty one is read, not mapped.
func TestStateMap(t *testing.T) {
	t.Parallel()
	fresh := func() *State {
		s, err := openState(filepath.Join(t.TempDir(), "state"), "")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	big := []byte(strings.Repeat("0123456789abcdef", 1<<14)) // 256 KiB: more than a page
	s := fresh()
	for name, content := range map[string][]byte{"big": big, "small": []byte("x"), "empty": nil} {
		if _, err := s.Create(name, content); err != nil {
			t.Fatal(err)
		}
	}
	other := fresh() // another process: nothing known yet
	other.dir = s.dir
	for _, name := range []string{"big", "small", "empty"} {
		mapped, ok, err := other.Map(name)
		read, _, _ := s.Read(name)
		if err != nil || !ok || !bytes.Equal(mapped, read) {
			t.Errorf("Map(%s) = %d bytes, %v, %v; want Read's %d bytes", name, len(mapped), ok, err, len(read))
		}
	}
	if b, ok, err := other.Map("absent"); ok || err != nil || b != nil {
		t.Errorf("Map(absent) = %q, %v, %v", b, ok, err)
	}
	if err := os.Symlink(filepath.Join(s.dir, "big"), filepath.Join(s.dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(s.dir, "dir"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"link", "dir"} {
		if b, ok, err := other.Map(name); err == nil || ok || b != nil {
			t.Errorf("Map(%s) = %d bytes, %v, %v; want an error", name, len(b), ok, err)
		}
	}
}
