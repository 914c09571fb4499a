package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// row is one line of the table.
type row struct {
	id     string // the case's id (for -run)
	name   string // what is measured, against what
	a, b   string // spear-shell's median and the reference's, with units
	ratio  string
	target string
	holds  string // yes, no, or - for reported rows
	note   string // printed under the table
}

// judge fills a row's ratio and verdict from two medians and a ratio bound (0: reported).
func judge(name string, a, b float64, unit string, maxRatio float64) row {
	r := row{name: name, a: format(a, unit), b: format(b, unit), ratio: fmt.Sprintf("%.2f", a/b)}
	if maxRatio == 0 {
		r.target, r.holds = "reported", "-"
		return r
	}
	r.target = fmt.Sprintf("ratio <= %.2f", maxRatio)
	r.holds = yesNo(a/b <= maxRatio)
	return r
}

// judged is the row of two sides alternated in milliseconds (got, err from alternate): failed
// when they could not be measured, else judged against maxRatio.
func judged(name, target string, got [][]float64, err error, maxRatio float64) row {
	if err != nil {
		return failed(name, target, err)
	}
	return judge(name, median(got[0]), median(got[1]), "ms", maxRatio)
}

// failed is a row for a case that could not be measured: it never holds.
func failed(name, target string, err error) row {
	return row{name: name, a: "-", b: "-", ratio: "-", target: target, holds: "no",
		note: fmt.Sprintf("%s: %v", name, err)}
}

// skipped is a row for a case this machine cannot run (not a failure of spear-shell).
func skipped(name, target, why string) row {
	return row{name: name, a: "-", b: "-", ratio: "-", target: target, holds: "skipped",
		note: fmt.Sprintf("%s: skipped: %s", name, why)}
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

func format(v float64, unit string) string {
	switch {
	case unit == "MiB":
		return fmt.Sprintf("%.1f MiB", v)
	case v >= 100:
		return fmt.Sprintf("%.0f %s", v, unit)
	case v >= 10:
		return fmt.Sprintf("%.1f %s", v, unit)
	default:
		return fmt.Sprintf("%.3f %s", v, unit)
	}
}

// printTable writes the rows as a Markdown table (so docs/bench.md can quote it as is),
// then the notes.
func printTable(w io.Writer, rows []row) {
	head := []string{"case", "spear-shell median", "reference median", "ratio", "target", "holds"}
	cells := [][]string{head}
	for _, r := range rows {
		cells = append(cells, []string{r.name, r.a, r.b, r.ratio, r.target, r.holds})
	}
	width := make([]int, len(head))
	for _, line := range cells {
		for i, c := range line {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	put := func(line []string) {
		var b strings.Builder
		b.WriteString("|")
		for i, c := range line {
			fmt.Fprintf(&b, " %-*s |", width[i], c)
		}
		fmt.Fprintln(w, b.String())
	}
	put(cells[0])
	sep := make([]string, len(head))
	for i := range sep {
		sep[i] = strings.Repeat("-", width[i])
	}
	put(sep)
	for _, line := range cells[1:] {
		put(line)
	}
	var notes []string
	for _, r := range rows {
		if r.note != "" {
			notes = append(notes, r.note)
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range notes {
			fmt.Fprintln(w, "- "+n)
		}
	}
}

// median of xs (xs is reordered); NaN-free input assumed, 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
