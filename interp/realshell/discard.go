package realshell

import "strings"

// bash gives up the whole command it read from its script when arithmetic fails while it
// assigns an integer variable (`declare -i i; i=0#4`, `read i`) or evaluates an indexed
// array's subscript (`${a[0#4]}`, `a[1/0]=1`, `$((a[2#44]))`, `a=([1/0]=x)`): it unwinds everything up to its
// reading loop, the batch's eval included, and reads its next line. bash -s thus loses the
// rest of that line only; a batch would lose every unit after it. A unit that may do that
// ends its batch, so that such an error ends its own unit only, as in bash -s. Once a unit has
// given a variable the integer attribute or subscripted an array, every later unit that may
// assign or evaluate arithmetic ends its batch too; once a unit defines a function doing
// either, every later unit goes to the shell one per batch. Not more: each batch costs a line
// that bash reads a byte at a time.

// mayDiscard tells whether text may hold an error on which bash abandons its whole command
// (ends: the unit ends its batch), and whether it may define a function that holds one
// (function: later units may fail so when they call it). A byte scan, no parser and nothing
// compiled at package initialisation (the -c fast path links this package).
func mayDiscard(text string) (ends, function bool) {
	// Comment lines say nothing, and sending them alone would change history (docs/shell.md).
	if strings.IndexByte(text, '#') >= 0 {
		text = withoutCommentLines(text)
	}
	integer, sub := integerAttribute(text), subscripts(text)
	function = strings.Contains(text, "()") || strings.Contains(text, "function")
	return integer || sub, (integer || sub) && function
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
// an `=`, a builtin that assigns a name it is given, `((`, `$[`, let.
func mayEvaluate(text string) bool {
	for _, s := range []string{"=", "read", "printf", "for", "mapfile", "getopts", "select", "((", "$[", "let"} {
		if strings.Contains(text, s) {
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

// integerAttribute tells whether text may give a variable the integer attribute: declare,
// typeset or local with an option holding i.
func integerAttribute(text string) bool {
	for _, name := range []string{"declare", "typeset", "local"} {
		for rest := text; ; {
			i := strings.Index(rest, name)
			if i < 0 {
				break
			}
			before := i == 0 || !isNameByte(rest[i-1])
			rest = rest[i+len(name):]
			if before && rest != "" && (rest[0] == ' ' || rest[0] == '\t') && integerOption(rest) {
				return true
			}
		}
	}
	return false
}

// integerOption tells whether the arguments that start args (up to the end of the command)
// hold an option with the letter i.
func integerOption(args string) bool {
	if end := strings.IndexAny(args, ";&|\n"); end >= 0 {
		args = args[:end]
	}
	for _, word := range strings.Fields(args) {
		if len(word) > 1 && word[0] == '-' && strings.IndexByte(word, 'i') > 0 {
			return true
		}
	}
	return false
}

func isNameByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}
