package lineedit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHistoryKeepsAndBounds(t *testing.T) {
	h := NewHistory(3, "")
	for _, line := range []string{"a", "", "  ", "b", "c", "d"} {
		enter(h, line)
	}
	var got []string
	for i := range h.Len() {
		got = append(got, h.At(i))
	}
	if strings.Join(got, ",") != "d,c,b" {
		t.Errorf("history newest first = %q, want d,c,b (blank lines left out, 3 kept)", got)
	}
	none := NewHistory(0, "")
	enter(none, "x")
	if none.Len() != 0 {
		t.Errorf("HISTSIZE=0 kept %d lines", none.Len())
	}
}

// enter adds a command's lines as the editor adds them, and ends the command.
func enter(h *History, lines ...string) {
	for _, line := range lines {
		h.Add(line)
	}
	h.Entered()
}

func TestHistoryCommandOnOneLine(t *testing.T) {
	for _, tc := range []struct {
		lines []string
		want  []string // newest last
	}{
		{[]string{"if true", "then echo x", "fi"}, []string{"if true; then echo x; fi"}},
		{[]string{"for i in 1 2; do", "  echo $i", "done"}, []string{"for i in 1 2; do echo $i; done"}},
		{[]string{"f() {", "echo 'a  b' \\", "  c", "}"}, []string{"f() { echo 'a  b' c; }"}},
		// what cannot be on one line stays a line an entry
		{[]string{"cat <<EOF", "body", "EOF"}, []string{"cat <<EOF", "body", "EOF"}},
		{[]string{"echo 'a", "b'"}, []string{"echo 'a", "b'"}},
		// a command cut short (Ctrl-C on its second line)
		{[]string{"if true"}, []string{"if true"}},
	} {
		h := NewHistory(-1, "")
		enter(h, tc.lines...)
		var got []string
		for i := h.Len() - 1; i >= 0; i-- {
			got = append(got, h.At(i))
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%q entered: history %q, want %q", tc.lines, got, tc.want)
		}
	}
}

func TestHistorySearch(t *testing.T) {
	h := NewHistory(-1, "")
	for _, line := range []string{"echo needle-1", "echo other", "echo needle-2", "echo needle-2"} {
		enter(h, line)
	}
	const ctrlR = 'R' - '@'
	line, pos, ok := h.search("needle", 6, ctrlR)
	if !ok || line != "echo needle-2" || pos != len(line) {
		t.Fatalf("first Ctrl-R = %q %d %v, want the newest match", line, pos, ok)
	}
	// again: the next older line that differs
	if line, _, _ = h.search(line, len(line), ctrlR); line != "echo needle-1" {
		t.Fatalf("second Ctrl-R = %q, want echo needle-1", line)
	}
	// no older match: the line stays
	if line, _, _ = h.search(line, len(line), ctrlR); line != "echo needle-1" {
		t.Fatalf("third Ctrl-R = %q, want echo needle-1 kept", line)
	}
	// another key ends the search
	if _, _, ok := h.search("x", 1, 'y'); ok {
		t.Fatalf("a printable key was taken")
	}
}

func TestHistoryFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hist")
	// timestamps (HISTTIMEFORMAT) are not lines
	if err := os.WriteFile(path, []byte("one\n#1700000000\ntwo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := NewHistory(-1, path)
	if h.Len() != 2 || h.At(0) != "two" || h.At(1) != "one" {
		t.Fatalf("loaded %d lines", h.Len())
	}
	enter(h, "three")
	if b, _ := os.ReadFile(path); string(b) != "one\n#1700000000\ntwo\nthree\n" {
		t.Fatalf("file = %q", b)
	}
	// a directory of the path that is a symlink: neither read nor written
	if err := os.Symlink(dir, filepath.Join(dir, "via")); err != nil {
		t.Fatal(err)
	}
	h = NewHistory(-1, filepath.Join(dir, "via", "hist"))
	enter(h, "four")
	if b, _ := os.ReadFile(path); h.Len() != 1 || strings.Contains(string(b), "four") {
		t.Fatalf("written through a symlinked directory: %d lines, file %q", h.Len(), b)
	}
}

func TestEditorScreen(t *testing.T) {
	for _, tc := range []struct{ head, prompt, in, want string }{
		// the stand-in becomes the prompt; line ends lose the \r the terminal adds
		{"", "\x1b[1mP\x1b[0m> ", standIn + standIn + standIn + "ls\x1b[D\r\n", "\x1b[1mP\x1b[0m> ls\x1b[D\n"},
		// a prompt wider than the window comes in pieces: the line ends between them go (the
		// last, at the window's edge, is held: TestEditorScreenWraps)
		{"", "abcd", standIn + standIn + "\r\n" + standIn + standIn + "\r\nx", "abcdx"},
		{"top\n", "p", "x\x1b[D", "x\x1b[D"},
		// Ctrl-L: the prompt's first lines come back too
		{"top\n", "p", clearScreen + standIn + "x", clearScreen + "top\npx"},
	} {
		var b strings.Builder
		s := &editorScreen{w: &b, head: tc.head, prompt: tc.prompt}
		if _, err := s.Write([]byte(tc.in)); err != nil || b.String() != tc.want {
			t.Errorf("Write(%q) wrote %q, want %q", tc.in, b.String(), tc.want)
		}
	}
}

// TestEditorScreenWraps: a line end the editor puts at the window's edge is left to the
// terminal's own wrap when text follows, as readline leaves it, and written otherwise.
func TestEditorScreenWraps(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writes []string // "" calls endWrap
		want   string
	}{
		{"text on", []string{"abc\r\nde"}, "abcde"},
		{"a key at a time", []string{"c\r\n", "d", "e"}, "cde"},
		{"Enter after the edge", []string{"c\r\n", "\r\n"}, "c\n\n"},
		{"a cursor move after the edge", []string{"c\r\n", "\x1b[A\x1b[79C"}, "c\n\x1b[A\x1b[79C"},
		{"nothing typed for now", []string{"c\r\n", ""}, "c\n"},
		{"after a cursor move", []string{"\x1b[C\r\nx"}, "\x1b[C\nx"},
		{"a line's end", []string{"\r\n"}, "\n"},
	} {
		var b strings.Builder
		s := &editorScreen{w: &b}
		for _, w := range tc.writes {
			if w == "" {
				s.endWrap()
			} else {
				s.Write([]byte(w))
			}
		}
		if b.String() != tc.want {
			t.Errorf("%s: wrote %q, want %q", tc.name, b.String(), tc.want)
		}
	}
}
