package capability

import (
	"testing"
	"unicode/utf8"
)

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
