package interp

import "strings"

// Which here-document body bash reads next, and what its delimiter is.
//
// bash reads a body when it has read the command text the operator is in, at a point its
// parser reaches, not where mvdan does: at an unquoted newline it reads the bodies pending in
// the command substitution (or the top level) that newline is in, and at the `)` that closes a
// command substitution the bodies still pending in it (from the line after the one holding the
// `)`: `$(cat <<EOF)` takes its body first, before those of the operators around it). A `<<`
// inside backquotes is no operator while the command line is read: bash reads a backquoted
// command as a string, up to the next unescaped backquote. mvdan reads them in another order
// (the one nearest the end first, none before a `(` that ends a line), so the reader asks
// docScan which operator comes next.

// docOp is a here-document operator found by docScan.
type docOp struct {
	op, word, end int  // offsets of the << operator, of its word and after the word
	inSubst       bool // inside $( ): a line beginning with the delimiter and holding `)` ends the body
}

// docScan reads text as bash's reader tokenizes it, far enough to find its here-document operators.
type docScan struct {
	s        string
	gathered []docOp  // operators whose bodies bash has begun to read, in the order it reads them
	backq    [][2]int // backquoted spans: no operator inside them is one yet
}

// scanDocs scans s from the start.
func scanDocs(s string) *docScan {
	d := &docScan{s: s}
	d.list(0, false)
	return d
}

// emptyBackquotes returns the text scanned with every backquoted span emptied (“ for a closed
// one, a lone ` for one the text leaves open).
func (d *docScan) emptyBackquotes() string {
	var b strings.Builder
	at := 0
	for _, q := range d.backq {
		if q[0] < at {
			continue // inside one emptied already
		}
		b.WriteString(d.s[at:q[0]])
		at = q[1]
		if q[1] > q[0] && d.s[q[1]-1] == '`' {
			b.WriteByte('`')
		}
	}
	b.WriteString(d.s[at:])
	return b.String()
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// list scans commands from i: the top level, or the body of a command substitution (sub),
// whose closing `)` it consumes. It returns the offset it stopped at.
func (d *docScan) list(i int, sub bool) int {
	s := d.s
	var pending []docOp
	parens, cases := 0, 0
	wordStart, cmdStart := true, true
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\n':
			d.gathered = append(d.gathered, pending...)
			pending = nil
			i++
			wordStart, cmdStart = true, true
			continue
		case isBlank(c):
			i++
			wordStart = true
			continue
		case c == '#' && wordStart:
			for i < len(s) && s[i] != '\n' {
				i++
			}
			continue
		case c == ';' || c == '&' || c == '|':
			i++
			wordStart, cmdStart = true, true
			continue
		case c == '(':
			if cmdStart && strings.HasPrefix(s[i:], "((") {
				i = d.arith(i + 2)
				wordStart, cmdStart = true, false
				continue
			}
			parens++
			i++
			wordStart, cmdStart = true, true
			continue
		case c == ')':
			i++
			switch {
			case parens > 0:
				parens--
				wordStart, cmdStart = true, false
			case cases > 0: // a case pattern's end
				wordStart, cmdStart = true, true
			case sub:
				d.gathered = append(d.gathered, pending...)
				return i
			}
			continue
		case c == '<' && strings.HasPrefix(s[i:], "<<") && !strings.HasPrefix(s[i:], "<<<"):
			j := i + 2
			if j < len(s) && s[j] == '-' {
				j++
			}
			for j < len(s) && isBlank(s[j]) {
				j++
			}
			end := d.word(j)
			if end > j {
				pending = append(pending, docOp{op: i, word: j, end: end, inSubst: sub})
			}
			i = end
			wordStart, cmdStart = true, false
			continue
		case c == '<' || c == '>':
			i++
			wordStart = true
			continue
		}
		// A word.
		start := i
		i = d.word(i)
		if i == start {
			i++ // a byte no word takes
		}
		if cmdStart {
			switch s[start:i] {
			case "case":
				cases++
			case "esac":
				if cases > 0 {
					cases--
				}
			}
		}
		wordStart = true
		cmdStart = cmdStart && isKeyword(s[start:i])
	}
	return i
}

// isKeyword tells whether a word at a command's start leaves the next word at one.
func isKeyword(w string) bool {
	switch w {
	case "if", "then", "else", "elif", "do", "while", "until", "{", "!", "time", "esac":
		return true
	}
	return false
}

// word returns the offset after the shell word starting at i (i itself when none starts there).
func (d *docScan) word(i int) int {
	s := d.s
	for i < len(s) {
		switch c := s[i]; c {
		case ' ', '\t', '\n', ';', '&', '|', '(', ')', '<', '>':
			return i
		case '\\':
			i += 2
		case '\'':
			i = skipPast(s, i+1, '\'')
		case '"':
			i = d.dquote(i + 1)
		case '`':
			i = d.backquote(i + 1)
		case '$':
			i = d.dollar(i)
		default:
			i++
		}
	}
	return min(i, len(s))
}

