package capability

import (
	"strings"
	"testing"
	"unicode/utf8"
)

var cleanCases = []struct{ in, want string }{
	{"plain text", "plain text"},
	{"keep\ttab\nand newline", "keep\ttab\nand newline"},
	{"\x1b[31mred\x1b[0m", "red"},
	{"a\x1b[1;2;3Hb", "ab"},
	{"\x1b]0;title\x07after", "after"},
	{"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"},
	{"\x1bP1;2qdata\x1b\\x", "x"},
	{"\x1b_apc payload\x1b\\y", "y"},
	{"\x1b]unterminated osc swallows the rest", ""},
	{"\x1bcreset", "reset"},
	{"lone\x1b", "lone"},
	{"cr\rback\bspace\x00nul\x7fdel", "crbackspacenuldel"},
	{"c1\u0085next\u009b31mcsi", "c1nextcsi"},
	{"\u009d0;title\u009cok", "ok"},
	{"bidi\u202eevil\u202c", "bidievil"},
	{"\u2066iso\u2069 \u200emark\u200f \u061carabic", "iso mark arabic"},
	{"é漢字🙂", "é漢字🙂"},
	{"bad\xffutf8\xc3", "bad\uFFFDutf8\uFFFD"},
	{"\x1b[\xff", "\uFFFD"},
}

func TestClean(t *testing.T) {
	t.Parallel()
	for _, c := range cleanCases {
		if got := clean(c.in); got != c.want {
			t.Errorf("clean(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func FuzzClean(f *testing.F) {
	for _, c := range cleanCases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := clean(s)
		if !utf8.ValidString(got) {
			t.Fatalf("clean(%q) = %q: invalid UTF-8", s, got)
		}
		for _, r := range got {
			if r == 0x1b || dropped(r) {
				t.Fatalf("clean(%q) = %q: keeps %U", s, got, r)
			}
		}
		if clean(got) != got {
			t.Fatalf("clean is not idempotent on %q", s)
		}
	})
}

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
