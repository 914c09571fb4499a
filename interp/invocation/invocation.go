// Package invocation is what a spear-capability command line asks for: the reserved name and
// whether a text may invoke it (Name, MayInvoke), the three forms and their argument JSON, and
// the parser-free recognition of the plain line agents almost always type. It is a leaf,
// layer 0 (docs/layout.md): it imports no package of ours and no shell parser, so that the
// front binary's -c fast path links it alone; package interp decides everything else.
package invocation

import (
	"strconv"
	"strings"
)

// CodeMalformed is the refusal code of an invocation that does not match its form.
const CodeMalformed = "malformed"

// Usage is the usage line shown in malformed refusals.
const Usage = "usage: spear-capability list | spear-capability describe <id>/<tool>... | spear-capability invoke <id>/<tool> '<JSON object>'"

// Invocation is one answered spear-capability command line.
type Invocation struct {
	Verb    string   // "list", "describe" or "invoke"
	Targets []string // describe: one or more "<id>/<tool>"; invoke: exactly one
	// Arguments is, for invoke, the JSON object text after quote removal (validated:
	// one object, no duplicate keys, no trailing data); the caller decodes it with
	// UseNumber.
	Arguments string
	Source    string // the invocation's source text
}

// Of checks the words after the name against the three forms.
func Of(words []string, source string) (*Invocation, string) {
	inv := &Invocation{Source: source}
	if len(words) == 0 {
		return nil, "missing subcommand; " + Usage
	}
	inv.Verb = words[0]
	rest := words[1:]
	switch inv.Verb {
	case "list":
		if len(rest) != 0 {
			return nil, "list takes no arguments; " + Usage
		}
	case "describe":
		if len(rest) == 0 {
			return nil, "describe needs at least one <id>/<tool>; " + Usage
		}
		for _, t := range rest {
			if !IsTarget(t) {
				return nil, strconv.Quote(t) + " is not of the form <id>/<tool>; " + Usage
			}
		}
		inv.Targets = rest
	case "invoke":
		if len(rest) != 2 {
			return nil, "invoke takes exactly two arguments, <id>/<tool> and one JSON object in single quotes; " + Usage
		}
		if !IsTarget(rest[0]) {
			return nil, strconv.Quote(rest[0]) + " is not of the form <id>/<tool>; " + Usage
		}
		if err := CheckObject(rest[1]); err != nil {
			return nil, "the arguments of invoke must be one JSON object: " + err.Error() + "; " + Usage
		}
		inv.Targets = rest[:1]
		inv.Arguments = rest[1]
	default:
		return nil, "unknown subcommand " + strconv.Quote(inv.Verb) + "; " + Usage
	}
	return inv, ""
}

// IsTarget reports whether t looks like <id>/<tool>: one slash, both sides set.
func IsTarget(t string) bool {
	id, tool, ok := strings.Cut(t, "/")
	return ok && id != "" && tool != "" && !strings.Contains(tool, "/")
}
