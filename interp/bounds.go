package interp

// Input bounds (SPEC 9). Input that may spell the name is parsed, and the parser and the walk
// over its tree recurse once per level of nesting: 900 KB of nested `$(` took 90 s and ended
// in a Go stack overflow, with no turn_ended. Such input is refused malformed before it is
// parsed. The count is cheap and blind to quoting, so it can only overcount: a quoted `(`
// counts as an opening too. Input that cannot spell the name is never parsed for recognition,
// whatever its size, and goes to the real shell unchanged.

import (
	"fmt"
	"math/bits"
)

const (
	// MaxInputBytes bounds an input that may spell the name: well above the largest envelope
	// an agent terminal sends (Codex's, about 38 KB) and any command a model types.
	MaxInputBytes = 1 << 20
	// MaxNesting bounds how deep such an input nests (see nesting).
	MaxNesting = 256
)

// overBounds says why src is past the input bounds, or "" when it is within them.
func overBounds(src string) string {
	if len(src) > MaxInputBytes {
		return fmt.Sprintf("the input is %d bytes, more than the %d that an input naming %s may have", len(src), MaxInputBytes, Name)
	}
	if n := nesting(src); n > MaxNesting {
		return fmt.Sprintf("the input nests more than %d levels deep, more than an input naming %s may", MaxNesting, Name)
	}
	return ""
}

// nesting estimates, in one pass over the bytes, how deeply a parse of src recurses: the
// deepest point of the open groups (`(`, `{`, which `$(`, `${`, `((` and `<(` include, and the
// keywords if, while, until, for, case, select, closed by `)`, `}`, fi, done, esac) plus the
// operators chained there (`|`, `||`, `&&`, `!`, which the parser nests as it goes, until
// `;`, `&` or a newline), plus the backquote levels (a level-k backquote needs 2^(k-1)-1
// backslashes before it). It stops counting once past MaxNesting.
func nesting(src string) int {
	level, chain, most, quotes := 0, 0, 0, 0
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '(', '{':
			level++
		case ')', '}':
			level = max(level-1, 0)
		case '|', '!':
			chain++
		case '&':
			if i+1 < len(src) && src[i+1] == '&' {
				chain++
				i++
			} else {
				chain = 0
			}
		case ';', '\n':
			chain = 0
		case '`':
			k := 0
			for k < i && src[i-1-k] == '\\' {
				k++
			}
			quotes = max(quotes, bits.Len(uint(k))+1)
		default:
			if c < 'a' || c > 'z' || (i > 0 && !separator(src[i-1])) {
				continue
			}
			j := i
			for j < len(src) && src[j] >= 'a' && src[j] <= 'z' {
				j++
			}
			if j < len(src) && !separator(src[j]) {
				i = j - 1
				continue
			}
			switch src[i:j] {
			case "if", "while", "until", "for", "case", "select":
				level++
			case "fi", "done", "esac":
				level = max(level-1, 0)
			}
			i = j - 1
		}
		if most = max(most, level+chain); most+quotes > MaxNesting {
			break
		}
	}
	return most + quotes
}

// separator reports whether c ends a word for nesting's keyword test.
func separator(c byte) bool {
	switch c {
	case ' ', '\t', '\n', ';', '&', '|', '(', ')', '{', '}', '<', '>':
		return true
	}
	return false
}
