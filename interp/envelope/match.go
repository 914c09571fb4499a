package envelope

import (
	"path/filepath"
	"reflect"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/spear-shell/spear-shell/interp"
)

// binding is what an input holds in one template slot.
type binding struct {
	slot       tslot
	start, end int            // the span in the input; for statements, set by the text check
	stmts      []*syntax.Stmt // the command's statements (a statement slot)
	value      string         // the word's value (word slots)
}

// matcher compares a template's tree with an input's, node for node.
type matcher struct {
	e        *Envelope
	src      string
	ctx      Context
	bindings []binding
}

// match returns the match of src (parsed as f) with e, or nil.
func (e *Envelope) match(f *syntax.File, src string, ctx Context) *Match {
	m := &matcher{e: e, src: src, ctx: ctx}
	if !m.node(reflect.ValueOf(e.file), reflect.ValueOf(f)) || len(m.bindings) != len(e.slots) {
		return nil
	}
	if !m.text() {
		return nil
	}
	out := &Match{Envelope: e, src: src, bindings: m.bindings}
	for _, b := range m.bindings {
		if b.slot.kind != markCommand {
			continue
		}
		out.Command = b.value
		if b.stmts != nil {
			out.Command = src[b.start:b.end]
			// Judged alone, the command must be the same statements it is in place.
			g, err := interp.Parse(out.Command)
			if err != nil || len(g.Stmts) != len(b.stmts) {
				return nil
			}
		}
	}
	return out
}

var (
	posType   = reflect.TypeFor[syntax.Pos]()
	wordType  = reflect.TypeFor[*syntax.Word]()
	stmtsType = reflect.TypeFor[[]*syntax.Stmt]()
)

// node compares template value t with input value in. Positions are not compared (the text
// check does that); slots bind what the input has in their place.
func (m *matcher) node(t, in reflect.Value) bool {
	if t.Type() != in.Type() {
		return false
	}
	switch t.Type() {
	case posType:
		return true
	case wordType:
		if !t.IsNil() && !in.IsNil() && t.CanInterface() {
			if kind := commandWord(t.Interface().(*syntax.Word)); kind != "" {
				return m.commandWord(t.Interface().(*syntax.Word), in.Interface().(*syntax.Word))
			}
		}
	case stmtsType:
		if t.CanInterface() {
			return m.stmts(t.Interface().([]*syntax.Stmt), in.Interface().([]*syntax.Stmt))
		}
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface:
		if t.IsNil() || in.IsNil() {
			return t.IsNil() == in.IsNil()
		}
		if t.Kind() == reflect.Interface && t.Elem().Type() != in.Elem().Type() {
			return false
		}
		var n any
		if t.CanInterface() {
			n = t.Interface()
		}
		switch n := n.(type) {
		case *syntax.Lit:
			if isMark(n.Value) {
				return m.literal(n, n.Value, in.Interface().(*syntax.Lit).Value, in.Interface().(syntax.Node))
			}
		case *syntax.SglQuoted:
			if isMark(n.Value) {
				q := in.Interface().(*syntax.SglQuoted)
				return !q.Dollar && !n.Dollar && m.literal(n, n.Value, q.Value, q)
			}
		}
		return m.node(t.Elem(), in.Elem())
	case reflect.Struct:
		// Comments after a statement slot that ends its list are the command's.
		skipLast := false
		if f := t.FieldByName("Stmts"); f.IsValid() && f.Type() == stmtsType && f.CanInterface() {
			if s := f.Interface().([]*syntax.Stmt); len(s) > 0 && stmtMark(s[len(s)-1]) {
				skipLast = true
			}
		}
		for i := range t.NumField() {
			if skipLast && t.Type().Field(i).Name == "Last" {
				continue
			}
			if !m.node(t.Field(i), in.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Slice:
		if t.Len() != in.Len() {
			return false
		}
		for i := range t.Len() {
			if !m.node(t.Index(i), in.Index(i)) {
				return false
			}
		}
		return true
	case reflect.String:
		return t.String() == in.String()
	case reflect.Bool:
		return t.Bool() == in.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return t.Int() == in.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return t.Uint() == in.Uint()
	}
	return false
}

// stmts compares statement lists; a statement slot takes one or more statements in its place.
func (m *matcher) stmts(t, in []*syntax.Stmt) bool {
	slot := -1
	for i, s := range t {
		if stmtMark(s) {
			slot = i
		}
	}
	if slot < 0 {
		if len(t) != len(in) {
			return false
		}
		for i := range t {
			if !m.node(reflect.ValueOf(t[i]), reflect.ValueOf(in[i])) {
				return false
			}
		}
		return true
	}
	after := len(t) - slot - 1
	if len(in) < len(t) {
		return false
	}
	for i := range slot {
		if !m.node(reflect.ValueOf(t[i]), reflect.ValueOf(in[i])) {
			return false
		}
	}
	mark := t[slot].Cmd.(*syntax.CallExpr).Args[0]
	m.bindings = append(m.bindings, binding{
		slot:  tslot{markCommand, int(mark.Pos().Offset()), int(mark.End().Offset())},
		stmts: in[slot : len(in)-after],
	})
	for i := range after {
		if !m.node(reflect.ValueOf(t[slot+1+i]), reflect.ValueOf(in[len(in)-after+i])) {
			return false
		}
	}
	return true
}

// stmtMark tells whether a template statement is the command's statement slot: the marker
// alone, with nothing around it.
func stmtMark(s *syntax.Stmt) bool {
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Assigns) > 0 || len(c.Args) != 1 || len(s.Redirs) > 0 || s.Negated || s.Background || s.Coprocess {
		return false
	}
	return commandWord(c.Args[0]) != ""
}

// commandWord is markCommand when the template word is the command's word slot.
func commandWord(w *syntax.Word) string {
	if len(w.Parts) != 1 {
		return ""
	}
	switch p := w.Parts[0].(type) {
	case *syntax.Lit:
		if p.Value == markCommand {
			return markCommand
		}
	case *syntax.SglQuoted:
		if p.Value == markCommand && !p.Dollar {
			return markCommand
		}
	}
	return ""
}

// commandWord binds the input word in the command's word slot: its value must be fixed, written
// as the terminals quote it: single quotes, plain characters, and double quotes around plain
// characters (a quote inside single quotes is written '"'"').
func (m *matcher) commandWord(t, in *syntax.Word) bool {
	var b strings.Builder
	for _, p := range in.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted:
			if p.Dollar {
				return false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return false
			}
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok || strings.ContainsAny(l.Value, "\\$`") {
					return false
				}
				b.WriteString(l.Value)
			}
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "\\*?[]{}~") {
				return false
			}
			b.WriteString(p.Value)
		default:
			return false
		}
	}
	m.bindings = append(m.bindings, binding{
		slot:  tslot{markCommand, int(t.Pos().Offset()), int(t.End().Offset())},
		start: int(in.Pos().Offset()), end: int(in.End().Offset()),
		value: b.String(),
	})
	return true
}

