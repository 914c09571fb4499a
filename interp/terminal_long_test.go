package interp

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
			writes: []string{redraw + "日\r\n"}, want: []string{"日\n"}},
		{name: "an empty write first", pos: len(full), key: 'y', line: full + "y", newPos: len(full) + 1,
			writes: []string{"", redraw + "y", "z"}, want: []string{"", "y", "z"}},
		{name: "a write of something else (a resize)", pos: len(full), key: 'y', line: full + "y", newPos: len(full) + 1,
			writes: []string{"\x1b[2A" + full, "y"}, want: []string{"\x1b[2A" + full, "y"}},
		{name: "middle", pos: 4, key: 'y', line: "xxxxy" + full[4:], newPos: 5,
			writes: []string{redraw + "y"}, want: []string{redraw + "y"}},
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
