// Package report reads an audit trail and says what happened per turn (SPEC 16): one value,
// decided as the trail streams by, rendered as text for a terminal or as one self-contained
// HTML page. It imports only audit (for the field and event names) and textclean; nothing of
// capability or interp.
package report

import (
	"container/list"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spear-shell/spear-shell/audit"
)

// Filter selects the turns a report covers. Zero values select everything.
type Filter struct {
	Session, Turn string
	Since         time.Time // turns with a record at or after it
}

// Bounds: what one report holds in memory whatever the trail's size. Past them it counts.
const (
	maxProblems  = 200     // listed per turn, and for the trail; the rest counted
	maxProviders = 64      // lanes per turn; later providers share the last lane
	maxCodes     = 64      // distinct decision codes per turn
	maxPending   = 1 << 16 // intents waiting for their outcome
	maxBroker    = 10000   // the broker's own records kept for the lanes
	argsExcerpt  = 160     // bytes of a call's arguments shown
	textExcerpt  = 200     // bytes of a reason, the words of a search
	outOfOrder   = time.Second
)

// Report is what a trail says, per turn, with what does not add up.
type Report struct {
	Files     []string
	Records   int64
	slots     []*slot   // the selected turns, in the order they first appear
	Problems  []Problem // the trail's own: lines that are not records
	More      int       // problems of the trail not listed
	Broker    []BrokerEvent
	Generated time.Time

	spool *spool
}

// Problem is something that does not add up, at the line that shows it.
type Problem struct {
	At   string // file:line
	What string
}

// Turn is one turn's summary; its rows (calls, refusals, searches, descriptions, events)
// are kept in the report's spool and read back with Rows.
type Turn struct {
	Session, Turn                        string
	First, Last                          time.Time
	Started                              int // turn_started records
	Isolated                             *bool
	Isolation                            string
	Task, Project, Workspace, Permission string
	Ended                                string // turn_ended's reason, "" while the turn has not ended
	FamilyMode                           string // whole or index
	FamilyCount                          int
	Offered                              int
	Exposed                              map[string]int // listings by via (context, list, mcp...)
	Searches, Described                  int
	Preflights                           int
	Calls                                int            // invocations sent (intent records), refused ones apart
	Refused                              int            // capability_refused records
	Decisions                            map[string]int // every call's and refusal's decision, by code
	Providers                            []*Provider
	Writes                               []Write
	WritesMore                           int
	Keeper                               map[string]int // keeper_started, keeper_ended, keeper_unavailable
	Other                                map[string]int // the other events, by name
	Problems                             []Problem
	More                                 int

	firstAt   string
	maxTime   time.Time
	maxTimeAt string
	rows      *stream
	nrows     int
	settled   bool // settle ran
}

// Provider is one provider as the turn met it.
type Provider struct {
	ID                     string
	Registered, Rejected   bool
	Offered                bool
	Calls, Refused, Failed int // calls made, refusals naming it, calls that did not end ok
	Failures               int // provider_failed records of the turn (the keeper's among them)
	Broker                 int // broker records placed on this lane
}

// Write is one WRITE capability's call or refusal, with who let it through.
type Write struct {
	At, Capability, Decision, Approval string
}

// Row is one line of a turn's table, and one mark on its timeline.
type Row struct {
	Kind       string    `json:"k"` // call, refused, search, describe, preflight, failure, keeper, event
	At         string    `json:"at"`
	Time       time.Time `json:"t"`
	Face       string    `json:"f,omitempty"`
	Provider   string    `json:"p,omitempty"`
	Capability string    `json:"c,omitempty"`
	Class      string    `json:"cl,omitempty"`
	Decision   string    `json:"d,omitempty"`
	DurationMS float64   `json:"ms,omitempty"`
	HasOutcome bool      `json:"o,omitempty"`
	AuditID    string    `json:"id,omitempty"`
	Approval   string    `json:"ap,omitempty"`
	Args       string    `json:"a,omitempty"`
	Result     string    `json:"r,omitempty"` // a call's result, as the outcome recorded it (page only)
	Detail     string    `json:"x,omitempty"` // a reason, a search's words, an event's name
}

// BrokerEvent is one of the broker's own records.
type BrokerEvent struct {
	At, Event, Provider, ShareKey, Detail string
	Time                                  time.Time
}

type pending struct {
	slot *slot
	row  Row
	el   *list.Element
}

// reader is one report being read.
type reader struct {
	f       Filter
	r       *Report
	turns   map[string]*slot
	live    *list.List // slots whose summary is in memory, most recently used first
	cur     *slot      // the slot of the record being read: never retired under it
	pending map[string]*pending
	order   *list.List // pending audit ids, oldest first
}

