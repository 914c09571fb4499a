package report

import (
	"bufio"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// The page is built with html/template: its contextual escaping makes every string a
// provider or an agent wrote text, whatever it holds (a <script>, an attribute, a URL), in the
// table and in the SVG alike. The page loads nothing, runs no script and forbids both (its
// Content-Security-Policy).
//
//go:embed page.html.tmpl
var pageText string

// page is parsed on first use: every spear-shell process links this package, and parsing
// the template at start cost each -c answer about 0.3 ms (GODEBUG=inittrace=1).
var page = sync.OnceValue(parsePage)

func parsePage() *template.Template {
	return template.Must(template.New("page").Funcs(template.FuncMap{
		"counts": func(m map[string]int) []kv {
			var out []kv
			for _, k := range slices.Sorted(maps.Keys(m)) {
				out = append(out, kv{k, m[k]})
			}
			return out
		},
		"orNone":   orNone,
		"stamp":    func(t time.Time) string { return t.Format("2006-01-02 " + stamp) },
		"clock":    func(t time.Time) string { return t.Format(stamp) },
		"ms":       func(f float64) string { return fmt.Sprintf("%.1f", f) },
		"lanetext": func(i int) int { return axisH + laneH*i + 16 },
		"laneline": func(i int) int { return axisH + laneH*(i+1) },
	}).Parse(pageText))
}

type kv struct {
	K string
	V int
}

// Timeline geometry, in SVG user units (pixels at 100%).
const (
	laneLabel = 170
	plotWidth = 900
	laneH     = 24
	axisH     = 22
)

type turnView struct {
	*Turn
	Index   int
	Span    string
	Lanes   []string
	Height  int
	Width   int
	Ticks   []tick
	Broker  []mark
	Brokers []BrokerEvent
	IsoText string
}

type tick struct {
	X     float64
	Label string
}

// mark is one call, refusal or event on a lane.
type mark struct {
	Shape         string // bar, dot, diamond, square, tick
	Class         string
	X, Y, W, H    float64
	CX, CY        float64
	Points, Title string
}

// writePage writes the report as one page to name, 0600: a new file in name's directory,
// renamed over name when it is complete. A symlink, FIFO or hard link found at name (planted
// where the operator writes a report, a workspace say) is replaced, never written through.
func writePage(name string, r *Report) error {
	f, err := os.CreateTemp(filepath.Dir(name), ".report-*.html") // created 0600
	if err != nil {
		return err
	}
	err = r.HTML(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// HTML writes the report as one self-contained page: per turn its summary, a timeline (one
// lane per provider, each call a bar of its duration, refusals and failures marked, the
// keeper's and the broker's events on their lanes) and the tables.
func (r *Report) HTML(w io.Writer) error {
	bw := bufio.NewWriter(w)
	if err := page().ExecuteTemplate(bw, "head", r); err != nil {
		return err
	}
	i := 0
	if err := r.Each(func(t *Turn) error { i++; return r.turnHTML(bw, i-1, t) }); err != nil {
		return err
	}
	if err := page().ExecuteTemplate(bw, "foot", r); err != nil {
		return err
	}
	return bw.Flush()
}

func (r *Report) turnHTML(w io.Writer, i int, t *Turn) error {
	v := &turnView{Turn: t, Index: i + 1, Span: t.Last.Sub(t.First).Round(time.Millisecond).String()}
	v.IsoText = "unknown (no turn_started)"
	if t.Isolated != nil {
		v.IsoText = map[bool]string{true: "yes", false: "no"}[*t.Isolated]
		if t.Isolation != "" {
			v.IsoText += " (" + t.Isolation + ")"
		}
	}
	v.Lanes = []string{"turn"}
	lane := map[string]int{}
	for _, p := range t.Providers {
		lane[p.ID] = len(v.Lanes)
		v.Lanes = append(v.Lanes, p.ID)
	}
	v.Width = laneLabel + plotWidth + 60
	v.Height = axisH + laneH*len(v.Lanes) + 6
	span := t.Last.Sub(t.First)
	if span <= 0 {
		span = time.Millisecond
	}
	xOf := func(at time.Time) float64 {
		return laneLabel + float64(at.Sub(t.First))/float64(span)*plotWidth
	}
	for k := 0; k <= 4; k++ {
		at := t.First.Add(span * time.Duration(k) / 4)
		v.Ticks = append(v.Ticks, tick{X: xOf(at), Label: "+" + at.Sub(t.First).Round(time.Millisecond).String()})
	}
	yOf := func(provider string) float64 {
		return float64(axisH + laneH*lane[provider])
	}
	v.Brokers = r.BrokerFor(t)
	for _, b := range v.Brokers {
		y := yOf(b.Provider)
		v.Broker = append(v.Broker, mark{Shape: "square", Class: "broker", X: xOf(b.Time) - 4, Y: y + 8, W: 8, H: 8,
			Title: fmt.Sprintf("broker %s %s (%s) %s %s", b.Event, b.Provider, orNone(b.ShareKey), b.Detail, b.At)})
	}
	if err := page().ExecuteTemplate(w, "turn", v); err != nil {
		return err
	}
	// The timeline's marks, one reading of the spool; the tables' rows, a second.
	if err := r.Rows(t, func(row Row) error {
		return page().ExecuteTemplate(w, "mark", markOf(row, xOf, yOf(row.Provider), span))
	}); err != nil {
		return err
	}
	if err := page().ExecuteTemplate(w, "turnTable", v); err != nil {
		return err
	}
	if err := r.Rows(t, func(row Row) error { return page().ExecuteTemplate(w, "row", row) }); err != nil {
		return err
	}
	return page().ExecuteTemplate(w, "turnEnd", v)
}

func markOf(row Row, xOf func(time.Time) float64, y float64, span time.Duration) mark {
	x := xOf(row.Time)
	title := fmt.Sprintf("%s %s %s %s", row.Kind, orNone(row.Capability), orNone(row.Decision), row.At)
	switch row.Kind {
	case "call":
		w := row.DurationMS / (float64(span) / float64(time.Millisecond)) * plotWidth
		class := "ok"
		switch {
		case row.Decision == "no-outcome":
			class, w = "noout", laneLabel+plotWidth-x
		case row.Decision != "ok":
			class = "fail"
		}
		title = fmt.Sprintf("%s %s %.1f ms %s %s", row.Capability, row.Decision, row.DurationMS, row.AuditID, row.At)
		return mark{Shape: "bar", Class: class, X: x, Y: y + 5, W: max(w, 2), H: laneH - 10, Title: title}
	case "refused":
		return mark{Shape: "dot", Class: "refused", CX: x, CY: y + laneH/2, Title: title}
	case "failure":
		c := y + laneH/2
		return mark{Shape: "diamond", Class: "failure", Title: title + " " + row.Detail,
			Points: fmt.Sprintf("%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f", x, c-6, x+6, c, x, c+6, x-6, c)}
	case "keeper":
		return mark{Shape: "square", Class: "keeper", X: x - 4, Y: y + 8, W: 8, H: 8, Title: title + " " + row.Detail}
	}
	return mark{Shape: "tick", Class: row.Kind, X: x - 1, Y: y + 4, W: 2, H: laneH - 8, Title: title}
}
