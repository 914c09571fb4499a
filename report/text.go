package report

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Text writes the report for a terminal: per turn a one-screen summary, then one line per
// row (calls, refusals, searches, descriptions, events) in aligned columns. Every string in
// it was cleaned when it was read; colour marks refusals and failures only when color is set.
func (r *Report) Text(w io.Writer, color bool) error {
	bw := bufio.NewWriter(w)
	p := &painter{color: color}
	fmt.Fprintf(bw, "%s %s: %d records, %d turns\n", p.bold("audit"), strings.Join(cleanAll(r.Files), ", "), r.Records, r.Turns())
	r.problemsText(bw, p, "the trail", r.Problems, r.More)
	if err := r.Each(func(t *Turn) error { return r.turnText(bw, p, t) }); err != nil {
		return err
	}
	return bw.Flush()
}

func cleanAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = excerpt(s, 200)
	}
	return out
}

type painter struct{ color bool }

func (p *painter) paint(code, s string) string {
	if !p.color || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}
func (p *painter) bold(s string) string { return p.paint("1", s) }
func (p *painter) bad(s string) string  { return p.paint("31", s) }
func (p *painter) dim(s string) string  { return p.paint("2", s) }

// decision colours a decision: ok plain, anything else red.
func (p *painter) decision(s string) string {
	if s == "ok" || strings.HasSuffix(s, " shown") || s == "" {
		return s
	}
	return p.bad(s)
}

func (r *Report) problemsText(w io.Writer, p *painter, whose string, ps []Problem, more int) {
	if len(ps) == 0 {
		return
	}
	fmt.Fprintf(w, "%s in %s: %d\n", p.bad("does not add up"), whose, len(ps)+more)
	for _, q := range ps {
		fmt.Fprintf(w, "  %s  %s\n", q.At, q.What)
	}
	if more > 0 {
		fmt.Fprintf(w, "  and %d more\n", more)
	}
}

const stamp = "15:04:05.000"

