package interp

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/spear-shell/spear-shell/interp/invocation"
)

// UnitReader cuts a session's stdin into units: one line plus the continuation
// lines needed to complete a command (open quotes, here-documents, compound
// commands, a trailing backslash, |, &&), as bash reads them.
type UnitReader struct {
	r   *bufio.Reader
	err error // sticky read error, returned once the pending text is out
	// Shell is the real shell's path: text mvdan cannot parse is complete when bash says so
	// (units_bash.go). Empty: a parse error ends the unit.
	Shell string
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
	unit := Unit{shell: u.Shell}
	for {
		line, err := u.r.ReadString('\n')
		if err != nil {
			unit.text.WriteString(line)
			u.err = err
			if unit.text.Len() == 0 {
				return "", err
			}
			return unit.Take(), nil
		}
		if unit.Add(line) {
			return unit.Take(), nil
		}
	}
}

// LineReady tells whether a whole line is already buffered, so that reading it cannot block.
func (u *UnitReader) LineReady() bool {
	b, _ := u.r.Peek(u.r.Buffered())
	return bytes.IndexByte(b, '\n') >= 0
}

// AtEnd tells whether the input has ended: the unit Next returned last was the last one (and
// may be incomplete).
func (u *UnitReader) AtEnd() bool { return u.err != nil }

// Unit gathers whole lines until they complete a unit (NewUnit).
type Unit struct {
	text  strings.Builder
	w     wait
	shell string // the real shell's path, asked about text mvdan cannot parse
}

// Add appends one whole line and reports whether the text is now a complete unit.
func (u *Unit) Add(line string) bool {
	u.text.WriteString(line)
	// Re-parsing the growing text for a line that cannot complete it would
	// make long here-documents and strings quadratic.
	if !u.w.mayEnd(line) {
		return false
	}
	if u.text.Len() == len(line) && simpleLine(line) {
		return true
	}
	text := u.text.String()
	if invocation.MayInvoke(text) && overBounds(text) != "" {
		// Past the input bounds it is never parsed: it ends here, and Analyze refuses it.
		return true
	}
	var done bool
	done, u.w = complete(text, u.shell)
	return done
}

// NewUnit returns an empty unit; shell is the real shell's path, asked about text mvdan cannot
// parse ("": a parse error ends the unit).
func NewUnit(shell string) *Unit { return &Unit{shell: shell} }

// End appends the text of a last line, without its newline: the unit ends however it stands.
func (u *Unit) End(line string) { u.text.WriteString(line) }

// Started tells whether a unit has begun (the next line is a continuation line).
func (u *Unit) Started() bool { return u.text.Len() > 0 }

// Take returns the text gathered and starts a new unit.
func (u *Unit) Take() string {
	s := u.text.String()
	u.text.Reset()
	u.w = wait{}
	return s
}

// wait says which next line may complete an incomplete unit.
type wait struct {
	delimiter string // an open here-document: only its delimiter line ends it
	quote     byte   // an open quote: only a line holding it can close it
}

func (w wait) mayEnd(line string) bool {
	switch {
	case w.delimiter != "":
		return strings.TrimLeft(strings.TrimSuffix(line, "\n"), "\t") == w.delimiter
	case w.quote != 0:
		return strings.IndexByte(line, w.quote) >= 0
	}
	return true
}

// complete reports whether text (whole lines) forms complete commands as bash
// would read them; if not, w says which next line may complete them.
func complete(text, shell string) (done bool, w wait) {
	f, err := Parse(text)
	more, w := incomplete(err)
	if more && strings.Contains(text, "<<") {
		// Bash reads here-document bodies raw up to the delimiter line and
		// expands them later; mvdan parses unquoted bodies and waits for a `$(`
		// or backquote they leave open. Ask again with every delimiter quoted.
		f2, err2 := Parse(quoteHeredocs(text))
		if more2, w2 := incomplete(err2); err2 == nil || more2 {
			f, err, more, w = f2, err2, more2, w2
		}
	}
	if err != nil {
		// A syntax error ends the unit, as it ends bash's reading of a command; one that only
		// mvdan sees waits for the lines that complete the command for bash.
		return !more && !bashIncomplete(shell, text), w
	}
	return !continued(text, f), wait{}
}

// incomplete reports whether a parse error could go away with more lines, and
// what to wait for. mvdan does not flag an unclosed quoted here-document as
// incomplete; bash reads on to its delimiter.
func incomplete(err error) (bool, wait) {
	var perr syntax.ParseError
	if err == nil || !errors.As(err, &perr) {
		return false, wait{}
	}
	if q, ok := strings.CutPrefix(perr.Text, "unclosed here-document "); ok {
		d, _ := strconv.Unquote(q)
		return true, wait{delimiter: d}
	}
	if !perr.Incomplete {
		return false, wait{}
	}
	if q, ok := strings.CutPrefix(perr.Text, "reached EOF without closing quote "); ok {
		if c, err := strconv.Unquote(q); err == nil && len(c) == 1 {
			return true, wait{quote: c[0]}
		}
	}
	return true, wait{}
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