// dollar scans the expansion at s[i] == '$' and returns the offset after it.
func (d *docScan) dollar(i int) int {
	s := d.s
	switch {
	case strings.HasPrefix(s[i:], "$(("):
		return d.arith(i + 3)
	case strings.HasPrefix(s[i:], "$("):
		return d.list(i+2, true)
	case strings.HasPrefix(s[i:], "${"):
		return d.brace(i + 2)
	case strings.HasPrefix(s[i:], "$'"):
		for i += 2; i < len(s) && s[i] != '\''; i++ {
			if s[i] == '\\' {
				i++
			}
		}
		return min(i+1, len(s))
	case strings.HasPrefix(s[i:], `$"`):
		return d.dquote(i + 2)
	}
	return i + 1
}

// dquote scans from inside a double quote and returns the offset after the closing one.
func (d *docScan) dquote(i int) int {
	s := d.s
	for i < len(s) {
		switch s[i] {
		case '"':
			return i + 1
		case '\\':
			i += 2
		case '`':
			i = d.backquote(i + 1)
		case '$':
			i = d.dollar(i)
		default:
			i++
		}
	}
	return len(s)
}

// backquote scans from inside a backquote to after the next unescaped one: bash reads the
// command as a string.
func (d *docScan) backquote(i int) int {
	start := i
	s := d.s
	for i < len(s) && s[i] != '`' {
		if s[i] == '\\' {
			i++
		}
		i++
	}
	i = min(i+1, len(s))
	d.backq = append(d.backq, [2]int{start, i})
	return i
}

// brace scans from inside ${ to after its closing brace.
func (d *docScan) brace(i int) int {
	s := d.s
	depth := 0
	for i < len(s) {
		switch s[i] {
		case '}':
			if depth == 0 {
				return i + 1
			}
			depth--
			i++
		case '{':
			depth++
			i++
		case '\\':
			i += 2
		case '\'':
			i = skipPast(s, i+1, '\'')
		case '"':
			i = d.dquote(i + 1)
		case '`':
			i = d.backquote(i + 1)
		case '$':
			i = d.dollar(i)
		default:
			i++
		}
	}
	return len(s)
}

// arith scans from inside (( or $(( to after the closing )).
func (d *docScan) arith(i int) int {
	s := d.s
	depth := 0
	for i < len(s) {
		switch s[i] {
		case '(':
			depth++
		case ')':
			if depth == 0 {
				if strings.HasPrefix(s[i:], "))") {
					return i + 2
				}
				return i + 1
			}
			depth--
		case '$':
			i = d.dollar(i)
			continue
		case '`':
			i = d.backquote(i + 1)
			continue
		}
		i++
	}
	return len(s)
}

// skipPast returns the offset after the first c at or after i (len(s) if none).
func skipPast(s string, i int, c byte) int {
	if i >= len(s) {
		return len(s)
	}
	k := strings.IndexByte(s[i:], c)
	if k < 0 {
		return len(s)
	}
	return i + k + 1
}

// docWordQuoted tells whether a here-document word is quoted for bash: a quote character (or
// $” or $"") outside the expansions in it; quotes inside $( ), ${ } or backquotes do not count.
// An unquoted body has its backslash-newlines joined and is expanded.
func docWordQuoted(w string) bool {
	d := &docScan{s: w}
	for i := 0; i < len(w); {
		switch w[i] {
		case '\\':
			if i+1 < len(w) && w[i+1] == '\n' {
				i += 2 // removed before the word is read
				continue
			}
			return true
		case '\'', '"':
			return true
		case '`':
			i = d.backquote(i + 1)
		case '$':
			if strings.HasPrefix(w[i:], "$'") || strings.HasPrefix(w[i:], `$"`) {
				return true
			}
			i = d.dollar(i)
		default:
			i++
		}
	}
	return false
}

// docWordAsks tells whether bash's delimiter for word w is not its text (after quote removal
// when quoted): bash stores a $( ) in a word as it prints the command back (`$(echo  x)` is
// `$(echo x)`), and $” and $"" as what they translate to.
func docWordAsks(w string) bool {
	if strings.Contains(w, "$'") || strings.Contains(w, `$"`) {
		return true
	}
	for k := strings.Index(w, "$("); k >= 0; k = strings.Index(w, "$(") {
		if !strings.HasPrefix(w[k:], "$((") {
			return true
		}
		w = w[k+3:]
	}
	return false
}

// docDelimiter returns the delimiter bash compares body lines with for the word w (its text as
// written): the word itself when unquoted, after quote removal (bash's string_quote_removal,
// nested expansions included) when quoted.
func docDelimiter(w string, quoted bool) string {
	w = strings.ReplaceAll(w, "\\\n", "")
	if !quoted {
		return w
	}
	var v strings.Builder
	dquote := false
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch c {
		case '\\':
			if i+1 == len(w) {
				v.WriteByte(c)
				continue
			}
			i++
			if dquote && strings.IndexByte("$`\"\\\n", w[i]) < 0 {
				v.WriteByte('\\')
			}
			v.WriteByte(w[i])
		case '\'':
			if dquote {
				v.WriteByte(c)
				continue
			}
			k := strings.IndexByte(w[i+1:], '\'')
			if k < 0 {
				v.WriteString(w[i+1:])
				i = len(w)
				continue
			}
			v.WriteString(w[i+1 : i+1+k])
			i += k + 1
		case '"':
			dquote = !dquote
		case '$':
			// $'' and $"" (what bash is not asked about: no real shell): their text, unquoted.
			if dquote || i+1 == len(w) || w[i+1] != '\'' && w[i+1] != '"' {
				v.WriteByte(c)
			}
		default:
			v.WriteByte(c)
		}
	}
	return v.String()
}
