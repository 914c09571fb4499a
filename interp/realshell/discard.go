package realshell

import "strings"

// bash gives up the whole command it read from its script when arithmetic fails while it
// assigns an integer variable (`declare -i i; i=0#4`, `read i`) or evaluates an indexed
// array's subscript (`${a[0#4]}`, `a[1/0]=1`, `$((a[2#44]))`, `a=([1/0]=x)`): it unwinds everything up to its
// reading loop, the batch's eval included, and reads its next line. bash -s thus loses the
// rest of that line only; a batch would lose every unit after it. Once a unit may do that,
// it and every later unit (a function it defines may fail so later) go to the shell one per
// batch, so that such an error ends its own unit only, as in bash -s.

// mayDiscard tells whether text may subscript an array (`name[`, a compound assignment
// `name=(...)`, whose `[key]=` subscripts are evaluated so) or give a variable the integer attribute (declare, typeset or local with an option holding i). A byte scan, no
// parser and nothing compiled at package initialisation (the -c fast path links this package).
func mayDiscard(text string) bool {
	for i := 1; i < len(text); i++ {
		if text[i] == '[' && isNameByte(text[i-1]) || text[i] == '(' && text[i-1] == '=' {
			return true
		}
	}
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
