package invocation

import "strings"

// Name is the command spear-shell answers.
const Name = "spear-capability"

// MayInvoke reports whether src could hold the name in any spelling a shell would run: the
// name after deleting quotes, backslashes, backslash-newlines (all quote removal can delete) and
// NUL bytes (which bash drops),
// or a $'...' / $"..." that could spell it with escapes. Input for which it is false is
// forwarded without a parse; the rest goes to the recognizer.
func MayInvoke(src string) bool {
	return NameInText(src) || strings.Contains(src, "$'") || strings.Contains(src, `$"`)
}

// NameInText reports whether the name occurs in src once quotes, backslashes,
// backslash-newlines and NUL bytes are deleted.
func NameInText(src string) bool {
	// The name's first byte occurs in it only once, so a mismatch can restart at
	// the current byte without backtracking.
	m := 0
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case '\\':
			if i+1 < len(src) && src[i+1] == '\n' {
				i++
			}
			continue
		case '\'', '"', 0:
			// bash drops NUL bytes from what it reads (and so does the parser): they cannot
			// keep the name from being spelt.
			continue
		}
		if c == Name[m] {
			m++
			if m == len(Name) {
				return true
			}
			continue
		}
		m = 0
		if c == Name[0] {
			m = 1
		}
	}
	return false
}
