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
const Usage = "usage: spear-capability list | spear-capability search [--limit N] [--cursor C] WORDS... | spear-capability describe <id>/<tool>... | spear-capability invoke <id>/<tool> '<JSON object>'"

// Search limits (SPEC 2.6).
const (
	SearchDefaultLimit = 20
	SearchMaxLimit     = 50
)

// Invocation is one answered spear-capability command line.
type Invocation struct {
	Verb    string   // "list", "search", "describe" or "invoke"
	Targets []string // describe: one or more "<id>/<tool>"; invoke: exactly one
	Words   []string // search: the words, at least one
	Limit   int      // search: 1-50
	Cursor  string   // search: "" or a cursor as a page printed it
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
	case "search":
		if why := inv.searchForm(rest); why != "" {
			return nil, why + "; " + Usage
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

// searchForm reads `search [--limit N] [--cursor C] WORDS...`: each option at most once,
// before the words; N 1-50; C of a cursor's form (the answer checks it belongs to the query).
func (inv *Invocation) searchForm(rest []string) string {
	inv.Limit = SearchDefaultLimit
	seen := map[string]bool{}
	for len(rest) > 0 && strings.HasPrefix(rest[0], "--") {
		opt := rest[0]
		if opt == "--" {
			rest = rest[1:]
			break
		}
		if (opt != "--limit" && opt != "--cursor") || seen[opt] {
			return "search: " + strconv.Quote(opt) + " is not an option here (--limit N, --cursor C, each once, before the words)"
		}
		seen[opt] = true
		if len(rest) < 2 {
			return "search: " + opt + " needs a value"
		}
		v := rest[1]
		rest = rest[2:]
		if opt == "--limit" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > SearchMaxLimit || strconv.Itoa(n) != v {
				return "search: --limit must be a whole number from 1 to 50, not " + strconv.Quote(v)
			}
			inv.Limit = n
		} else {
			if !IsCursor(v) {
				return "search: " + strconv.Quote(v) + " is not a cursor; pass --cursor exactly as the previous page printed it"
			}
			inv.Cursor = v
		}
	}
	if len(rest) == 0 {
		return "search needs at least one word"
	}
	inv.Words = rest
	return ""
}

// IsCursor reports whether c has a search cursor's form: a position and eight hex digits,
// "20-3f9a1c0b".
func IsCursor(c string) bool {
	pos, check, ok := strings.Cut(c, "-")
	if !ok || len(pos) == 0 || len(pos) > 9 || pos[0] == '0' || len(check) != 8 {
		return false
	}
	for i := 0; i < len(pos); i++ {
		if pos[i] < '0' || pos[i] > '9' {
			return false
		}
	}
	for i := 0; i < len(check); i++ {
		if !(check[i] >= '0' && check[i] <= '9' || check[i] >= 'a' && check[i] <= 'f') {
			return false
		}
	}
	return true
}

// IsTarget reports whether t looks like <id>/<tool>: one slash, both sides set.
func IsTarget(t string) bool {
	id, tool, ok := strings.Cut(t, "/")
	return ok && id != "" && tool != "" && !strings.Contains(tool, "/")
}
