package interp

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/spear-shell/spear-shell/interp/invocation"

	"mvdan.cc/sh/v3/syntax"
)

// Name is the command spear-shell answers itself.
const Name = invocation.Name

// Verdict is what Analyze decided for an input.
type Verdict int

const (
	Forward Verdict = iota // no recognised invocation: the input goes to the real shell unchanged
	Answer                 // one or more answerable invocations; Segments says what runs where
	Refuse                 // a recognised invocation that is not alone, or malformed: nothing runs
)

func (v Verdict) String() string {
	switch v {
	case Forward:
		return "forward"
	case Answer:
		return "answer"
	case Refuse:
		return "refuse"
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// Refusal codes.
const (
	CodeNotAlone  = "not-alone"
	CodeMalformed = invocation.CodeMalformed
)

// Invocation is one answered spear-capability command line.
type Invocation = invocation.Invocation

// Segment is one piece of an answered input, in source order.
type Segment struct {
	Forward    string      // exact source text for the real shell (when Invocation == nil)
	Invocation *Invocation // an answered invocation
}

// Analysis is the decision on one input.
type Analysis struct {
	Verdict  Verdict
	Code     string    // Refuse: "not-alone" or "malformed"
	Reason   string    // Refuse: one line a model can act on
	Segments []Segment // Answer: in source order; Forward segments are whole top-level commands
}

// Usage is the usage line shown in malformed refusals.
const Usage = invocation.Usage

var parsers = sync.Pool{New: func() any {
	return syntax.NewParser(syntax.KeepComments(true), syntax.Variant(syntax.LangBash))
}}

// Parse parses src as bash, comments kept: mvdan's reading, without the corrections Analyze
// makes where mvdan and bash disagree (see ParsesAsBash).
func Parse(src string) (*syntax.File, error) {
	p := parsers.Get().(*syntax.Parser)
	defer parsers.Put(p)
	return p.Parse(strings.NewReader(src), "")
}

// Analyze decides one input: a whole -c string, or one unit of a session.
// docs/recognition.md describes the rules.
func Analyze(src string) Analysis {
	// Quote removal can only delete quotes, backslashes and backslash-newlines, so
	// input whose text never spells the name needs no parse, unless $'...' or $"..."
	// could spell it with escapes.
	if !invocation.MayInvoke(src) {
		return Analysis{Verdict: Forward}
	}
	if why := overBounds(src); why != "" {
		return refuse(CodeMalformed, why)
	}
	if inv, why, ok := invocation.Plain(src); ok {
		// The common case needs no parser: its parse is one top-level simple command.
		if why != "" {
			return refuse(CodeMalformed, why)
		}
		return Analysis{Verdict: Answer, Segments: []Segment{{Invocation: inv}}}
	}
	return analyzeParsed(src)
}

// analyzeParsed is Analyze for input that may spell the name, by a full parse.
func analyzeParsed(src string) Analysis {
	named := invocation.NameInText(src)
	if strings.IndexByte(src, '\r') >= 0 {
		return untrusted(named, "it contains a carriage return")
	}
	w, err := walk(src)
	if err != nil {
		return untrusted(named, "it does not parse: "+err.Error())
	}
	if w.untrusted != "" {
		return untrusted(named || len(w.found) > 0, w.untrusted)
	}
	if len(w.found) == 0 {
		return Analysis{Verdict: Forward}
	}
	return decide(src, w.file, w.found)
}

// walk parses src and finds its command positions, correcting mvdan where it
// reads a comment that ends in a backslash differently from bash (see visit).
// The corrections blank bytes in a copy of src: offsets stay, and only comment
// text changes. Guesses made from the text alone are kept only when the parse
// confirms that they end comments; corrections found in the tree are sure. Each
// round drops a guess or adds a sure correction, so the loop ends.
func walk(src string) (walker, error) {
	w, err := walkFrom(src, src, nil)
	if err == nil || !strings.Contains(src, "<<") {
		return w, err
	}
	// mvdan parses the body of <<"E"OF as unquoted, and may fail on it where
	// bash reads text. Parse again with such delimiters requoted to the same
	// value and length, and keep the result only if every rewritten word turns
	// out to be a here-document delimiter.
	base, spans := requoteDelimiters(src)
	if len(spans) == 0 {
		return w, err
	}
	if w2, err2 := walkFrom(src, base, spans); err2 == nil && w2.delimiters == len(spans) {
		return w2, nil
	}
	return w, err
}

// walkFrom is walk on base, a copy of src with here-document delimiters
// requoted at spans.
func walkFrom(src, base string, spans [][2]int) (walker, error) {
	guess := commentGuesses(src)
	var sure []int
	for {
		b := []byte(base)
		for _, off := range guess {
			b[off] = ' '
		}
		for _, off := range sure {
			b[off] = ' '
		}
		text := string(b)
		f, err := Parse(text)
		if err != nil {
			if len(guess) > 0 {
				guess = nil
				continue
			}
			return walker{}, err
		}
		w := walker{src: src, parsed: text, file: f, guess: guess, spans: spans}
		syntax.Walk(f, w.visit)
		if len(w.confirmed) < len(guess) {
			guess = w.confirmed
			continue
		}
		if len(w.joined) > 0 {
			sure = append(sure, w.joined...)
			continue
		}
		return w, nil
	}
}

// ParsesAsBash reports whether mvdan's parse of src can be taken as bash's: false where they
// may disagree on where a statement ends (SPEC 3's untrusted forms, and comments or
// here-document delimiters that Analyze must correct). An envelope is matched only where it is
// true; the rest is judged as before, never as an envelope.
func ParsesAsBash(src string) bool {
	if strings.IndexByte(src, '\r') >= 0 || strings.Contains(src, "!(") || overBounds(src) != "" || len(commentGuesses(src)) > 0 {
		return false
	}
	if strings.Contains(src, "<<") {
		if _, spans := requoteDelimiters(src); len(spans) > 0 {
			return false
		}
	}
	return true
}

// requoteDelimiters finds here-document delimiter words whose last part is
// unquoted after a quoted one ("E"OF, 'E'OF) and rewrites each, in a copy of
// src, to a word of the same value and length whose last part is quoted
// ('EOF' for "E"OF), which mvdan reads as bash does. It is a textual pass; the
// caller checks its guesses against the parse.
func requoteDelimiters(src string) (string, [][2]int) {
	b := []byte(src)
	var spans [][2]int
	for i := 0; i < len(src); {
		j := strings.Index(src[i:], "<<")
		if j < 0 {
			break
		}
		j += i + 2
		i = j
		if j < len(src) && src[j] == '<' {
			i++
			continue
		}
		if j < len(src) && src[j] == '-' {
			j++
		}
		for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
			j++
		}
		value, end := delimiterWord(src, j)
		word := src[j:end]
		q := strings.LastIndexAny(word, `'"`)
		if q < 0 || q == len(word)-1 || strings.ContainsAny(word, "\\$`") || strings.Contains(value, "'") {
			continue
		}
		// Without backslashes the word is its value plus pairs of quotes, so
		// the length left over after 'value' is even: fill it with ''.
		extra := len(word) - len(value) - 2
		if extra < 0 {
			continue // a word shorter than its value in quotes (mvdan read it otherwise)
		}
		r := strings.Repeat("''", extra/2) + "'" + value + "'"
		if len(r) != len(word) {
			continue
		}
		copy(b[j:end], r)
		spans = append(spans, [2]int{j, end})
		i = end
	}
	return string(b), spans
}

// commentGuesses returns the offsets of backslashes that end lines holding a
// '#' at the start of a word: likely comments that mvdan would continue onto
// the next line, which can make the first parse fail.
func commentGuesses(src string) []int {
	var offs []int
	for start := 0; start < len(src); {
		end := strings.IndexByte(src[start:], '\n')
		if end < 0 {
			break
		}
		end += start
		line := src[start:end]
		start = end + 1
		n := len(line) - len(strings.TrimRight(line, `\`))
		if n%2 == 0 {
			continue
		}
		for i := 0; i < len(line); i++ {
			if line[i] == '#' && (i == 0 || strings.IndexByte(" \t;&|()", line[i-1]) >= 0) {
				offs = append(offs, end-1)
				break
			}
		}
	}
	return offs
}

// untrusted decides input the parser cannot be trusted with.
func untrusted(named bool, why string) Analysis {
	if !named {
		return Analysis{Verdict: Forward}
	}
	return refuse(CodeMalformed, "the input names "+Name+" but cannot be parsed safely: "+why)
}

func refuse(code, reason string) Analysis {
	// One line: control characters from the input or a parser message become spaces.
	reason = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, reason)
	return Analysis{Verdict: Refuse, Code: code, Reason: reason}
}

func notAlone(why string) Analysis {
	return refuse(CodeNotAlone, Name+" must stand alone on its own line; "+why)
}

// occurrence is the name found in a command position.
type occurrence struct {
	stmt    *syntax.Stmt
	call    *syntax.CallExpr
	word    int    // index in call.Args of the name
	via     string // exec, command or builtin when word > 0
	dollarQ bool   // the name was spelt with $'...' or $"..."
	parents []syntax.Node
}

// walker finds command positions. It keeps the path from the root so that each
// occurrence knows what it is nested in.
type walker struct {
	src        string
	parsed     string // src with the comment corrections made so far
	file       *syntax.File
	joined     []int    // offsets to blank: comment-ending backslash(-newline)s mvdan misreads
	guess      []int    // sorted offsets blanked on a guess
	confirmed  []int    // the guesses that end comments outside backquotes
	spans      [][2]int // here-document delimiters requoted by requoteDelimiters
	delimiters int      // how many of spans the parse found as delimiters
	stack      []syntax.Node
	found      []occurrence
	untrusted  string
}

func (w *walker) visit(n syntax.Node) bool {
	if n == nil {
		w.stack = w.stack[:len(w.stack)-1]
		return true
	}
	switch n := n.(type) {
	case *syntax.Redirect:
		if (n.Op == syntax.Hdoc || n.Op == syntax.DashHdoc) && len(w.spans) > 0 && len(n.Word.Parts) > 0 {
			s, e := int(n.Word.Pos().Offset()), int(n.Word.End().Offset())
			if slices.Contains(w.spans, [2]int{s, e}) {
				w.delimiters++
			}
		}
		if n.Hdoc == nil {
			break
		}
		switch heredocKind(n.Word) {
		case hdocExpanded:
			// Bash runs the substitutions of an unquoted body: walk it.
		case hdocDynamic:
			w.distrust("a here-document delimiter contains an expansion")
			fallthrough
		default:
			// Bash keeps this body literal, whatever mvdan made of it: walk
			// everything but the body.
			w.stack = append(w.stack, n)
			if n.N != nil {
				syntax.Walk(n.N, w.visit)
			}
			syntax.Walk(n.Word, w.visit)
			w.stack = w.stack[:len(w.stack)-1]
			return false
		}
	case *syntax.ExtGlob:
		// Bash without extglob never reads these as patterns (`!(` even negates a
		// subshell); inside [[ ]] it parses them as patterns like mvdan - but not inside a
		// command nested in [[ ]] ($( ), <( ), backquotes), where they are commands again.
		if !w.inTestPattern() {
			w.distrust("an extended glob " + n.Op.String() + " that bash does not read as mvdan does")
		}
	case *syntax.Comment:
		// mvdan lets a comment's final backslash-newline continue the command
		// after the comment. Bash ends the comment at the newline, except inside
		// backquotes, where it removes backslash-newlines before parsing, so the
		// comment takes in the next line.
		if len(w.guess) > 0 {
			// A guessed blank ends this comment's text.
			off := int(n.Hash.Offset()) + len(n.Text)
			if _, ok := slices.BinarySearch(w.guess, off); ok && !w.inside(isBackquotes) {
				w.confirmed = append(w.confirmed, off)
			}
		}
		if strings.HasSuffix(n.Text, "\\\n") {
			off := int(n.Hash.Offset()) + len(n.Text) - 1
			switch {
			case off+1 >= len(w.parsed) || w.parsed[off] != '\\' || w.parsed[off+1] != '\n':
				w.distrust("a comment ends in a backslash the parser misplaced")
			case w.inside(isBackquotes):
				w.joined = append(w.joined, off, off+1)
			default:
				w.joined = append(w.joined, off)
			}
		}
	case *syntax.CallExpr:
		w.call(n)
	}
	w.stack = append(w.stack, n)
	return true
}

func (w *walker) distrust(why string) {
	if w.untrusted == "" {
		w.untrusted = why
	}
}

func isBackquotes(n syntax.Node) bool {
	c, ok := n.(*syntax.CmdSubst)
	return ok && c.Backquotes
}

// inside reports whether an enclosing node satisfies is.
// inTestPattern reports whether the nearest enclosing context is a [[ ]] test rather than a
// command (a statement, a command or process substitution) nested in it.
func (w *walker) inTestPattern() bool {
	for i := len(w.stack) - 1; i >= 0; i-- {
		switch w.stack[i].(type) {
		case *syntax.TestClause:
			return true
		case *syntax.Stmt, *syntax.CmdSubst, *syntax.ProcSubst:
			return false
		}
	}
	return false
}

func (w *walker) inside(is func(syntax.Node) bool) bool {
	for i := len(w.stack) - 1; i >= 0; i-- {
		if is(w.stack[i]) {
			return true
		}
	}
	return false
}

// call records the name in the command positions of one simple command.
func (w *walker) call(c *syntax.CallExpr) {
	if len(w.stack) == 0 {
		return
	}
	stmt, ok := w.stack[len(w.stack)-1].(*syntax.Stmt)
	if !ok {
		return
	}
	via, i := "", 0
	// time -p -- cmd: mvdan takes -p but leaves -- as the command word.
	if len(w.stack) > 1 && len(c.Args) > 1 {
		if _, ok := w.stack[len(w.stack)-2].(*syntax.TimeClause); ok {
			if u := unquote(c.Args[0], w.src); !u.dynamic && u.text == "--" {
				via, i = "time", 1
			}
		}
	}
	prev := "" // the builtin whose operand this word is
	for i < len(c.Args) {
		u := unquote(c.Args[i], w.src)
		if u.dynamic {
			return
		}
		if u.text == Name {
			if prev == "builtin" {
				return // bash looks the operand of builtin up among builtins only
			}
			w.found = append(w.found, occurrence{
				stmt: stmt, call: c, word: i, via: via, dollarQ: u.dollarQ,
				parents: append([]syntax.Node(nil), w.stack...),
			})
			return
		}
		next, runs := operand(u.text, c.Args, i+1, w.src)
		if !runs {
			return
		}
		if via == "" {
			via = u.text
		}
		prev, i = u.text, next
	}
}

// operand returns the index of the word that the builtin cmd runs as a command,
// and whether it runs one. Options are skipped as bash's getopt reads them; an
// unknown option is skipped too, which can only find more command positions.
func operand(cmd string, args []*syntax.Word, i int, src string) (int, bool) {
	var withArg, stops string
	switch cmd {
	case "exec":
		withArg = "a"
	case "command":
		stops = "vV"
	case "builtin":
	default:
		return 0, false
	}
	for ; i < len(args); i++ {
		u := unquote(args[i], src)
		if u.dynamic || len(u.text) < 2 || u.text[0] != '-' {
			return i, true
		}
		if u.text == "--" {
			return i + 1, true
		}
		if cmd == "builtin" {
			return i, true
		}
		for j := 1; j < len(u.text); j++ {
			o := u.text[j]
			if strings.IndexByte(stops, o) >= 0 {
				return 0, false
			}
			if strings.IndexByte(withArg, o) >= 0 {
				if j == len(u.text)-1 {
					i++ // the option's argument is the next word
				}
				break
			}
		}
	}
	return i, true
}

// heredoc delimiter kinds.
const (
	hdocExpanded = iota // no quoting: bash expands the body
	hdocLiteral         // a quoted part: the body is text
	hdocDynamic         // an expansion in the delimiter: bash and mvdan disagree on it
)

// heredocKind judges a here-document delimiter as bash does: any quoted part
// makes the body literal (mvdan looks at the last part only).
func heredocKind(w *syntax.Word) int {
	kind := hdocExpanded
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.IndexByte(p.Value, '\\') >= 0 {
				kind = hdocLiteral
			}
		case *syntax.SglQuoted:
			kind = hdocLiteral
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					return hdocDynamic
				}
			}
			kind = hdocLiteral
		default:
			return hdocDynamic
		}
	}
	return kind
}
