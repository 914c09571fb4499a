package envelope

// Envelopes (SPEC 3, 11): the fixed text an agent terminal wraps around the model's command
// before it hands it to the shell. They are data: envelopes/<terminal>.txtar holds each
// terminal's texts, one file per envelope, with slot markers where the terminal puts variable
// parts. A template is parsed once; an input matches it when its parse is the template's node
// for node (slots matching what their kind allows) and its bytes outside the slots are the
// template's bytes. What runs, and in which order, follows from where the command's slot sits in
// the template's tree (plan.go). docs/recognition.md states the rules.

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/rogpeppe/go-internal/txtar"
	"mvdan.cc/sh/v3/syntax"

	"github.com/spear-shell/spear-shell/interp"
)

// Slot markers, as written in a template.
const (
	// markWord is a literal word of [A-Za-z0-9._/+-] chosen by the terminal (a snapshot's path,
	// a temporary file's name), unquoted or single-quoted as the template writes it.
	markWord = "__SPEAR_WORD__"
	// markFile is a word as markWord that names a file the envelope writes for the terminal to
	// read (Claude Code's cwd file, Gemini's bgpids file): the boundary binds it in at its host
	// path, alone (SPEC 9).
	markFile = "__SPEAR_FILE__"
	// markDir is an absolute literal directory of [A-Za-z0-9._/+@-]: a terminal's own install
	// directory (npm puts scoped packages under @scope).
	markDir = "__SPEAR_DIR__"
	// markSelf is an absolute literal path that must resolve to this binary (not the stub).
	markSelf = "__SPEAR_SELF__"
	// markCommand is the model's command: as a statement of its own, the statements in its
	// place; as a word, a word whose value is fixed, quoted as the terminals quote (single
	// quotes, plain characters, double quotes around plain characters).
	markCommand = "__SPEAR_COMMAND__"
)

// Envelope is one template: the exact text a terminal version sends, with slots.
type Envelope struct {
	Terminal string // as the manifest names it
	Version  string // the terminal's version the text comes from
	Variant  string // which of the version's texts
	Text     string
	// LoginOnly: the terminal sends this form only with bash's -l option.
	LoginOnly bool

	file  *syntax.File
	slots []tslot // in source order
	plan  plan
}

// tslot is a slot of a template: its kind and its span in the template text.
type tslot struct {
	kind       string // one of the markers
	start, end int
}

//go:embed envelopes/*.txtar
var envelopeFiles embed.FS

var envelopes = sync.OnceValues(loadEnvelopes)

// Terminals lists the terminals that have envelopes.
func Terminals() []string {
	all, err := envelopes()
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range all {
		if !slices.Contains(out, e.Terminal) {
			out = append(out, e.Terminal)
		}
	}
	return out
}

// Envelopes returns the envelopes of terminal, in the order they are tried.
func Envelopes(terminal string) []*Envelope {
	list, err := templatesOf(terminal).compiled()
	if err != nil {
		return nil
	}
	return list
}

// templates is one terminal's envelopes, read and parsed at the first need: a session under one
// terminal never parses another's (Codex's prelude alone is 38 KB, about 2 ms of parsing).
type templates struct {
	ends     func() []envelopeEnd // ends.go
	compiled func() ([]*Envelope, error)
}

var byTerminal sync.Map // terminal -> *templates

func templatesOf(terminal string) *templates {
	if t, ok := byTerminal.Load(terminal); ok {
		return t.(*templates)
	}
	t := &templates{
		ends: sync.OnceValue(func() []envelopeEnd { return terminalEnds(terminal) }),
		compiled: sync.OnceValues(func() ([]*Envelope, error) {
			list, outside, err := readTerminal(terminal)
			if err != nil {
				return nil, err
			}
			for _, e := range list {
				if err := e.compile(outside); err != nil {
					return nil, fmt.Errorf("envelope %s %s/%s: %w", e.Terminal, e.Version, e.Variant, err)
				}
			}
			return list, nil
		}),
	}
	actual, _ := byTerminal.LoadOrStore(terminal, t)
	return actual.(*templates)
}

// loadEnvelopes parses every embedded template.
func loadEnvelopes() ([]*Envelope, error) {
	names, err := envelopeFiles.ReadDir("envelopes")
	if err != nil {
		return nil, err
	}
	var all []*Envelope
	for _, n := range names {
		list, err := templatesOf(strings.TrimSuffix(n.Name(), ".txtar")).compiled()
		if err != nil {
			return nil, err
		}
		all = append(all, list...)
	}
	return all, nil
}