func isMark(v string) bool {
	return v == markWord || v == markFile || v == markDir || v == markSelf || v == markCommand
}

// literal binds a literal slot (not the command) whose input value is v.
func (m *matcher) literal(t syntax.Node, kind, v string, in syntax.Node) bool {
	ok := false
	switch kind {
	case markWord, markFile:
		ok = literalOf(v, "")
	case markDir:
		ok = literalOf(v, "@") && filepath.IsAbs(v)
	case markSelf:
		ok = literalOf(v, "") && filepath.IsAbs(v) && m.ctx.IsSelf != nil && m.ctx.IsSelf(v)
	}
	if ok {
		m.bindings = append(m.bindings, binding{
			slot:  tslot{kind, int(t.Pos().Offset()), int(t.End().Offset())},
			start: int(in.Pos().Offset()), end: int(in.End().Offset()), value: v,
		})
	}
	return ok
}

// literalOf tells whether v is a non-empty word of [A-Za-z0-9._/+-] and the bytes in extra.
func literalOf(v, extra string) bool {
	if v == "" {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("._/+-", c) >= 0, strings.IndexByte(extra, c) >= 0:
		default:
			return false
		}
	}
	return true
}

// text checks that the input's bytes outside the slots are the template's, and sets the span
// of a statement slot: what lies between the fixed text before it and the fixed text after.
func (m *matcher) text() bool {
	bs := m.bindings
	// Bindings come in tree order; the text is checked in source order.
	sortBindings(bs)
	tpl := m.e.Text
	tcur, icur := 0, 0
	for i := range bs {
		b := &bs[i]
		fixed := tpl[tcur:b.slot.start]
		if !strings.HasPrefix(m.src[icur:], fixed) {
			return false
		}
		icur += len(fixed)
		if b.stmts != nil {
			b.start = icur
			nextFixed := tpl[b.slot.end:]
			var limit int
			if i+1 < len(bs) {
				nextFixed = tpl[b.slot.end:bs[i+1].slot.start]
				if bs[i+1].stmts != nil {
					return false // two statement slots side by side cannot be told apart
				}
				limit = bs[i+1].start
			} else {
				limit = len(m.src)
			}
			b.end = limit - len(nextFixed)
			if b.end <= b.start || !within(b.stmts, b.start, b.end) {
				return false
			}
		} else if b.start != icur {
			return false
		}
		icur = b.end
		tcur = b.slot.end
	}
	return m.src[icur:] == tpl[tcur:]
}

// within tells whether statements lie in [start, end) (a statement's own ';' may end it).
func within(stmts []*syntax.Stmt, start, end int) bool {
	first, last := stmts[0], stmts[len(stmts)-1]
	lastEnd := int(last.End().Offset())
	if last.Semicolon.IsValid() {
		lastEnd = int(last.Semicolon.Offset())
	}
	return int(first.Pos().Offset()) >= start && lastEnd <= end
}

func sortBindings(bs []binding) {
	for i := 1; i < len(bs); i++ {
		for j := i; j > 0 && bs[j].slot.start < bs[j-1].slot.start; j-- {
			bs[j], bs[j-1] = bs[j-1], bs[j]
		}
	}
}
