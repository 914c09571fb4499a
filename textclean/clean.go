// Package textclean makes a string that a provider or an agent wrote safe to show on a terminal
// or in a page (SPEC 5): escape sequences, controls and bidi controls removed, invalid UTF-8
// replaced. It is a leaf: it imports nothing of ours.
package textclean

import (
	"strings"
	"unicode/utf8"
)

// Clean makes a provider-supplied string safe to print to a terminal and to a model
// (SPEC 5): invalid UTF-8 becomes U+FFFD; whole escape sequences (CSI, OSC, DCS, APC, and
// SOS/PM, in their 7-bit and C1 forms) are removed; then every other C0/C1 control except
// newline and tab, DEL, and the bidi controls. An unterminated string sequence is removed to
// the end, since what follows it would otherwise be swallowed by a terminal.
func Clean(s string) string {
	if isClean(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x1b && i+1 < len(s):
			i = skipEscape(s, i+1)
			continue
		case r == 0x9b: // C1 CSI
			i = skipCSI(s, i+size)
			continue
		case r == 0x90 || r == 0x9d || r == 0x9f || r == 0x98 || r == 0x9e: // C1 DCS, OSC, APC, SOS, PM
			i = skipString(s, i+size)
			continue
		case dropped(r):
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// isClean is the fast path: nothing to remove or replace. Plain ASCII is judged eight bytes
// at a time (no byte with the high bit set, below 0x20 or DEL), the rest a byte or a rune at a
// time: the controls except newline and tab, and DEL, are dropped (ESC is a control).
func isClean(s string) bool {
	const (
		high = 0x8080808080808080
		lt20 = 0x6060606060606060 // + b has the high bit set iff b >= 0x20, for b < 0x80
		del  = 0x0101010101010101 // + b has the high bit set iff b == 0x7f, for b < 0x80
	)
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
				uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
			if x&high == 0 && ^(x+lt20)&high == 0 && (x+del)&high == 0 {
				i += 8
				continue
			}
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || dropped(r) {
			return false
		}
		i += size
	}
	return true
}

func dropped(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return false
}

// skipEscape returns the index after the escape sequence whose ESC preceded i.
func skipEscape(s string, i int) int {
	switch s[i] {
	case '[':
		return skipCSI(s, i+1)
	case ']', 'P', '_', 'X', '^':
		return skipString(s, i+1)
	}
	if s[i] >= 0x20 && s[i] <= 0x2f { // intermediates, then one final byte (nF sequences)
		for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
			i++
		}
		if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
			i++
		}
		return i
	}
	if s[i] >= 0x30 && s[i] <= 0x7e { // a two-byte sequence (ESC c, ESC 7, ESC M, ...)
		return i + 1
	}
	return i // a lone ESC: drop it, keep what follows
}

// skipCSI skips parameter and intermediate bytes and the final byte.
func skipCSI(s string, i int) int {
	for i < len(s) {
		switch c := s[i]; {
		case c >= 0x20 && c <= 0x3f:
			i++
		case c >= 0x40 && c <= 0x7e:
			return i + 1
		default:
			return i // not part of a CSI: stop before it
		}
	}
	return i
}

// skipString skips a control string up to BEL, ESC \ or C1 ST, or to the end.
func skipString(s string, i int) int {
	for i < len(s) {
		if s[i] == 0x07 {
			return i + 1
		}
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\' {
			return i + 2
		}
		if r, size := utf8.DecodeRuneInString(s[i:]); r == 0x9c {
			return i + size
		}
		i++
	}
	return i
}

// Shown cleans s and bounds it to about n bytes, marking a cut with "…".
func Shown(s string, n int) string {
	s, cut := Truncate(s, n+n/2) // cleaning only shortens: no need to clean what is cut anyway
	s = Clean(s)
	if c, more := Truncate(s, n); more || cut {
		return c + "…"
	}
	return s
}

// Truncate bounds s to at most n bytes without splitting a UTF-8 sequence.
func Truncate(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}