// readTerminal reads terminal's templates' text, not yet parsed, and its outside commands;
// none for a terminal without envelopes. An archive's comment may hold lines "login-only:
// <version>/<variant>" (the form is sent only with -l) and "outside: <command>" (a statement
// after the command that spear-shell runs itself, outside the boundary).
func readTerminal(terminal string) (list []*Envelope, outside []string, err error) {
	data, err := envelopeFiles.ReadFile(path.Join("envelopes", terminal+".txtar"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	ar := txtar.Parse(data)
	var loginOnly []string
	for line := range strings.SplitSeq(string(ar.Comment), "\n") {
		if v, ok := strings.CutPrefix(line, "login-only: "); ok {
			loginOnly = append(loginOnly, v)
		}
		if v, ok := strings.CutPrefix(line, "outside: "); ok {
			outside = append(outside, v)
		}
	}
	for _, f := range ar.Files {
		version, variant, _ := strings.Cut(f.Name, "/")
		list = append(list, &Envelope{
			Terminal: terminal, Version: version, Variant: variant,
			// txtar ends every file with a newline; the terminals' texts mostly do not.
			Text:      strings.TrimSuffix(string(f.Data), "\n"),
			LoginOnly: slices.Contains(loginOnly, f.Name),
		})
	}
	return list, outside, nil
}

// compile parses the template, finds its slots and works out its plan.
func (e *Envelope) compile(outside []string) error {
	f, err := interp.Parse(e.Text)
	if err != nil {
		return err
	}
	e.file = f
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Lit:
			e.addSlot(n.Value, n)
		case *syntax.SglQuoted:
			e.addSlot(n.Value, n)
		}
		return true
	})
	slices.SortFunc(e.slots, func(a, b tslot) int { return a.start - b.start })
	n := 0
	for _, s := range e.slots {
		if s.kind == markCommand {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("template: %d command slots, want 1", n)
	}
	e.plan, err = planOf(e, outside)
	return err
}

func (e *Envelope) addSlot(value string, n syntax.Node) {
	switch value {
	case markWord, markFile, markDir, markSelf, markCommand:
		e.slots = append(e.slots, tslot{value, int(n.Pos().Offset()), int(n.End().Offset())})
	}
}

// Plain tells whether the envelope is the command alone (Codex's -lc, a command typed without
// Terminal-Bench's suffix): matching it only says the text is no unknown envelope; it is judged
// and run as any input.
func (e *Envelope) Plain() bool { return e.Text == markCommand }

// Context is what a match needs to know besides the text.
type Context struct {
	Login bool // bash's -l option was given
	// IsSelf tells whether an absolute path resolves to this binary (and is not the stub).
	IsSelf func(path string) bool
}

// Match is an input found to be one of a terminal's envelopes.
type Match struct {
	Envelope *Envelope
	// Command is the model's command, to be judged as a whole input.
	Command string

	src      string
	bindings []binding // in source order, one per template slot
}

// MatchEnvelope finds which of terminal's envelopes src is, with the model's command in its
// slot; nil when it is none of them (or the input cannot be parsed safely).
func MatchEnvelope(terminal, src string, ctx Context) *Match {
	var list []*Envelope
	for _, e := range Envelopes(terminal) {
		if (!e.LoginOnly || ctx.Login) && e.textMayMatch(src) {
			list = append(list, e)
		}
	}
	if len(list) == 0 || !interp.ParsesAsBash(src) {
		return nil
	}
	f, err := interp.Parse(src)
	if err != nil {
		return nil
	}
	for _, e := range list {
		if m := e.match(f, src, ctx); m != nil {
			return m
		}
	}
	return nil
}

// MayBeEnvelope is a cheap test for input without the name: whether it may be one of
// terminal's envelopes with text of their own (a form that is the command alone is not counted).
// Input that cannot have such an envelope's ends is told apart without parsing the templates.
func MayBeEnvelope(terminal, src string) bool {
	return mayHaveEnds(terminal, src) && ownTextMayMatch(terminal, src)
}

// ownTextMayMatch tells whether src may be one of terminal's envelopes with text of its own, by
// the parsed templates.
func ownTextMayMatch(terminal, src string) bool {
	for _, e := range Envelopes(terminal) {
		if !e.Plain() && e.textMayMatch(src) {
			return true
		}
	}
	return false
}

// textMayMatch is a cheap test before the parse: src starts with the template's text before
// its first slot, ends with the text after its last, and holds the texts between in order.
func (e *Envelope) textMayMatch(src string) bool {
	first, last := e.slots[0], e.slots[len(e.slots)-1]
	head, tail := e.Text[:first.start], e.Text[last.end:]
	if len(src) < len(head)+len(tail) || !strings.HasPrefix(src, head) || !strings.HasSuffix(src, tail) {
		return false
	}
	rest := src[len(head) : len(src)-len(tail)]
	for i := 1; i < len(e.slots); i++ {
		mid := e.Text[e.slots[i-1].end:e.slots[i].start]
		j := strings.Index(rest, mid)
		if j < 0 {
			return false
		}
		rest = rest[j+len(mid):]
	}
	return true
}

// Head is the start of an unmatched string for the audit: at most n bytes, cut at a rune
// boundary, with control characters other than newline and tab and invalid UTF-8 shown as
// U+FFFD (the audit redacts and bounds it again).
func Head(src string, n int) string {
	if len(src) > n {
		for n > 0 && src[n]&0xC0 == 0x80 {
			n--
		}
		src = src[:n]
	}
	return strings.Map(func(r rune) rune {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return utf8.RuneError
		}
		return r
	}, strings.ToValidUTF8(src, string(utf8.RuneError)))
}
