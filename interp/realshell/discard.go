package realshell

import (
	"iter"
	"strings"
)

// bash gives up the whole command it read from its script when arithmetic fails while it
// assigns an integer variable (`declare -i i; i=0#4`, `read i`) or evaluates an indexed
// array's subscript (`${a[0#4]}`, `a[1/0]=1`, `$((a[2#44]))`, `a=([1/0]=x)`, and through a
// name: `${!ref}`, a nameref, `x='a[$k]'; ((x))`), and when `suspend` has an argument: it
// unwinds everything up to its reading loop, the batch's eval included, and reads its next
// line. bash -s thus loses the rest of that line only; a batch would lose every unit after it.
// A unit that may do that ends its batch, so that such an error ends its own unit only, as in
// bash -s. The scan errs on the side of ending batches: it looks at quoted text too (a string
// that names a subscript or a declaration may be evaluated later), takes any option of
// declare, typeset or local that an expansion may give (`declare -$f`, `local "$@"`) for the
// integer or nameref attribute, and a sourced file for one that may do anything. Once a unit
// has done any of that, every later unit that may assign or evaluate arithmetic ends its batch
// too (after a nameref, every unit that expands anything); once a function or trap that may
// do so is defined (before or after), every later unit goes to the shell one per batch. Not
// more: each batch costs a line that bash reads a byte at a time.

// mayDiscard tells whether text may hold an error on which bash abandons its whole command
// (ends: the unit ends its batch), whether it defines a function or a trap (defines: later
// units may run its text), and whether it may make a nameref. A byte scan, no parser and nothing compiled at package
// initialisation (the -c fast path links this package).
func mayDiscard(text string) (ends, defines, nameref bool) {
	// Comment lines say nothing, and sending them alone would change history (docs/shell.md).
	if strings.IndexByte(text, '#') >= 0 {
		text = withoutCommentLines(text)
	}
	attr, nameref := declOptions(text)
	ends = attr || subscripts(text) || strings.Contains(text, "${!") || hasWord(text, "suspend") || sources(text)
	return ends, definesCode(text), nameref
}

// definesCode tells whether text may define a function (`name()`, `name ()`, `function`) or a
// trap, whose text later units run.
func definesCode(text string) bool {
	if hasWord(text, "function") || hasWord(text, "trap") {
		return true
	}
	for i := range occurrences(text, "()") {
		j := i - 1
		for j >= 0 && (text[j] == ' ' || text[j] == '\t') {
			j--
		}
		if j >= 0 && isNameByte(text[j]) {
			return true
		}
	}
	return false
}

// sources tells whether text may source a file (`source`, or `.` as a command word), whose
// text no scan has seen.
func sources(text string) bool {
	if hasWord(text, "source") {
		return true
	}
	for i := range occurrences(text, ".") {
		before := i == 0 || strings.IndexByte(" \t\n;&|({", text[i-1]) >= 0
		if before && (i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\t') {
			return true
		}
	}
	return false
}

// hasWord tells whether word occurs in text with no name byte on either side (an occurrence
// right after the one before counts as standing alone: the scan errs towards ending batches).
func hasWord(text, word string) bool {
	for i, alone := range startsAlone(text, word) {
		end := i + len(word)
		if alone && (end == len(text) || !isNameByte(text[end])) {
			return true
		}
	}
	return false
}

// occurrences yields where sub begins in text, each occurrence after the end of the one before.
func occurrences(text, sub string) iter.Seq[int] {
	return func(yield func(int) bool) {
		for at := 0; ; {
			i := strings.Index(text[at:], sub)
			if i < 0 || !yield(at+i) {
				return
			}
			at += i + len(sub)
		}
	}
}

// startsAlone yields each occurrence of sub in text and whether no name byte is before it
// (the start of text, or the end of the occurrence before, counts as none).
func startsAlone(text, sub string) iter.Seq2[int, bool] {
	return func(yield func(int, bool) bool) {
		prev := 0
		for i := range occurrences(text, sub) {
			if !yield(i, i == prev || !isNameByte(text[i-1])) {
				return
			}
			prev = i + len(sub)
		}
	}
}

func withoutCommentLines(text string) string {
	var code strings.Builder
	for line := range strings.SplitSeq(text, "\n") {
		if !strings.HasPrefix(strings.TrimLeft(line, " \t"), "#") {
			code.WriteString(line)
			code.WriteByte('\n')
		}
	}
	return code.String()
}

// mayEvaluate tells whether text may assign a variable (which may have the integer attribute)
// or evaluate arithmetic (which may reach a subscript through a variable, `x='a[$k]'; ((x))`):
// an `=`, a builtin that assigns a name it is given (`wait -p`, `{var}>`), `((`, `$[`, let,
// `[[` (-eq and the like evaluate their operands), a substring's offset (`${s:x}`).
func mayEvaluate(text string) bool {
	for _, s := range []string{"=", "read", "printf", "for", "mapfile", "getopts", "select", "((", "$[", "let",
		"[[", "wait", "}>", "}<"} {
		if strings.Contains(text, s) {
			return true
		}
	}
	return substring(text)
}

// substring tells whether text may expand a substring, `${name:offset}`: a `:` inside `${`.
func substring(text string) bool {
	for i := range occurrences(text, "${") {
		rest := text[i+2:]
		if end := strings.IndexByte(rest, '}'); end >= 0 && strings.IndexByte(rest[:end], ':') >= 0 {
			return true
		}
	}
	return false
}

// subscripts tells whether text may subscript an array (`name[`, but not `[@]` or `[*]`, which
// evaluate nothing) or assign a compound value (`name=(...)`, whose `[key]=` are evaluated).
func subscripts(text string) bool {
	for i := 1; i < len(text); i++ {
		switch text[i] {
		case '[':
			whole := strings.HasPrefix(text[i:], "[@]") || strings.HasPrefix(text[i:], "[*]")
			if isNameByte(text[i-1]) && !whole {
				return true
			}
		case '(':
			if text[i-1] == '=' {
				return true
			}
		}
	}
	return false
}

// declOptions tells whether text may give a variable an attribute through which an assignment
// or an expansion evaluates arithmetic (attr: declare, typeset or local with an option holding
// i or n, or with a word an expansion may turn into one), and whether that may be a nameref.
func declOptions(text string) (attr, nameref bool) {
	for _, name := range []string{"declare", "typeset", "local"} {
		for i, alone := range startsAlone(text, name) {
			rest := text[i+len(name):]
			if alone && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
				a, n := attributeOptions(rest)
				attr, nameref = attr || a, nameref || n
			}
		}
	}
	return attr, nameref
}

// attributeOptions looks at the arguments that start args (up to the end of the command): an
// option with the letter i or n, or a word that an expansion may make an option (it starts
// with an expansion or a quote, or is an option holding one).
func attributeOptions(args string) (attr, nameref bool) {
	if end := strings.IndexAny(args, ";&|\n"); end >= 0 {
		args = args[:end]
	}
	for _, word := range strings.Fields(args) {
		dynamic := strings.ContainsAny(word, "$`\"'\\")
		switch {
		case word[0] == '-' || word[0] == '+':
			if dynamic || strings.IndexByte(word, 'n') > 0 {
				attr, nameref = true, true
			} else if strings.IndexByte(word, 'i') > 0 {
				attr = true
			}
		case strings.IndexByte("$`\"'\\", word[0]) >= 0:
			attr, nameref = true, true
		}
	}
	return attr, nameref
}

func isNameByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}