// Read reads the trail files in order (a file named twice is read once) and returns the
// report. An error means a file could not be read; problems in it are in the report.
func Read(files []string, f Filter) (*Report, error) {
	rd := &reader{
		f:       f,
		r:       &Report{Generated: time.Now().UTC(), spool: newSpool(spoolBudget)},
		turns:   map[string]*slot{},
		live:    list.New(),
		pending: map[string]*pending{},
		order:   list.New(),
	}
	for _, name := range files {
		if slices.Contains(rd.r.Files, name) {
			continue
		}
		rd.r.Files = append(rd.r.Files, name)
		fh, err := os.Open(name)
		if err != nil {
			rd.r.Close()
			return nil, err
		}
		err = rd.readFile(name, fh)
		fh.Close()
		if err != nil {
			rd.r.Close()
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	rd.finish()
	return rd.r, nil
}

// Close removes what the report spooled to disk.
func (r *Report) Close() { r.spool.close() }

func (rd *reader) readFile(name string, in io.Reader) error {
	lr := newLineReader(in)
	base := excerpt(filepath.Base(name), 200) // a file's name is shown too: cleaned once
	for {
		line, ok, err := lr.next()
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		n := lr.n
		at := func() string { return where{base, n}.String() }
		if lr.long > 0 {
			rd.trailProblem(at(), fmt.Sprintf("a line of %d bytes, longer than the report reads (%d)", lr.long, maxLine))
			continue
		}
		if len(line) == 0 {
			continue
		}
		if !json.Valid(line) {
			rd.trailProblem(at(), "a line that is not JSON: "+excerpt(string(line), 80))
			continue
		}
		h, isObject := readHead(line)
		switch {
		case !isObject:
			rd.trailProblem(at(), "a line that is not a record (not a JSON object)")
			continue
		case unquote(h.event) == "" || len(h.time) < 3:
			rd.trailProblem(at(), "a line that is not a record (no event or time)")
			continue
		case h.broker:
			rd.r.Records++
			rd.brokerRecord(at(), line)
			continue
		case !h.hasTurn:
			rd.trailProblem(at(), "a line that is not a record (no turn, and not the broker's)")
			continue
		}
		if rd.f.Turn != "" && !is(h.turn, rd.f.Turn) || rd.f.Session != "" && !is(h.session, rd.f.Session) {
			rd.r.Records++
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, unquote(h.time))
		if err != nil {
			rd.trailProblem(at(), "a line that is not a record (its time is not RFC 3339: "+excerpt(unquote(h.time), 40)+")")
			continue
		}
		var rec record
		if err := json.Unmarshal(line, &rec); err != nil {
			rd.trailProblem(at(), "a line that is not a record ("+excerpt(err.Error(), 80)+")")
			continue
		}
		// The keys that placed the record are the head's (encoding/json would also take "TURN").
		rec.Turn, rec.Session, rec.Event = unquote(h.turn), unquote(h.session), unquote(h.event)
		rd.r.Records++
		rd.turnRecord(at(), t, &rec)
	}
}

func (rd *reader) trailProblem(at, what string) {
	if len(rd.r.Problems) < maxProblems {
		rd.r.Problems = append(rd.r.Problems, Problem{at, what})
	} else {
		rd.r.More++
	}
}

func (t *Turn) problem(at, what string) {
	if len(t.Problems) < maxProblems {
		t.Problems = append(t.Problems, Problem{at, what})
	} else {
		t.More++
	}
}

func (rd *reader) brokerRecord(at string, line []byte) {
	var rec record
	if json.Unmarshal(line, &rec) != nil {
		return
	}
	t, err := time.Parse(time.RFC3339Nano, rec.Time)
	if err != nil {
		rd.trailProblem(at, "a broker record whose time is not RFC 3339")
		return
	}
	if len(rd.r.Broker) >= maxBroker {
		return
	}
	key := rec.ShareKey
	if key == "" {
		key = rec.Share
	}
	detail := rec.Reason
	if rec.Stage != "" {
		detail = rec.Stage + ": " + detail
	}
	rd.r.Broker = append(rd.r.Broker, BrokerEvent{At: at, Event: excerpt(rec.Event, 40), Provider: excerpt(rec.Provider, 64),
		ShareKey: excerpt(key, 64), Detail: excerpt(detail, textExcerpt), Time: t})
}

func (rd *reader) turn(rec *record, at string, t time.Time) *Turn {
	key := rec.Session + "\x00" + rec.Turn
	sl := rd.turns[key]
	if sl == nil {
		sl = &slot{rows: rd.r.spool.stream()}
		sl.t = &Turn{Session: rec.Session, Turn: rec.Turn, First: t, Last: t, firstAt: at, maxTime: t, maxTimeAt: at, rows: sl.rows}
		rd.turns[key] = sl
		rd.r.slots = append(rd.r.slots, sl)
	}
	rd.cur = sl
	tn := rd.wake(sl)
	if t.After(sl.last) {
		sl.last = t
	}
	if t.Before(tn.First) {
		tn.First = t
	}
	if t.After(tn.Last) {
		tn.Last = t
	}
	if t.Before(tn.maxTime.Add(-outOfOrder)) {
		tn.problem(at, fmt.Sprintf("out of time order: %s, %s before the record at %s",
			t.Format(time.RFC3339Nano), tn.maxTime.Sub(t).Round(time.Millisecond), tn.maxTimeAt))
	}
	if t.After(tn.maxTime) {
		tn.maxTime, tn.maxTimeAt = t, at
	}
	return tn
}

func (t *Turn) provider(id string, _ time.Time) *Provider {
	if id == "" {
		return nil
	}
	id = excerpt(id, 64) // shown as it is kept (a no-op for what a registry allows)
	for _, p := range t.Providers {
		if p.ID == id {
			return p
		}
	}
	if len(t.Providers) >= maxProviders {
		p := t.Providers[len(t.Providers)-1]
		p.ID = "(more providers)"
		return p
	}
	p := &Provider{ID: id}
	t.Providers = append(t.Providers, p)
	return p
}

// providerOf is the provider a record concerns: its own field, else its capability's prefix
// when that names a provider the turn knows (an unknown capability names none).
func (t *Turn) providerOf(rec *record) string {
	if rec.Provider != "" {
		return rec.Provider
	}
	if id, _, ok := strings.Cut(rec.Capability, "/"); ok {
		id = excerpt(id, 64)
		for _, p := range t.Providers {
			if p.ID == id {
				return id
			}
		}
	}
	return ""
}

func (t *Turn) decide(code string) {
	count(&t.Decisions, code, maxCodes, "(other codes)")
}

func (rd *reader) turnRecord(at string, when time.Time, rec *record) {
	t := rd.turn(rec, at, when)
	base := Row{At: at, Time: when, Face: excerpt(rec.Face, 16), Provider: excerpt(t.providerOf(rec), 64),
		Capability: excerpt(rec.Capability, 160), Class: excerpt(rec.Class, 8)}
	switch rec.Event {
	case audit.EventTurnStarted:
		t.Started++
		t.Isolated = rec.Isolated
		t.Isolation, t.Task, t.Project = excerpt(rec.Isolation, 120), excerpt(rec.Task, 40), excerpt(rec.Project, 64)
		t.Workspace, t.Permission = excerpt(rec.Workspace, 200), excerpt(rec.Permission, 40)
	case audit.EventProviderRegistered:
		if p := t.provider(rec.Provider, when); p != nil {
			p.Registered = true
		}
	case audit.EventProviderRejected:
		if p := t.provider(rec.Provider, when); p != nil {
			p.Rejected = true
		}
	case audit.EventFamilySelected:
		t.FamilyMode = excerpt(rec.Mode, 16)
		if rec.Count != nil {
			t.FamilyCount = *rec.Count
		}
		t.Offered = 0
		for _, p := range rec.Providers {
			if p.Offered {
				t.Offered++
				if pr := t.provider(p.ID, when); pr != nil {
					pr.Offered = true
				}
			}
		}
	case audit.EventIndexExposed:
		via := rec.Via
		if via == "" {
			via = "listing"
		}
		if rec.Face != "" {
			via = rec.Face + " " + via
		}
		count(&t.Exposed, excerpt(via, 40), 16, "(other)")
	case audit.EventSearched:
		t.Searches++
		base.Kind = "search"
		base.Detail = excerpt(rec.Words, textExcerpt)
		if rec.Matched != nil && rec.Shown != nil {
			base.Decision = fmt.Sprintf("%d matched, %d shown", *rec.Matched, *rec.Shown)
		}
		rd.row(t, base)
	case audit.EventDescribed:
		t.Described++
		base.Kind = "describe"
		base.Decision = "ok"
		rd.row(t, base)
	case audit.EventPreflighted:
		t.Preflights++
		base.Kind = "preflight"
		base.Decision = excerpt(rec.Decision+rec.Code, 40)
		rd.row(t, base)
	case audit.EventInvoked:
		rd.invoked(t, rd.cur, at, rec, base)
	case audit.EventRefused:
		t.Refused++
		code := excerpt(rec.Code, 40)
		t.decide(code)
		if p := t.provider(base.Provider, when); p != nil {
			p.Refused++
		}
		base.Kind, base.Decision = "refused", code
		base.Args, base.Detail = args(rec), excerpt(rec.Reason, textExcerpt)
		if rec.Class == "WRITE" {
			t.write(Write{at, base.Capability, code, ""})
		}
		rd.row(t, base)
	case audit.EventProviderFailed:
		if p := t.provider(rec.Provider, when); p != nil {
			p.Failures++
		}
		base.Kind, base.Decision = "failure", excerpt(rec.Stage, 40)
		base.Detail = excerpt(rec.Reason, textExcerpt)
		rd.row(t, base)
	case audit.EventKeeperStarted, audit.EventKeeperEnded, audit.EventKeeperUnavailable:
		count(&t.Keeper, rec.Event, 3, "")
		base.Kind, base.Decision, base.Detail = "keeper", rec.Event, excerpt(rec.Reason, textExcerpt)
		rd.row(t, base)
	case audit.EventTurnEnded:
		t.Ended = excerpt(rec.Reason, textExcerpt)
		if t.Ended == "" {
			t.Ended = "ended"
		}
		base.Kind, base.Decision, base.Detail = "event", rec.Event, t.Ended
		rd.row(t, base)
	default:
		name := excerpt(rec.Event, 40)
		count(&t.Other, name, 32, "(other events)")
		base.Kind, base.Decision = "event", name
		base.Detail = excerpt(rec.Reason+rec.Code, textExcerpt)
		rd.row(t, base)
	}
}

// count adds one to m[k], making m when it is nil (most turns need few of their maps); past
// limit keys, new ones are counted under other (or not at all when other is "").
func count(m *map[string]int, k string, limit int, other string) {
	if *m == nil {
		*m = map[string]int{}
	}
	if _, ok := (*m)[k]; !ok && len(*m) >= limit {
		if other == "" {
			return
		}
		k = other
	}
	(*m)[k]++
}

func (t *Turn) write(w Write) {
	if len(t.Writes) < maxProblems {
		t.Writes = append(t.Writes, w)
	} else {
		t.WritesMore++
	}
}

// invoked pairs a call's intent with its outcome by audit id; the row is written at the
// outcome, with the intent's arguments and time.
func (rd *reader) invoked(t *Turn, sl *slot, at string, rec *record, base Row) {
	id := rec.AuditID
	switch rec.Phase {
	case "intent":
		t.Calls++
		base.Kind, base.AuditID = "call", excerpt(id, 64)
		base.Args, base.Approval = args(rec), excerpt(rec.Approval, 40)
		if p := t.provider(base.Provider, base.Time); p != nil {
			p.Calls++
		}
		if old := rd.pending[id]; old != nil { // the same id twice: the first never ends
			rd.noOutcome(old)
		}
		if rd.order.Len() >= maxPending {
			rd.noOutcome(rd.pending[rd.order.Front().Value.(string)])
		}
		p := &pending{slot: sl, row: base}
		p.el = rd.order.PushBack(id)
		rd.pending[id] = p
	default: // the outcome
		code := excerpt(rec.Code, 40)
		if code == "" {
			code = "ok"
		}
		p := rd.pending[id]
		if p == nil || p.slot != sl {
			t.problem(at, "an outcome whose audit id matches no intent: "+excerpt(id, 64))
			t.decide(code)
			base.Kind, base.Decision, base.AuditID = "call", code, excerpt(id, 64)
			base.DurationMS, base.HasOutcome = rec.DurationMS, true
			base.Detail, base.Result = "no intent", excerpt(rec.Result, argsExcerpt)
			rd.row(t, base)
			return
		}
		rd.order.Remove(p.el)
		delete(rd.pending, id)
		row := p.row
		row.Decision, row.DurationMS, row.HasOutcome = code, rec.DurationMS, true
		row.Detail, row.Result = excerpt(rec.Reason, textExcerpt), excerpt(rec.Result, argsExcerpt)
		rd.called(t, row)
	}
}

// called counts a finished (or never finished) call and writes its row.
func (rd *reader) called(t *Turn, row Row) {
	t.decide(row.Decision)
	if row.Decision != "ok" {
		if p := t.provider(row.Provider, row.Time); p != nil {
			p.Failed++
		}
	}
	if row.Class == "WRITE" {
		t.write(Write{row.At, row.Capability, row.Decision, row.Approval})
	}
	rd.row(t, row)
}

func (rd *reader) noOutcome(p *pending) {
	rd.order.Remove(p.el)
	delete(rd.pending, p.row.AuditID)
	t := rd.wake(p.slot)
	t.problem(p.row.At, "an intent without its outcome (the call never ended: a process killed mid-call?): "+p.row.AuditID)
	p.row.Decision = "no-outcome"
	rd.called(t, p.row)
}

func (rd *reader) row(t *Turn, r Row) {
	b, err := json.Marshal(r)
	if err != nil {
		return
	}
	t.nrows++
	t.rows.write(append(b, '\n'))
}

// finish settles what only the end of the trail shows: intents left without outcome, turns
// outside --since. The rest is settled as each turn is shown (settle).
func (rd *reader) finish() {
	rd.cur = nil
	for rd.order.Len() > 0 {
		rd.noOutcome(rd.pending[rd.order.Front().Value.(string)])
	}
	if !rd.f.Since.IsZero() {
		rd.r.slots = slices.DeleteFunc(rd.r.slots, func(sl *slot) bool { return sl.last.Before(rd.f.Since) })
	}
}

// settle adds to a turn what needs the whole trail: a missing turn_started, the problems in
// the trail's order, the broker's records on its lanes.
func (r *Report) settle(t *Turn) {
	if t.settled {
		return
	}
	t.settled = true
	if t.Started == 0 {
		t.problem(t.firstAt, "a turn without turn_started (its first record is here)")
	}
	slices.SortStableFunc(t.Problems, func(a, b Problem) int { return r.compareAt(a.At, b.At) })
	for _, b := range r.Broker {
		if p := t.brokerLane(b); p != nil {
			p.Broker++
		}
	}
}

// compareAt orders two file:line places as the trail was read: by file, then by line.
func (r *Report) compareAt(a, b string) int {
	fa, la := splitAt(a)
	fb, lb := splitAt(b)
	if fa != fb {
		return cmpIndex(r.fileIndex(fa), r.fileIndex(fb))
	}
	return cmpIndex(la, lb)
}

func splitAt(at string) (string, int) {
	i := strings.LastIndexByte(at, ':')
	n := 0
	fmt.Sscan(at[i+1:], &n)
	return at[:max(i, 0)], n
}

func (r *Report) fileIndex(base string) int {
	for i, f := range r.Files {
		if filepath.Base(f) == base {
			return i
		}
	}
	return len(r.Files)
}

func cmpIndex(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Turns is how many turns the report covers.
func (r *Report) Turns() int { return len(r.slots) }

// Each calls fn with each turn the report covers, in the order the turns first appear; a turn
// retired to the spool is read back for the call and let go after it.
func (r *Report) Each(fn func(*Turn) error) error {
	for _, sl := range r.slots {
		t := sl.t
		if t == nil {
			var err error
			if t, err = r.load(sl); err != nil {
				return err
			}
		}
		r.settle(t)
		if err := fn(t); err != nil {
			return err
		}
	}
	return nil
}

// Rows calls fn with each of the turn's rows in the order they were decided.
func (r *Report) Rows(t *Turn, fn func(Row) error) error {
	dec := json.NewDecoder(t.rows.reader())
	for {
		var row Row
		if err := dec.Decode(&row); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("report: the spooled rows: %w", err)
		}
		if err := fn(row); err != nil {
			return err
		}
	}
}

// BrokerFor returns the broker's records that belong on the turn's lanes.
func (r *Report) BrokerFor(t *Turn) []BrokerEvent {
	var out []BrokerEvent
	for _, b := range r.Broker {
		if t.brokerLane(b) != nil {
			out = append(out, b)
		}
	}
	return out
}

// brokerLane is the lane of the turn a broker record belongs on: that of its provider when the
// turn used it (a call or a refusal) while the turn ran, under the turn's project when the
// record names a share key (a share: project upstream serves one project); nil otherwise.
func (t *Turn) brokerLane(b BrokerEvent) *Provider {
	if b.Time.Before(t.First) || b.Time.After(t.Last) {
		return nil
	}
	if b.ShareKey != "" && t.Project != "" && b.ShareKey != t.Project {
		return nil
	}
	for _, p := range t.Providers {
		if p.ID == b.Provider && p.Calls+p.Refused > 0 {
			return p
		}
	}
	return nil
}

func args(rec *record) string {
	a := excerpt(rec.Args, argsExcerpt)
	if rec.ArgsCut && !strings.HasSuffix(a, "…") {
		a += "…"
	}
	return a
}