func (r *Report) turnText(w *bufio.Writer, p *painter, t *Turn) error {
	fmt.Fprintf(w, "\n%s %s  session %s\n", p.bold("turn"), p.bold(excerpt(t.Turn, 128)), orNone(excerpt(t.Session, 128)))
	span := t.Last.Sub(t.First).Round(time.Millisecond)
	ended := "not ended"
	if t.Ended != "" {
		ended = "ended: " + t.Ended
	}
	fmt.Fprintf(w, "  ran        %s to %s UTC (%s), %s\n", t.First.Format("2006-01-02 "+stamp), t.Last.Format(stamp), span, ended)
	isolated := "unknown (no turn_started)"
	if t.Isolated != nil {
		isolated = map[bool]string{true: "yes", false: "no"}[*t.Isolated]
		if t.Isolation != "" {
			isolated += " (" + t.Isolation + ")"
		}
	}
	fmt.Fprintf(w, "  isolated   %s\n", isolated)
	if t.Task != "" || t.Project != "" {
		fmt.Fprintf(w, "  task       %s  project %s  permission %s\n", orNone(t.Task), orNone(t.Project), orNone(t.Permission))
	}
	family := "not selected"
	if t.FamilyMode != "" {
		family = fmt.Sprintf("%d capabilities from %d providers, shown %s", t.FamilyCount, t.Offered, t.FamilyMode)
	}
	fmt.Fprintf(w, "  family     %s; listed %s\n", family, counts(t.Exposed, "never"))
	fmt.Fprintf(w, "  asked      %d searches, %d descriptions, %d preflights\n", t.Searches, t.Described, t.Preflights)
	fmt.Fprintf(w, "  calls      %d sent, %d refused before sending; decisions: %s\n", t.Calls, t.Refused, counts(t.Decisions, "none"))
	if len(t.Keeper) > 0 || len(t.Other) > 0 {
		fmt.Fprintf(w, "  events     %s\n", counts(mergeCounts(t.Keeper, t.Other), "none"))
	}
	if len(t.Providers) > 0 {
		tw := newTable("provider", "offered", "calls", "failed", "refused", "failures", "broker")
		for _, pr := range t.Providers {
			offered := "no"
			switch {
			case pr.Rejected:
				offered = "rejected"
			case pr.Offered:
				offered = "yes"
			}
			tw.add(pr.ID, offered, itoa(pr.Calls), itoa(pr.Failed), itoa(pr.Refused), itoa(pr.Failures), itoa(pr.Broker))
		}
		tw.write(w, "  ", nil)
	}
	for _, b := range r.BrokerFor(t) {
		line := fmt.Sprintf("  broker     %s %s %s (%s) %s", b.Time.Format(stamp), b.Event, b.Provider, orNone(b.ShareKey), b.Detail)
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	if len(t.Writes) > 0 {
		fmt.Fprintf(w, "  writes\n")
		tw := newTable("capability", "decision", "approval", "at")
		for _, wr := range t.Writes {
			tw.add(wr.Capability, wr.Decision, orNone(wr.Approval), wr.At)
		}
		tw.write(w, "    ", func(col int, s string) string {
			if col == 1 {
				return p.decision(s)
			}
			return s
		})
		if t.WritesMore > 0 {
			fmt.Fprintf(w, "    and %d more\n", t.WritesMore)
		}
	}
	r.problemsText(w, p, "this turn", t.Problems, t.More)
	if t.nrows == 0 {
		return nil
	}
	// The rows: widths are found in one reading of the spool and the lines written in a
	// second, so that columns align however many rows there are.
	cols := []string{"time", "kind", "capability", "class", "decision", "ms", "audit id", "arguments / detail"}
	widths := make([]int, len(cols))
	for i, c := range cols {
		widths[i] = utf8.RuneCountInString(c)
	}
	cells := func(row Row) []string {
		ms := ""
		if row.HasOutcome {
			ms = fmt.Sprintf("%.1f", row.DurationMS)
		}
		kind := row.Kind
		if row.Face != "" {
			kind += "/" + row.Face
		}
		what := row.Capability
		if what == "" {
			what = row.Provider
		}
		detail := row.Args
		if row.Detail != "" {
			if detail != "" {
				detail += "  "
			}
			detail += row.Detail
		}
		if row.Approval != "" && row.Approval != "not-needed" {
			detail = "[" + row.Approval + "] " + detail
		}
		return []string{row.Time.Format(stamp), kind, what, row.Class, row.Decision, ms, row.AuditID, detail}
	}
	if err := r.Rows(t, func(row Row) error {
		for i, c := range cells(row)[:len(cols)-1] {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
		return nil
	}); err != nil {
		return err
	}
	w.WriteString("\n")
	writeCells(w, "  ", cols, widths, func(_ int, s string) string { return p.dim(s) })
	return r.Rows(t, func(row Row) error {
		writeCells(w, "  ", cells(row), widths, func(col int, s string) string {
			if col == 4 {
				return p.decision(s)
			}
			return s
		})
		return nil
	})
}

func writeCells(w io.Writer, indent string, cells []string, widths []int, paint func(int, string) string) {
	var b strings.Builder
	b.WriteString(indent)
	for i, c := range cells {
		pad := 0
		if i < len(cells)-1 {
			pad = widths[i] - utf8.RuneCountInString(c) + 2
		}
		if i == 5 { // numbers align right
			b.WriteString(strings.Repeat(" ", max(pad-2, 0)))
			b.WriteString(paint(i, c))
			b.WriteString("  ")
			continue
		}
		b.WriteString(paint(i, c))
		if pad > 0 {
			b.WriteString(strings.Repeat(" ", pad))
		}
	}
	io.WriteString(w, strings.TrimRight(b.String(), " ")+"\n")
}

// table is a small aligned table held in memory (a turn's providers, its writes: bounded).
type table struct {
	rows [][]string
}

func newTable(head ...string) *table { return &table{rows: [][]string{head}} }
func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }
func (t *table) write(w io.Writer, indent string, paint func(int, string) string) {
	widths := make([]int, len(t.rows[0]))
	for _, r := range t.rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	if paint == nil {
		paint = func(_ int, s string) string { return s }
	}
	for _, r := range t.rows {
		var b strings.Builder
		b.WriteString(indent)
		for i, c := range r {
			b.WriteString(paint(i, c))
			b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+2))
		}
		io.WriteString(w, strings.TrimRight(b.String(), " ")+"\n")
	}
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func itoa(n int) string { return fmt.Sprint(n) }

// counts is "a 2, b 1" in key order, or none.
func counts(m map[string]int, none string) string {
	if len(m) == 0 {
		return none
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func mergeCounts(a, b map[string]int) map[string]int {
	m := maps.Clone(a)
	maps.Copy(m, b)
	return m
}
