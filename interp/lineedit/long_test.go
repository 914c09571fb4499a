package lineedit

import (
	"strings"
	"testing"
)

// TestPastLimit: the key goes where it was typed, and only a key at the end is drawn alone
// in place of the whole line the editor draws again.
func TestPastLimit(t *testing.T) {
	full := strings.Repeat("x", editorLimit-1) + "é"
	redraw := "\x1b[51A\x1b[5D" + strings.Repeat("x", 80) + "\r\n" + full[80:]
	for _, tc := range []struct {
		name         string
		pos          int
		key          rune
		writes, want []string
		line         string
		newPos       int
	}{
		{name: "end", pos: len(full), key: 'y', line: full + "y", newPos: len(full) + 1,
			writes: []string{redraw + "y"}, want: []string{"y"}},
		{name: "end at the window's edge", pos: len(full), key: '日', line: full + "日", newPos: len(full) + 3,
			writes: []string{redraw + "日\r\n", "z"}, want: []string{"日", "z"}},
		{name: "an empty write first", pos: len(full), key: 'y', line: full + "y", newPos: len(full) + 1,
			writes: []string{"", redraw + "y", "z"}, want: []string{"", "y", "z"}},
		{name: "a write of something else (a resize)", pos: len(full), key: 'y', line: full + "y", newPos: len(full) + 1,
			writes: []string{"\x1b[2A" + full, "y"}, want: []string{"\x1b[2A" + full, "y"}},
		{name: "a resize's drawing first, with the prompt", pos: len(full), key: 'x', line: full + "x", newPos: len(full) + 1,
			writes: []string{"\x1b[2A" + standIn + full[:len(full)-2] + "x", redraw + "x"}, want: []string{"\x1b[2A" + full[:len(full)-2] + "x", "x"}},
		{name: "middle", pos: 4, key: 'y', line: "xxxxy" + full[4:], newPos: 5,
			writes: []string{redraw + "y"}, want: []string{strings.Replace(redraw, "\r\n", "", 1) + "y"}},
	} {
		var out strings.Builder
		s := &editorScreen{w: &out}
		line, pos, ok := s.pastLimit(full, tc.pos, tc.key)
		if line != tc.line || pos != tc.newPos || !ok {
			t.Errorf("%s: pastLimit = %d chars, %d, %v; want %d chars, %d, true", tc.name, len(line), pos, ok, len(tc.line), tc.newPos)
		}
		for i, w := range tc.writes {
			out.Reset()
			s.Write([]byte(w))
			if want := strings.ReplaceAll(tc.want[i], "\r\n", "\n"); out.String() != want {
				t.Errorf("%s: write %d shows %.40q, want %.40q", tc.name, i, out.String(), want)
			}
		}
	}
}

// TestLineLength: the hook is off only for text typed onto a line known to be past the limit,
// and the length follows it, a character of several bytes counted once.
func TestLineLength(t *testing.T) {
	for _, tc := range []struct {
		name  string
		from  lineLength
		bytes string
		plain string // one letter a byte: y for hook off, n for on
		n     int    // the length after, when known
	}{
		{"text", lineLength{n: editorLimit + 1, known: true}, "ab c", "yyyy", editorLimit + 5},
		{"UTF-8", lineLength{n: editorLimit + 1, known: true}, "é日😀", "yyyyyyyyy", editorLimit + 4},
		{"unknown", lineLength{}, "abc", "nnn", 0},
		{"at the limit", lineLength{n: editorLimit, known: true}, "a", "n", 0},
		{"Backspace", lineLength{n: editorLimit + 9, known: true}, "a\x7fb", "ynn", 0},
		{"an escape sequence", lineLength{n: editorLimit + 9, known: true}, "\x1b[Da", "nnnn", 0},
		{"Tab", lineLength{n: editorLimit + 9, known: true}, "\t", "n", 0},
		{"a broken character", lineLength{n: editorLimit + 9, known: true}, "\xc3a", "yn", 0},
		{"a byte that starts none", lineLength{n: editorLimit + 9, known: true}, "\xc0", "n", 0},
	} {
		l := tc.from
		got := ""
		for i := 0; i < len(tc.bytes); i++ {
			got += map[bool]string{true: "y", false: "n"}[l.plain(tc.bytes[i])]
		}
		if got != tc.plain || (l.known && l.n != tc.n) {
			t.Errorf("%s: plain %s, length %d (known %v); want %s, %d", tc.name, got, l.n, l.known, tc.plain, tc.n)
		}
	}
}
