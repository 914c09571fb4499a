package envelope

import (
	"errors"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/spear-shell/spear-shell/interp"
)

// A plan is what an envelope runs, in order, derived from where the command's slot sits in the
// template's tree: the statements around it in its list (a subshell's list is flattened into
// the one that holds it: see docs/recognition.md), the left and right of the && chains it is in,
// and the command itself.
type plan struct {
	steps []step
	// fresh: the command runs in a fresh shell process (`exec SELF -c CMD`); self is the
	// template span of SELF.
	fresh bool
	// stdinNull: the command has `< /dev/null`.
	stdinNull bool
}

// StepKind is what a step of a plan does.
type StepKind int

const (
	StepForward StepKind = iota // the template span runs in the real shell
	StepRequire                 // the status so far must be 0, or the string ends with it
	StepCommand                 // the model's command
	StepOutside                 // argv, run by spear-shell outside the boundary
)

type step struct {
	kind       StepKind
	start, end int      // template span (StepForward)
	argv       []string // StepOutside
}

// planOf works out e's plan. outside lists statements that spear-shell runs itself.
func planOf(e *Envelope, outside []string) (plan, error) {
	var p plan
	path := pathTo(e.file, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			return stmtMark(n)
		case *syntax.Word:
			return commandWord(n) != ""
		}
		return false
	})
	if path == nil {
		return p, errors.New("template: no command slot")
	}
	var unit *syntax.Stmt
	switch n := path[len(path)-1].(type) {
	case *syntax.Stmt:
		unit = n
	case *syntax.Word:
		call, ok := path[len(path)-2].(*syntax.CallExpr)
		if !ok {
			return p, errors.New("template: the command's word is not an argument of a command")
		}
		unit = path[len(path)-3].(*syntax.Stmt)
		if err := p.wordCommand(e, call, n, unit); err != nil {
			return p, err
		}
		path = path[:len(path)-2]
	}
	var before, after []step
	cur := syntax.Node(unit)
	hasAnd := false
	for i := len(path) - 2; i >= 0; i-- {
		switch n := path[i].(type) {
		case *syntax.Stmt:
			if len(n.Redirs) > 0 || n.Negated || n.Background || n.Coprocess {
				return p, errors.New("template: the command is inside a statement with redirections or flags")
			}
			cur = n
		case *syntax.BinaryCmd:
			if n.Op != syntax.AndStmt {
				return p, fmt.Errorf("template: the command is in a %s list; only && is understood", n.Op)
			}
			hasAnd = true
			if cur == n.Y {
				before = append([]step{span(n.X), {kind: StepRequire}}, before...)
			} else {
				after = append(after, step{kind: StepRequire}, span(n.Y))
			}
		case *syntax.Subshell:
			b, a := around(e.Text, n.Stmts, cur, outside)
			before, after = append(b, before...), append(after, a...)
		case *syntax.File:
			if hasAnd && len(n.Stmts) != 1 {
				return p, errors.New("template: an && chain around the command must be the whole text")
			}
			b, a := around(e.Text, n.Stmts, cur, outside)
			before, after = append(b, before...), append(after, a...)
		default:
			return p, fmt.Errorf("template: the command is inside a %T", n)
		}
	}
	p.steps = append(append(before, step{kind: StepCommand}), after...)
	return p, nil
}

// wordCommand checks the command's word slot: `eval CMD` runs it in the same shell, `exec SELF
// -c CMD` in a fresh one; `< /dev/null` is the only redirection understood.
func (p *plan) wordCommand(e *Envelope, call *syntax.CallExpr, w *syntax.Word, s *syntax.Stmt) error {
	args := call.Args
	name := func(i int) string { return interp.RemoveQuotesIn(args[i], e.Text) }
	switch {
	case len(call.Assigns) == 0 && len(args) == 2 && name(0) == "eval" && args[1] == w:
	case len(call.Assigns) == 0 && len(args) == 4 && name(0) == "exec" && name(1) == markSelf && name(2) == "-c" && args[3] == w:
		p.fresh = true
	default:
		return errors.New("template: the command's word must be `eval CMD` or `exec SELF -c CMD`")
	}
	for _, r := range s.Redirs {
		if r.Op != syntax.RdrIn || r.N != nil || interp.RemoveQuotesIn(r.Word, e.Text) != "/dev/null" {
			return errors.New("template: the command's only redirection may be < /dev/null")
		}
		p.stdinNull = true
	}
	if s.Negated || s.Background || s.Coprocess {
		return errors.New("template: the command's statement has flags")
	}
	return nil
}

// around returns the steps for the statements of list before and after cur.
func around(text string, list []*syntax.Stmt, cur syntax.Node, outside []string) (before, after []step) {
	k := -1
	for i, s := range list {
		if syntax.Node(s) == cur {
			k = i
		}
	}
	for i, s := range list {
		st := span(s)
		if t := strings.TrimSuffix(strings.TrimSpace(text[st.start:st.end]), ";"); i > k && isOutside(t, outside) {
			st = step{kind: StepOutside, argv: strings.Fields(t)}
		}
		switch {
		case i < k:
			before = append(before, st)
		case i > k:
			after = append(after, st)
		}
	}
	return before, after
}

func isOutside(text string, outside []string) bool {
	for _, o := range outside {
		if text == o {
			return true
		}
	}
	return false
}

func span(n syntax.Node) step {
	return step{kind: StepForward, start: int(n.Pos().Offset()), end: int(n.End().Offset())}
}

// pathTo returns the nodes from the root to the first node found, both included.
func pathTo(root syntax.Node, found func(syntax.Node) bool) []syntax.Node {
	var stack, path []syntax.Node
	syntax.Walk(root, func(n syntax.Node) bool {
		if path != nil {
			return false
		}
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		if found(n) {
			path = append([]syntax.Node(nil), stack...)
			return false
		}
		return true
	})
	return path
}
