package audit

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzAppendStrings holds the direct writing of a list of strings to the general path it
// stands in for: redactValue, then marshal (encoding/json without HTML escapes).
func FuzzAppendStrings(f *testing.F) {
	for _, s := range []string{
		"p01/echo READ", "a\x00b\x1f\"\\/<>&\u2028\u2029\x7f", "bad\xffutf8\xc3", "é漢字🙂 \t\n\r\b\f",
		"12345678\"2345678\\", "hunter2secret inside", "\xed\xa0\x80", strings.Repeat("x", MaxValueBytes+3),
		strings.Repeat("é", MaxValueBytes/2+1),
	} {
		f.Add(s, 3)
	}
	f.Add("", 0) // nil: [] as redactValue makes it
	red := NewRedactor([]string{"hunter2secret", "a\"quoted\"secret"})
	f.Fuzz(func(t *testing.T, s string, n int) {
		var ss []string
		if n > 0 {
			ss = strings.SplitN(s, "|", n%16+1)
		}
		for _, r := range []*Redactor{nil, red} {
			v, err := redactValue(r, ss, true)
			if err != nil {
				t.Fatal(err)
			}
			want, err := marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if got := appendStrings(r, ss); !bytes.Equal(got, want) {
				t.Fatalf("appendStrings(%q) = %s, want %s", ss, got, want)
			}
		}
	})
}
