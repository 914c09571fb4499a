package capability

import (
	"strings"
)

// renderText prints what the answer decided as the shell shows it (the MCP face renders the
// same values in capability/mcpface). Refusal lines are already on stderr: each was said as
// it was decided.
func (a *answer) renderText() {
	switch {
	case a.listing != nil:
		a.renderListing(a.listing)
	case a.page != nil:
		a.renderPage(a.page)
	case a.described != nil:
		a.renderDescribed(a.described)
	case a.outcome != nil:
		a.renderOutcome(a.outcome)
	}
}

// renderListing prints the listing, whole or index.
func (a *answer) renderListing(l *Listing) {
	switch {
	case len(l.Entries) == 0:
		a.printf("External capabilities for this turn: none (the offered providers list no capabilities).\n")
	case l.Mode == "whole":
		a.printf("External capabilities for this turn (%d, shown whole; invoke them directly):\n", len(l.Entries))
		for _, en := range l.Entries {
			a.printf("\n%s  %s%s\n", clean(en.ID), en.Class, writeNote(en))
			if d := strings.TrimSpace(clean(en.Description)); d != "" {
				a.printf("%s\n", indent(d, "  "))
			}
			a.printf("  arguments: %s\n", clean(string(en.Input)))
		}
	default:
		a.printf("External capabilities for this turn (%d, index; describe a capability before invoking it):\n", len(l.Entries))
		a.indexLines(l.Entries)
	}
	for _, u := range l.Unusable {
		a.printf("%s\n", u)
	}
	a.downLines(l.Down)
	if len(l.Entries) > 0 {
		a.printf("Usage: spear-capability describe <id>/<tool> [...]; spear-capability invoke <id>/<tool> '<JSON object>'; spear-capability search WORDS...\n")
	}
}

// indexLines prints one line per capability: id, class, the description's first line. Written
// piece by piece, not through printf: an index can have 10,000 lines.
func (a *answer) indexLines(entries []Entry) {
	n := 0
	for _, en := range entries {
		n += len(en.ID) + len(en.Class) + min(len(en.Description), indexLineMax) + 5
	}
	a.out.Grow(n)
	for _, en := range entries {
		a.out.WriteString(clean(en.ID))
		a.out.WriteString("  ")
		a.out.WriteString(en.Class)
		a.out.WriteString("  ")
		line, cut := firstLineCut(clean(en.Description), indexLineMax)
		a.out.WriteString(line)
		if cut {
			a.out.WriteString("…")
		}
		a.out.WriteByte('\n')
	}
}

func (a *answer) downLines(down []Down) {
	for _, d := range down {
		a.printf("%s\n", d.Line())
	}
}

// renderPage prints a search page: its lines as the index prints them, then the family's
// size and, when more match, the next page's command.
func (a *answer) renderPage(p *SearchPage) {
	words := clean(strings.Join(p.Words, " "))
	if len(p.Entries) == 0 {
		a.printf("No capability of this turn matches %q.\n", words)
	} else {
		a.printf("Capabilities matching %q (%d to %d of %d; describe one before invoking it unless the listing shows the family whole):\n",
			words, p.First+1, p.First+len(p.Entries), p.Matched)
		a.indexLines(p.Entries)
	}
	a.downLines(p.Down)
	a.printf("admitted: %d\n", p.Admitted)
	if p.Next != "" {
		a.printf("next page: spear-capability search --limit %d --cursor %s %s\n", p.Limit, p.Next, shellWords(p.Words))
	}
}

// shellWords quotes words for a command line the model can paste.
func shellWords(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		w = clean(w)
		if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./") == "" && w[0] != '-' {
			out[i] = w
		} else {
			out[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}

// renderDescribed prints each described capability, separated by blank lines.
func (a *answer) renderDescribed(ds []Described) {
	first := true
	for _, d := range ds {
		if d.Entry == nil {
			continue
		}
		if !first {
			a.printf("\n")
		}
		first = false
		a.describeOne(d)
	}
}

func (a *answer) describeOne(d Described) {
	en := d.Entry
	a.printf("%s  %s\n", clean(en.ID), en.Class)
	if en.Class == "WRITE" {
		a.printf("write policy: %s; under permission mode %s %s\n", en.WritePolicy, en.PermissionMode, gateMeaning(en.Gate))
	} else {
		a.printf("write policy: none needed (READ capabilities run without confirmation)\n")
	}
	if desc := strings.TrimSpace(shown(en.Description, describeMax)); desc != "" {
		a.printf("description:\n%s\n", indent(desc, "  "))
	} else {
		a.printf("description: none\n")
	}
	a.printf("input schema:\n%s\n", indent(shown(prettyJSON(en.Input), describeMax), "  "))
	if d.SchemaProblem != "" {
		a.printf("  (this schema cannot be used, so every invocation is refused: %s)\n", shown(d.SchemaProblem, schemaMax))
	}
	if en.Output != nil {
		a.printf("output schema:\n%s\n", indent(shown(prettyJSON(en.Output), describeMax), "  "))
	} else {
		a.printf("output schema: none\n")
	}
}

// renderOutcome prints a call's framed result and, when it was cut, a note saying so.
func (a *answer) renderOutcome(o *CallOutcome) {
	if !o.Framed {
		return
	}
	a.printf("%s", frame(o.Capability, o.AuditID, o.Body))
	if len(o.Body) < o.Full {
		a.printf("spear-capability: the result above was cut to %d of its %d bytes\n", len(o.Body), o.Full)
	}
}
