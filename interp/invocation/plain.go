package invocation

import (
	"strings"
	"unicode/utf8"
)

// PlainWords recognises, without a parser, the form an agent types almost always: one line
// `spear-capability WORD...` whose words are plain bytes or single-quoted strings closed on the
// line, with nothing else (no other command, operator, redirection, expansion or comment).
// For such a line the parse finds exactly one top-level simple command whose first word is the
// name; interp.FuzzPlainInvocation holds the two readings equal. It returns the words after the name,
// after quote removal, and the invocation's source text.
func PlainWords(src string) (words []string, source string, ok bool) {
	line, _ := strings.CutSuffix(src, "\n")
	// Newlines, carriage returns, NUL bytes and invalid UTF-8 are for the parser to judge.
	if strings.ContainsAny(line, "\n\r\x00") || !utf8.ValidString(line) {
		return nil, "", false
	}
	source = strings.Trim(line, " \t")
	rest, found := strings.CutPrefix(source, Name)
	if !found || rest == "" || (rest[0] != ' ' && rest[0] != '\t') {
		return nil, "", false
	}
	for i := 0; i < len(rest); {
		c := rest[i]
		if c == ' ' || c == '\t' {
			i++
			continue
		}
		var w strings.Builder
		for i < len(rest) && rest[i] != ' ' && rest[i] != '\t' {
			c := rest[i]
			switch {
			case c == '\'':
				j := strings.IndexByte(rest[i+1:], '\'')
				if j < 0 {
					return nil, "", false
				}
				w.WriteString(rest[i+1 : i+1+j])
				i += j + 2
			case plainByte(c):
				w.WriteByte(c)
				i++
			default:
				return nil, "", false
			}
		}
		words = append(words, w.String())
	}
	return words, source, true
}

// plainByte is a byte that means itself anywhere in a bash word (no quoting, expansion,
// globbing, brace, tilde, comment or operator meaning).
func plainByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		strings.IndexByte("_-./:,+%@", c) >= 0
}

// Plain recognises a plain line (see PlainWords) and checks it against the three forms: ok is
// false when src is not plain (a parser must decide); otherwise inv is the invocation, or nil
// with the reason it is malformed.
func Plain(src string) (inv *Invocation, malformed string, ok bool) {
	words, source, ok := PlainWords(src)
	if !ok {
		return nil, "", false
	}
	inv, malformed = Of(words, source)
	return inv, malformed, true
}
