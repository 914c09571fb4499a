package capability

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncateAndFirstLine(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		n    int
		want string
		cut  bool
	}{
		{"hello", 10, "hello", false},
		{"hello", 3, "hel", true},
		{"漢字", 4, "漢", true},
		{"漢字", 2, "", true},
	}
	for _, c := range cases {
		got, cut := truncate(c.in, c.n)
		if got != c.want || cut != c.cut {
			t.Errorf("truncate(%q, %d) = %q, %v; want %q, %v", c.in, c.n, got, cut, c.want, c.cut)
		}
	}
	lines := []struct{ in, want string }{
		{"\n\n  First line.\nsecond", "First line."},
		{strings.Repeat("x", 200), strings.Repeat("x", 117) + "…"},
		{"", ""},
	}
	for _, c := range lines {
		if got := firstLine(c.in, 120); got != c.want {
			t.Errorf("firstLine(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestExitCode(t *testing.T) {
	t.Parallel()
	want := map[string]int{"": 0, "tool-error": 1, "invalid-output": 1, "not-alone": 2, "malformed": 2,
		"no-capabilities": 3, "audit-unavailable": 3, "unknown-capability": 3, "not-described": 3,
		"invalid-arguments": 3, "write-refused": 3, "definition-changed": 3, "not-confirmed": 3,
		"unavailable": 4, "timeout": 4, "not-recognised": 126, "interrupted": 130, "something-else": 3}
	for code, exit := range want {
		if got := ExitCode(code); got != exit {
			t.Errorf("ExitCode(%q) = %d, want %d", code, got, exit)
		}
	}
}

// shown cleans and bounds, marking a cut; the bound holds whatever the input.
func TestShown(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"\x1b[31mred\x1b[0m", 10, "red"},
		{"2025-06-18\x1b[31m" + strings.Repeat("v", 3000), 20, "2025-06-18vvvvvvvvvv…"},
		{strings.Repeat("é", 10), 5, "éé…"},
		{strings.Repeat("\x1b[0m", 1000) + "tail", 10, "…"},
		{"exactly ten", 11, "exactly ten"},
	}
	for _, c := range cases {
		got := shown(c.in, c.n)
		if got != c.want {
			t.Errorf("shown(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
		if len(strings.TrimSuffix(got, "…")) > c.n || !utf8.ValidString(got) {
			t.Errorf("shown(%q, %d) = %q: not bounded or not UTF-8", c.in, c.n, got)
		}
	}
}
