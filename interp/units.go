package interp

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/spear-shell/spear-shell/interp/invocation"

	"mvdan.cc/sh/v3/syntax"
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
	unit  *Unit // kept across units: it holds the real shell asked about them
	// cutShort: the last unit is a command the end of input cut short (CutShort).
	cutShort bool
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
	if u.unit == nil {
		u.unit = &Unit{shell: u.Shell}
	}
	unit := u.unit
	for {
		line, err := u.r.ReadString('\n')
		if err != nil {
			unit.text.WriteString(line)
			u.err = err
			u.cutShort = unit.cutShort(line)
			unit.Close()
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

// CutShort tells, once AtEnd, whether the last unit is a command that the end of input cut
// short: bash meets the end while it still reads it (an open quote, `${`, `$((`, a compound
// command, a trailing | or &&), not a here-document that the end closes nor a trailing
// backslash, with which bash runs what it has.
func (u *UnitReader) CutShort() bool { return u.cutShort }

// Unit gathers whole lines until they complete a unit (NewUnit).
//
// Here-document bodies are read here, as bash reads them, and never reach the parser: bash reads
// a body raw up to its delimiter line and expands it only when the command runs, where mvdan
// would parse an unquoted body (and wait for a `$(` or backquote it leaves open) and does not
// join a body line ending in a backslash to the next (bash does, for an unquoted delimiter, so
// that `line \` then `EOF` is not the end). The parser sees parsed: the text with every body
// left out and every here-document operator whose body was read replaced by docRedir. Which body
// bash reads next is docScan's (units_docs.go) to say, not the parser's.
type Unit struct {
	text   strings.Builder
	parsed strings.Builder // text as the parser sees it: no here-document bodies
	doc    *hereDoc        // the here-document whose body is being read, if any
	w      wait
	shell  string // the real shell's path, asked about text mvdan cannot parse
	check  *syntaxChecker
}

// docRedir stands for a here-document operator and its word in what the parser sees: a plain
// redirection, so that the parser waits for no body (and reads none at a point of its own,
// which is not always bash's).
const docRedir = "< __spear_doc__"

// Add appends one whole line and reports whether the text is now a complete unit.
func (u *Unit) Add(line string) bool {
	u.text.WriteString(line)
	if u.doc != nil {
		rest, ok := u.doc.ends(line)
		if !ok {
			return false
		}
		u.doc = nil
		u.parsed.WriteString(rest)
	} else {
		u.parsed.WriteString(line)
		// Re-parsing the growing text for a line that cannot complete it would
		// make long strings quadratic.
		if !u.w.mayEnd(line) {
			return false
		}
		if u.text.Len() == len(line) && simpleLine(line) {
			return true
		}
	}
	text := u.text.String()
	if invocation.MayInvoke(text) && overBounds(text) != "" {
		// Past the input bounds it is never parsed: it ends here, and Analyze refuses it.
		return true
	}
	return u.complete()
}

// NewUnit returns an empty unit; shell is the real shell's path, asked about text mvdan cannot
// parse ("": a parse error ends the unit). Close it when done.
func NewUnit(shell string) *Unit { return &Unit{shell: shell} }

// End appends the text of a last line, without its newline: the unit ends however it stands.
func (u *Unit) End(line string) { u.text.WriteString(line) }

// Started tells whether a unit has begun (the next line is a continuation line).
func (u *Unit) Started() bool { return u.text.Len() > 0 }

// Take returns the text gathered and starts a new unit.
func (u *Unit) Take() string {
	s := u.text.String()
	u.text.Reset()
	u.parsed.Reset()
	u.doc = nil
	u.w = wait{}
	return s
}

// cutShort tells whether the text gathered, ended by the end of input after last (a line
// without its newline, already in text), is a command bash would still be reading.
func (u *Unit) cutShort(last string) bool {
	if u.text.Len() == 0 || u.doc != nil {
		return false
	}
	_, err := Parse(u.parsed.String() + last)
	if err == nil {
		return false
	}
	var perr syntax.ParseError
	if errors.As(err, &perr) && strings.HasPrefix(perr.Text, "unclosed here-document ") {
		return false
	}
	if more, _ := incomplete(err); more {
		return true
	}
	return u.bashIncomplete(u.text.String())
}

// Close ends the real shell asked about text mvdan cannot parse, if one was started.
func (u *Unit) Close() {
	if u.check != nil {
		u.check.close()
		u.check = nil
	}
}

// wait says which next line may complete an incomplete unit.
type wait struct {
	quote byte // an open quote: only a line holding it can close it
}

func (w wait) mayEnd(line string) bool {
	return w.quote == 0 || strings.IndexByte(line, w.quote) >= 0
}

// complete reports whether the text gathered (whole lines) forms complete commands as bash
// would read them; if not, it sets what the next lines are waited for as.
func (u *Unit) complete() bool {
	parsed := u.parsed.String()
	src := parsed
	if strings.IndexByte(parsed, '`') >= 0 {
		// bash reads a backquoted command as a string, up to the next unescaped backquote
		// (quotes and here-document operators in it mean nothing yet): the parser sees it empty.
		src = scanDocs(parsed).emptyBackquotes()
	}
	f, err := Parse(src)
	if err == nil {
		u.w = wait{}
		return !continued(src, f)
	}
	var perr syntax.ParseError
	if errors.As(err, &perr) && strings.HasPrefix(perr.Text, "unclosed here-document ") {
		// Its body starts on the next line, or the command line goes on first; bash may read
		// another body first (docScan).
		if !u.startDoc(scanDocs(parsed)) {
			u.w = wait{}
		}
		return false
	}
	more, w := incomplete(err)
	u.w = w
	if more {
		// mvdan may stop at something else first (a `(` that ends the line) where bash has
		// read to a here-document's body.
		if u.startDoc(scanDocs(parsed)) {
			u.w = wait{}
		}
		return false
	}
	// A syntax error ends the unit, as it ends bash's reading of a command; one that only
	// mvdan sees waits for the lines that complete the command for bash.
	if !u.bashIncomplete(u.text.String()) {
		return true
	}
	if u.startDoc(scanDocs(parsed)) {
		u.w = wait{}
	}
	return false
}

// bashIncomplete asks the real shell whether text is a command cut short (units_bash.go), and
// waits for the closing character it names.
func (u *Unit) bashIncomplete(text string) bool {
	if u.shell == "" {
		return false
	}
	more, closer := u.checker().incomplete(text)
	if more {
		u.w = wait{quote: closer}
	}
	return more
}

func (u *Unit) checker() *syntaxChecker {
	if u.check == nil {
		u.check = &syntaxChecker{path: u.shell}
	}
	return u.check
}

// startDoc begins reading the body bash reads next, if it has read the command text up to one
// (scan of what the parser sees), and reports whether it did. The body starts on the next line.
// The operator and its word are replaced by docRedir.
func (u *Unit) startDoc(scan *docScan) bool {
	p := scan.s
	if len(scan.gathered) == 0 {
		return false
	}
	d := scan.gathered[0]
	w := p[d.word:d.end]
	quoted := docWordQuoted(w)
	value := docDelimiter(w, quoted)
	if u.shell != "" && docWordAsks(w) {
		if v, ok := u.checker().delimiter(w); ok {
			value = v
		}
	}
	u.doc = &hereDoc{delimiter: value, quoted: quoted, dash: p[d.op+2] == '-', inSubst: d.inSubst}
	u.parsed.Reset()
	u.parsed.WriteString(p[:d.op])
	u.parsed.WriteString(docRedir)
	u.parsed.WriteString(p[d.end:])
	return true
}

// hereDoc is a here-document whose body is being read.
type hereDoc struct {
	delimiter string
	quoted    bool // some of the delimiter word was quoted: the body is read verbatim
	dash      bool // <<-: leading tabs are stripped from each line
	inSubst   bool // inside $( ): a line that begins with the delimiter ends the body
	line      strings.Builder
}

// ends takes one whole line of the body and reports whether it is the delimiter line, as bash's
// read_a_line and make_here_document read it: with an unquoted delimiter a line ending in an
// unescaped backslash joins the next (and the joined line is what is compared); NUL bytes are
// dropped; with <<- the line is compared as it is and again without its leading tabs. In a
// command substitution a line that begins with the delimiter and holds a `)` after it ends the
// body too, and the rest of it is returned: bash reads it as commands.
func (d *hereDoc) ends(line string) (rest string, ok bool) {
	body := strings.TrimSuffix(line, "\n")
	if !d.quoted && oddBackslashes(body) {
		d.line.WriteString(body[:len(body)-1])
		return "", false
	}
	d.line.WriteString(body)
	l := strings.ReplaceAll(d.line.String(), "\x00", "")
	d.line.Reset()
	if l == d.delimiter || d.dash && strings.TrimLeft(l, "\t") == d.delimiter {
		return "", true
	}
	if d.dash {
		l = strings.TrimLeft(l, "\t")
	}
	if d.inSubst {
		if r, ok := strings.CutPrefix(l, d.delimiter); ok && strings.Contains(r, ")") {
			return r + "\n", true
		}
	}
	return "", false
}

// oddBackslashes tells whether s ends in an odd run of backslashes: the last one escapes the
// newline after s.
func oddBackslashes(s string) bool {
	return (len(s)-len(strings.TrimRight(s, `\`)))%2 == 1
}

// incomplete reports whether a parse error could go away with more lines, and
// what to wait for.
func incomplete(err error) (bool, wait) {
	var perr syntax.ParseError
	if err == nil || !errors.As(err, &perr) || !perr.Incomplete {
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
// joins the next (the parser accepts it at the end of input). A backslash
// ending a comment does not.
func continued(text string, f *syntax.File) bool {
	body := strings.TrimSuffix(text, "\n")
	if !oddBackslashes(body) {
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
		case '\'':
			k := strings.IndexByte(text[i+1:], c)
			if k < 0 {
				return v.String(), i // an open quote: leave the rest alone
			}
			v.WriteString(text[i+1 : i+1+k])
			i += k + 2
			continue
		case '"':
			// Inside double quotes a backslash quotes only $ ` " \ and newline.
			k := i + 1
			for ; k < len(text) && text[k] != '"'; k++ {
				if text[k] == '\\' && k+1 < len(text) && strings.IndexByte("$`\"\\\n", text[k+1]) >= 0 {
					k++
				}
				v.WriteByte(text[k])
			}
			if k == len(text) {
				return v.String(), i
			}
			i = k + 1
			continue
		}
		v.WriteByte(c)
		i++
	}
	return v.String(), i
}
