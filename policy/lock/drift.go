package lock

import (
	"fmt"
	"slices"
	"strings"
)

// Current is one tool as a provider lists it now: its canonical definition, or why it has none.
type Current struct {
	Name       string
	Definition string // canonical; "" when Err
	Err        error  // the definition cannot be put in canonical form
}

// Drift is what changed in a provider's listing since its lock entry.
type Drift struct {
	Added   []string // listed now, not locked
	Removed []string // locked, not listed now
	Changed []Change // listed and locked, with another definition
}

// Change is one tool whose definition is not the locked one.
type Change struct {
	Name   string
	Locked string // the locked canonical text
	Now    string // the current one ("" when it cannot be put in canonical form)
	Err    error
}

// None reports that nothing drifted.
func (d Drift) None() bool { return len(d.Added)+len(d.Removed)+len(d.Changed) == 0 }

// Count is how many tools drifted.
func (d Drift) Count() int { return len(d.Added) + len(d.Removed) + len(d.Changed) }

// Compare says how now differs from the entry p, each list sorted by name.
func Compare(p *Provider, now []Current) Drift {
	var d Drift
	seen := map[string]bool{}
	for _, c := range now {
		seen[c.Name] = true
		lt := p.Tool(c.Name)
		switch {
		case lt == nil:
			d.Added = append(d.Added, c.Name)
		case c.Err != nil || c.Definition != lt.Definition:
			d.Changed = append(d.Changed, Change{Name: c.Name, Locked: lt.Definition, Now: c.Definition, Err: c.Err})
		}
	}
	for _, t := range p.Tools {
		if !seen[t.Name] {
			d.Removed = append(d.Removed, t.Name)
		}
	}
	slices.Sort(d.Added)
	slices.SortFunc(d.Changed, func(a, b Change) int { return strings.Compare(a.Name, b.Name) })
	return d
}

// diffContext is the unchanged lines shown around each change, as diff -u shows them.
const diffContext = 3

// UnifiedDiff is a line-based unified diff of a and b (diff -u's format, with "--- from" and
// "+++ to" headers), or "" when they are equal. It is meant for two pretty-printed definitions:
// a few hundred lines, where the quadratic longest-common-subsequence table costs nothing.
func UnifiedDiff(from, to, a, b string) string {
	if a == b {
		return ""
	}
	x, y := splitLines(a), splitLines(b)
	// lcs[i][j] is the length of the longest common subsequence of x[i:] and y[j:].
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type op struct {
		kind byte // ' ', '-', '+'
		line string
		ai   int // lines of a before this one
		bi   int
	}
	var ops []op
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			ops = append(ops, op{' ', x[i], i, j})
			i, j = i+1, j+1
		case i < len(x) && (j == len(y) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, op{'-', x[i], i, j}) // removals first, as diff -u shows a change
			i++
		default:
			ops = append(ops, op{'+', y[j], i, j})
			j++
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", from, to)
	for k := 0; k < len(ops); {
		if ops[k].kind == ' ' {
			k++
			continue
		}
		// A hunk: from diffContext lines before this change to diffContext lines after the
		// last change that lies within 2*diffContext unchanged lines of the one before it.
		start := max(0, k-diffContext)
		end := k
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*diffContext {
				end = min(end+diffContext, len(ops))
				break
			}
			end = run
		}
		na, nb := 0, 0
		for _, o := range ops[start:end] {
			if o.kind != '+' {
				na++
			}
			if o.kind != '-' {
				nb++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(ops[start].ai, na), hunkRange(ops[start].bi, nb))
		for _, o := range ops[start:end] {
			out.WriteByte(o.kind)
			out.WriteString(o.line)
			out.WriteByte('\n')
		}
		k = end
	}
	return out.String()
}

// hunkRange is diff -u's "start,count" (start 1-based; for an empty range the line before).
func hunkRange(before, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", before)
	case 1:
		return fmt.Sprintf("%d", before+1)
	}
	return fmt.Sprintf("%d,%d", before+1, n)
}

func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
