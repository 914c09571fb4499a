package interp

import "strings"

// simpleLine reports whether line (one whole line, with its newline) is a complete command
// that needs no parse to know it: plain words of safe bytes, quoted strings closed on the line
// ('...' and "..." without $, ` or \), `$NAME`, `${NAME}` and `$((...))` arithmetic, and a
// first word that is no reserved word. Anything else, including every quote,
// backslash, operator and bracket outside arithmetic, is left to the parser. A session spends
// most of its lines here, so this keeps a parse per line off the common path.
func simpleLine(line string) bool {
	body, ok := strings.CutSuffix(line, "\n")
	if !ok || strings.IndexByte(body, '\n') >= 0 {
		return false
	}
	first := true
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == ' ' || c == '\t':
			i++
			continue
		case c == '#' && (i == 0 || body[i-1] == ' ' || body[i-1] == '\t'):
			return true // a comment runs to the end of the line
		}
		// one word
		start := i
		for i < len(body) && body[i] != ' ' && body[i] != '\t' {
			n := wordByte(body, i)
			if n == 0 {
				return false
			}
			i += n
		}
		if first {
			if reservedWords[body[start:i]] {
				return false
			}
			first = false
		}
	}
	return true
}

// wordByte returns how many bytes of a word at body[i] are safe, 0 if body[i] is not.
func wordByte(body string, i int) int {
	c := body[i]
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return 1
	case strings.IndexByte("_-./=:,+%@^", c) >= 0:
		return 1
	case c == '$':
		return dollar(body[i:])
	case c == '\'':
		// Single quotes hold anything but a single quote: closed on this line, the word is whole.
		if j := strings.IndexByte(body[i+1:], '\''); j >= 0 {
			return j + 2
		}
	case c == '"':
		// Double quotes without $, ` or \ inside hold plain text.
		if j := strings.IndexAny(body[i+1:], "\"$`\\"); j >= 0 && body[i+1+j] == '"' {
			return j + 2
		}
	}
	return 0
}

// dollar measures `$NAME`, `${NAME}` or `$((arithmetic))` at the start of s, 0 for anything else.
func dollar(s string) int {
	switch {
	case len(s) > 1 && isNameByte(s[1]):
		n := 1
		for n < len(s) && isNameByte(s[n]) {
			n++
		}
		return n
	case strings.HasPrefix(s, "${"):
		n := 2
		for n < len(s) && isNameByte(s[n]) {
			n++
		}
		if n > 2 && n < len(s) && s[n] == '}' {
			return n + 1
		}
	case strings.HasPrefix(s, "$(("):
		depth := 0
		for n := 3; n < len(s); n++ {
			switch c := s[n]; {
			case c == '(':
				depth++
			case c == ')' && depth > 0:
				depth--
			case c == ')':
				if n+1 < len(s) && s[n+1] == ')' {
					return n + 2
				}
				return 0
			case isNameByte(c) || strings.IndexByte(" +-*/%<>=!&|^~?:,", c) >= 0:
			default:
				return 0
			}
		}
	}
	return 0
}

func isNameByte(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// reservedWords open or close compound commands, or change what follows, when they come first.
var reservedWords = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "fi": true, "case": true, "esac": true,
	"for": true, "select": true, "while": true, "until": true, "do": true, "done": true,
	"function": true, "time": true, "coproc": true, "!": true, "{": true, "}": true, "[[": true, "]]": true, "in": true,
}
