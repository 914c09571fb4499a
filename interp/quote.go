package interp

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// RemoveQuotes performs bash quote removal on a word without expanding anything.
// dynamic reports parts whose value is only known at run time ($x, $(..), `..`,
// $((..)), <(..)); the text of those parts is kept as written (printed by
// syntax.Printer, as the word alone carries no source; Analyze copies the
// source bytes). Globs, brace patterns and ~ are not dynamic for this purpose:
// they stay as text.
//
// $'...' is decoded as bash decodes it and $"..." is read as "..." (no catalog is
// consulted); Analyze treats both as malformed in an invocation, but they still
// spell the name.
func RemoveQuotes(w *syntax.Word) (text string, dynamic bool) {
	u := unquote(w, "")
	return u.text, u.dynamic
}

// RemoveQuotesIn is RemoveQuotes's text of w with its dynamic parts copied byte for byte from
// src, the text w was parsed from.
func RemoveQuotesIn(w *syntax.Word, src string) string {
	return unquote(w, src).text
}

// unquoted is the result of quote removal on one word.
type unquoted struct {
	text    string
	dynamic bool // a part is only known at run time
	dollarQ bool // $'...' or $"..." was used
}

// unquote removes quotes from w. src, when not empty, is the text w was parsed
// from; dynamic parts are then copied from it byte for byte instead of printed.
func unquote(w *syntax.Word, src string) unquoted {
	var u unquoted
	if w == nil {
		return u
	}
	// The common case, one plain literal without escapes, needs no builder.
	if len(w.Parts) == 1 {
		if l, ok := w.Parts[0].(*syntax.Lit); ok && strings.IndexByte(l.Value, '\\') < 0 {
			u.text = l.Value
			return u
		}
	}
	var b strings.Builder
	for _, p := range w.Parts {
		u.part(&b, p, src)
	}
	u.text = b.String()
	return u
}

func (u *unquoted) part(b *strings.Builder, p syntax.WordPart, src string) {
	switch p := p.(type) {
	case *syntax.Lit:
		unescapeBare(b, p.Value)
	case *syntax.SglQuoted:
		if p.Dollar {
			u.dollarQ = true
			decodeANSIC(b, p.Value)
		} else {
			b.WriteString(p.Value)
		}
	case *syntax.DblQuoted:
		if p.Dollar {
			u.dollarQ = true
		}
		for _, q := range p.Parts {
			if l, ok := q.(*syntax.Lit); ok {
				unescapeDouble(b, l.Value)
				continue
			}
			u.part(b, q, src)
		}
	case *syntax.ExtGlob:
		// A pattern, not a run-time value: kept as text.
		b.WriteString(nodeText(p, src))
	default:
		// ParamExp, CmdSubst, ArithmExp, ProcSubst, BraceExp: known only when run.
		u.dynamic = true
		b.WriteString(nodeText(p, src))
	}
}

// nodeText returns the source text of a word part, or its printed form when the
// source is not available.
func nodeText(p syntax.WordPart, src string) string {
	start, end := p.Pos(), p.End()
	if src != "" && start.IsValid() && end.IsValid() {
		s, e := int(start.Offset()), int(end.Offset())
		if s <= e && e <= len(src) {
			return src[s:e]
		}
	}
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, &syntax.Word{Parts: []syntax.WordPart{p}}); err != nil {
		// Printing a node the parser produced does not fail; keep what we have.
		return b.String()
	}
	return b.String()
}

// unescapeBare applies unquoted backslash rules: \c is c, and a backslash-newline
// is removed. A lone trailing backslash stays, as in bash.
func unescapeBare(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(c)
	}
}

// unescapeDouble applies the backslash rules inside double quotes: only $ ` " \
// and newline are escapable; any other backslash is kept.
func unescapeDouble(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			switch n := s[i+1]; n {
			case '$', '`', '"', '\\':
				b.WriteByte(n)
				i++
				continue
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(c)
	}
}

// decodeANSIC decodes the body of $'...' the way bash does.
func decodeANSIC(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v, n := digits(s[i:], 8, 3)
			b.WriteByte(byte(v))
			i += n - 1
		case 'x':
			v, n := digits(s[i+1:], 16, 2)
			if n == 0 {
				b.WriteString(`\x`)
				continue
			}
			b.WriteByte(byte(v))
			i += n
		case 'u', 'U':
			width := 4
			if e == 'U' {
				width = 8
			}
			v, n := digits(s[i+1:], 16, width)
			if n == 0 {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			if v > utf8.MaxRune {
				v = utf8.RuneError
			}
			b.WriteRune(rune(v))
			i += n
		case 'c':
			if i+1 == len(s) {
				b.WriteString(`\c`)
				continue
			}
			i++
			b.WriteByte(s[i] & 0x1f)
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
}

// digits reads up to max digits of the given base from the start of s.
func digits(s string, base, max int) (value, n int) {
	for n < max && n < len(s) {
		d, err := strconv.ParseUint(s[n:n+1], base, 8)
		if err != nil {
			break
		}
		value = value*base + int(d)
		n++
	}
	return value, n
}
