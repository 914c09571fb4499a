package textclean

import (
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
		if got := Clean(c.in); got != c.want {
			t.Errorf("Clean(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func FuzzClean(f *testing.F) {
	for _, c := range cleanCases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Clean(s)
		if !utf8.ValidString(got) {
			t.Fatalf("Clean(%q) = %q: invalid UTF-8", s, got)
		}
		for _, r := range got {
			if r == 0x1b || dropped(r) {
				t.Fatalf("Clean(%q) = %q: keeps %U", s, got, r)
			}
		}
		if Clean(got) != got {
			t.Fatalf("clean is not idempotent on %q", s)
		}
	})
}

// FuzzIsClean holds the eight-bytes-at-a-time isClean to the plain reading: a rune at a time,
// nothing dropped, no ESC, no invalid UTF-8 (nor U+FFFD).
func FuzzIsClean(f *testing.F) {
	for _, c := range cleanCases {
		f.Add(c.in)
	}
	for _, s := range []string{"", "12345678", "1234567\x7f", "1234567\n", "\t2345678abc", "abcdefgh\x1f",
		"abcdefg\u00e9", "abcdefgh\u0085", "abcdefgh\u202e", "\xff2345678", "abcdefg\uFFFD"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := true
		for _, r := range s {
			if r == utf8.RuneError || dropped(r) || r == 0x1b {
				want = false
				break
			}
		}
		if got := isClean(s); got != want {
			t.Fatalf("isClean(%q) = %v, want %v", s, got, want)
		}
	})
}
