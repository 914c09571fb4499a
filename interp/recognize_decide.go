package interp

import (
	"slices"
	"strconv"
	"strings"

	"github.com/spear-shell/spear-shell/interp/invocation"

	"mvdan.cc/sh/v3/syntax"
)

// decide turns the occurrences found in a parsed input into an Analysis. The
// first occurrence in source order that is not in an answerable position refuses
// the input (not-alone); then the first malformed one does.
func decide(src string, f *syntax.File, found []occurrence) Analysis {
	top := make(map[*syntax.Stmt]int, len(f.Stmts))
	for i, s := range f.Stmts {
		top[s] = i
	}
	type answer struct {
		index int // in f.Stmts
		inv   *Invocation
	}
	var answers []answer
	ls := newLines(src)
	// Positions first: the name inside an invocation's own words refuses the
	// input as not-alone even though the outer invocation comes first.
	for _, o := range found {
		if o.dollarQ {
			return refuse(CodeMalformed, "the name is spelt with $'...' or $\"...\" quoting; write it plainly; "+Usage)
		}
		if why := position(ls, o, f, top); why != "" {
			return notAlone(why)
		}
	}
	for _, o := range found {
		inv, why := invocationAt(o, src)
		if why != "" {
			return refuse(CodeMalformed, why)
		}
		answers = append(answers, answer{top[o.stmt], inv})
	}

	// Cut at the starts of top-level statements: an answered invocation owns its
	// lines (and any comment lines after it); the statements between answers go to
	// the real shell as written, heredoc bodies and comments included.
	cut := func(i int) int {
		if i == 0 {
			return 0
		}
		if i == len(f.Stmts) {
			return len(src)
		}
		return lineStart(src, int(f.Stmts[i].Pos().Offset()))
	}
	var segs []Segment
	next := 0 // first top-level statement not yet placed
	for _, a := range answers {
		if next < a.index {
			segs = append(segs, Segment{Forward: src[cut(next):cut(a.index)]})
		}
		segs = append(segs, Segment{Invocation: a.inv})
		next = a.index + 1
	}
	if next < len(f.Stmts) {
		segs = append(segs, Segment{Forward: src[cut(next):]})
	}
	return Analysis{Verdict: Answer, Segments: segs}
}

// position says why an occurrence is not a complete top-level simple command
// alone on its lines, or "" when it is.
func position(ls lines, o occurrence, f *syntax.File, top map[*syntax.Stmt]int) string {
	if o.word > 0 {
		return "it was run through " + o.via
	}
	s := o.stmt
	switch {
	case s.Negated:
		return "it was negated with !"
	case s.Background:
		return "it was sent to the background with &"
	case s.Coprocess, s.Disown:
		return "it was sent to the background"
	case len(s.Redirs) > 0:
		return "it had a redirection"
	case len(o.call.Assigns) > 0:
		return "it had an assignment prefix"
	}
	// parents ends with the statement itself; look at what encloses it.
	for i := len(o.parents) - 2; i >= 0; i-- {
		if why := nested(o.parents[i]); why != "" {
			return why
		}
	}
	i, ok := top[s]
	if !ok {
		return "it was nested in another command"
	}
	first, last := ls.at(s.Pos()), ls.at(endPos(s))
	if i > 0 && ls.at(endPos(f.Stmts[i-1])) >= first {
		return "it shared a line with another command"
	}
	if i+1 < len(f.Stmts) && ls.at(f.Stmts[i+1].Pos()) <= last {
		return "it shared a line with another command"
	}
	return ""
}

// nested describes an enclosing node that makes a command not top-level.
func nested(n syntax.Node) string {
	switch n := n.(type) {
	case *syntax.BinaryCmd:
		switch n.Op {
		case syntax.Pipe, syntax.PipeAll:
			return "it was part of a pipeline"
		}
		return "it was part of a " + n.Op.String() + " list"
	case *syntax.Subshell:
		return "it was inside a ( ) subshell"
	case *syntax.Block:
		return "it was inside a { } group"
	case *syntax.CmdSubst:
		if n.Backquotes {
			return "it was inside a `...` command substitution"
		}
		return "it was inside a $(...) command substitution"
	case *syntax.ProcSubst:
		return "it was inside a process substitution"
	case *syntax.IfClause:
		return "it was inside an if statement"
	case *syntax.WhileClause:
		if n.Until {
			return "it was inside an until loop"
		}
		return "it was inside a while loop"
	case *syntax.ForClause:
		if n.Select {
			return "it was inside a select loop"
		}
		return "it was inside a for loop"
	case *syntax.CaseClause:
		return "it was inside a case statement"
	case *syntax.FuncDecl:
		return "it was inside a function body"
	case *syntax.TimeClause:
		return "it was run through time"
	case *syntax.CoprocClause:
		return "it was run as a coprocess"
	}
	return ""
}

// invocationAt checks the form of an answerable occurrence.
func invocationAt(o occurrence, src string) (*Invocation, string) {
	args := o.call.Args[1:]
	words := make([]string, len(args))
	for i, a := range args {
		u := unquote(a, src)
		if u.dollarQ {
			return nil, "argument " + strconv.Itoa(i+1) + " uses $'...' or $\"...\" quoting, which is not accepted; " + Usage
		}
		words[i] = u.text
	}
	return invocation.Of(words, src[o.stmt.Pos().Offset():o.call.End().Offset()])
}

// endPos is the position of the last byte of a statement.
func endPos(s *syntax.Stmt) syntax.Pos {
	e := s.End()
	return syntax.NewPos(e.Offset()-1, 0, 0)
}

// lines maps byte offsets to line numbers; syntax.Pos lines saturate on long inputs.
type lines []int // offsets of the newlines

func newLines(src string) lines {
	var l lines
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			l = append(l, i)
		}
	}
	return l
}

// at is the 0-based line of a position.
func (l lines) at(p syntax.Pos) int {
	off := int(p.Offset())
	n, _ := slices.BinarySearch(l, off)
	return n
}

// lineStart is the offset of the start of the line holding offset off.
func lineStart(src string, off int) int {
	return strings.LastIndexByte(src[:off], '\n') + 1
}
