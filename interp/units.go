package interp

import (
	"bufio"
	"errors"
	"io"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// UnitReader cuts a session's stdin into units: one line plus the continuation
// lines needed to complete a command (open quotes, here-documents, compound
// commands, a trailing backslash, |, &&), as bash reads them.
type UnitReader struct {
	r   *bufio.Reader
	err error // sticky read error, returned once the pending text is out
}

// NewUnitReader returns a UnitReader reading from r.
func NewUnitReader(r io.Reader) *UnitReader {
	return &UnitReader{r: bufio.NewReader(r)}
}

// Next returns the next unit with its newline(s), or io.EOF at the end. A last
// line without a newline is a unit of its own; so is text still incomplete at
// the end of input (bash would report it).
func (u *UnitReader) Next() (string, error) {
	if u.err != nil {
		return "", u.err
	}
	var unit strings.Builder
	stop := "" // a here-document delimiter the unit waits for
	for {
		line, err := u.r.ReadString('\n')
		unit.WriteString(line)
		if err != nil {
			u.err = err
			if unit.Len() == 0 {
				return "", err
			}
			return unit.String(), nil
		}
		// While a here-document body is open, only its delimiter line can
		// complete the unit: skip re-parsing the growing text for other lines.
		if stop != "" && strings.TrimLeft(strings.TrimSuffix(line, "\n"), "\t") != stop {
			continue
		}
		var done bool
		done, stop = complete(unit.String())
		if done {
			return unit.String(), nil
		}
	}
}

// complete reports whether text (whole lines) forms complete commands as bash
// would read them; if not and a here-document body is open, stop is the
// delimiter that may end it.
func complete(text string) (done bool, stop string) {
	f, err := parse(text)
	if err != nil && syntax.IsIncomplete(err) && strings.Contains(text, "<<") {
		// Bash reads here-document bodies raw up to the delimiter line and
		// expands them later; mvdan parses unquoted bodies and waits for a `$(`
		// or backquote they leave open. Ask again with every delimiter quoted.
		if f2, err2 := parse(quoteHeredocs(text)); err2 == nil {
			f, err = f2, nil
		} else if syntax.IsIncomplete(err2) {
			err = err2
		}
	}
	if err != nil {
		var perr syntax.ParseError
		if !errors.As(err, &perr) || !perr.Incomplete {
			return true, "" // bash would stop at a syntax error too
		}
		if q, ok := strings.CutPrefix(perr.Text, "unclosed here-document "); ok {
			if d, err := strconv.Unquote(q); err == nil && d != "" {
				return false, d
			}
		}
		return false, ""
	}
	return !continued(text, f), ""
}

// continued reports whether the last line ends in an unquoted backslash that
// joins the next line (the parser accepts it at the end of input). A backslash
// ending a comment does not.
func continued(text string, f *syntax.File) bool {
	body := strings.TrimSuffix(text, "\n")
	n := len(body) - len(strings.TrimRight(body, `\`))
	if n%2 == 0 {
		return false
	}
	last := strings.Count(body, "\n") + 1
	commented := false
	syntax.Walk(f, func(node syntax.Node) bool {
		if c, ok := node.(*syntax.Comment); ok && int(c.Hash.Line()) == last {
			commented = true
		}
		return !commented
	})
	return !commented
}

// quoteHeredocs rewrites every here-document delimiter word after << or <<- as
// one single-quoted word with the same value, so that the parser reads every
// body as raw text up to its delimiter line. It is a textual pass: it may also
// touch a << inside quotes or arithmetic, which only matters for deciding where
// a unit ends and is then checked by parsing.
func quoteHeredocs(text string) string {
	var b strings.Builder
	for i := 0; i < len(text); {
		j := strings.Index(text[i:], "<<")
		if j < 0 {
			b.WriteString(text[i:])
			break
		}
		j += i + 2
		if j < len(text) && text[j] == '<' { // <<< is a here-string
			b.WriteString(text[i : j+1])
			i = j + 1
			continue
		}
		if j < len(text) && text[j] == '-' {
			j++
		}
		for j < len(text) && (text[j] == ' ' || text[j] == '\t') {
			j++
		}
		b.WriteString(text[i:j])
		value, end := delimiterWord(text, j)
		if end == j {
			i = j
			continue
		}
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(value, "'", `'\''`))
		b.WriteByte('\'')
		i = end
	}
	return b.String()
}

// delimiterWord reads a shell word at text[i:] and returns its value after quote
// removal and the offset after it.
func delimiterWord(text string, i int) (string, int) {
	var v strings.Builder
	for i < len(text) {
		c := text[i]
		switch c {
		case ' ', '\t', '\n', ';', '&', '|', '(', ')', '<', '>':
			return v.String(), i
		case '\\':
			if i+1 < len(text) {
				v.WriteByte(text[i+1])
				i += 2
				continue
			}
		case '\'', '"':
			k := strings.IndexByte(text[i+1:], c)
			if k < 0 {
				return v.String(), i // an open quote: leave the rest alone
			}
			v.WriteString(text[i+1 : i+1+k])
			i += k + 2
			continue
		}
		v.WriteByte(c)
		i++
	}
	return v.String(), i
}
