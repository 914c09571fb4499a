package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spear-shell/spear-shell/audit"
)

// headStrings is a head's values read as strings, for comparing.
type headStrings struct {
	turn, session, time, event string
	hasTurn, broker            bool
}

func (h head) strings() headStrings {
	return headStrings{unquote(h.turn), unquote(h.session), unquote(h.time), unquote(h.event), h.hasTurn, h.broker}
}

// readHead reads the keys that place a record as encoding/json would, skipping nested ones.
func TestReadHead(t *testing.T) {
	t.Parallel()
	cases := []struct {
		line string
		want headStrings
		ok   bool
	}{
		{`{"time":"T","event":"e","turn":"t1","session":"s"}`, headStrings{turn: "t1", session: "s", time: "T", event: "e", hasTurn: true}, true},
		{`{"x":{"turn":"inner"},"turn":"outer"}`, headStrings{turn: "outer", hasTurn: true}, true},
		{`{"turn":"a","turn":"b"}`, headStrings{turn: "b", hasTurn: true}, true},
		{`{"tu\u0072n":"esc\"aped"}`, headStrings{turn: `esc"aped`, hasTurn: true}, true},
		{`{ "broker" : true , "provider":"p", "a":[1,{"b":"]"}] }`, headStrings{broker: true}, true},
		{`{"s":"}\\","turn":"t"}`, headStrings{turn: "t", hasTurn: true}, true},
		{`[1,2]`, headStrings{}, false},
		{`"turn"`, headStrings{}, false},
	}
	for _, c := range cases {
		var v any
		if err := json.Unmarshal([]byte(c.line), &v); err != nil {
			t.Fatalf("%s: not JSON: %v", c.line, err)
		}
		h, ok := readHead([]byte(c.line))
		if got := h.strings(); got != c.want || ok != c.ok {
			t.Errorf("readHead(%s) = %+v, %v; want %+v, %v", c.line, got, ok, c.want, c.ok)
		}
	}
}

// Lines come back whole whatever the reader's buffer, the last without a newline too; a line
// over maxLine is counted, not held.
func TestLineReader(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 3<<20)
	in := "a\n\n" + long + "\n" + strings.Repeat("y", maxLine+10) + "\nlast"
	lr := newLineReader(strings.NewReader(in))
	var got []string
	for {
		line, ok, err := lr.next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		if lr.long > 0 {
			got = append(got, fmt.Sprintf("long %d", lr.long))
			continue
		}
		got = append(got, string(line))
	}
	want := []string{"a", "", long, fmt.Sprintf("long %d", maxLine+11), "last"}
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: %.40q, want %.40q", i+1, got[i], want[i])
		}
	}
}

// Two turns written at once through the audit package, with rows spilled to the temporary
// file after every few hundred bytes: the report is the one kept in memory, and every call
// pairs with its outcome.
func TestSpillKeepsTheReport(t *testing.T) {
	dir := t.TempDir()
	trail := filepath.Join(dir, "audit.jsonl")
	var loggers [2]*audit.Logger
	for i := range loggers {
		l, err := audit.Open(trail, fmt.Sprintf("t%d", i), "s", nil)
		if err != nil {
			t.Fatal(err)
		}
		loggers[i] = l
		if err := l.Log(audit.Event{Name: audit.EventTurnStarted, Fields: map[string]any{"isolated": false}}); err != nil {
			t.Fatal(err)
		}
	}
	for n := range 300 {
		l := loggers[n%2]
		id := audit.NewAuditID()
		args := json.RawMessage(fmt.Sprintf(`{"n":%d,"s":"<b>\u001b[31m%s"}`, n, strings.Repeat("z", n)))
		must(t, l.Log(audit.Event{Name: audit.EventInvoked, Provider: "p", Capability: "p/echo", Class: "READ", AuditID: id, Args: args,
			Fields: map[string]any{"phase": "intent", "approval": "not-needed"}}))
		must(t, l.Log(audit.Event{Name: audit.EventInvoked, Provider: "p", Capability: "p/echo", Class: "READ", AuditID: id, Code: "ok",
			Duration: time.Millisecond, Fields: map[string]any{"phase": "outcome"}}))
	}
	text := func(budget int) string {
		spoolBudget = budget
		defer func() { spoolBudget = 8 << 20 }()
		r, err := Read([]string{trail}, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if budget < 1000 && r.spool.f == nil {
			t.Fatal("nothing was spilled")
		}
		var b bytes.Buffer
		must(t, r.Text(&b, false))
		var h bytes.Buffer
		must(t, r.HTML(&h))
		return b.String() + h.String()[strings.Index(h.String(), "<section"):]
	}
	spilled, kept := text(300), text(8<<20)
	if spilled != kept {
		t.Fatalf("the spilled report differs from the one kept in memory")
	}
	for _, want := range []string{"turn t0  session s", "turn t1  session s", "calls      150 sent, 0 refused before sending; decisions: ok 150"} {
		if strings.Count(kept, want) == 0 {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(kept, "does not add up") || strings.Contains(kept, "\x1b") {
		t.Errorf("the report:\n%s", kept)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A trail that cannot be read is an error; an empty one is a report of nothing.
func TestReadErrors(t *testing.T) {
	t.Parallel()
	if _, err := Read([]string{filepath.Join(t.TempDir(), "none")}, Filter{}); err == nil || !os.IsNotExist(err) && !strings.Contains(err.Error(), "no such file") {
		t.Errorf("a missing file: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	must(t, os.WriteFile(empty, nil, 0o600))
	r, err := Read([]string{empty}, Filter{})
	if err != nil || r.Turns() != 0 || r.Records != 0 {
		t.Errorf("an empty file: %v, %+v", err, r)
	}
}

// FuzzReadHead holds readHead to encoding/json: for every JSON object, the keys that place a
// record read as json.Unmarshal reads them (the last of a duplicated key wins).
func FuzzReadHead(f *testing.F) {
	for _, s := range []string{
		`{"time":"T","event":"e","turn":"t1","session":"s"}`, `{"x":{"turn":"inner"},"turn":"outer"}`,
		`{"turn":"a","turn":"b"}`, `{"tu\u0072n":"esc\"aped"}`, `{ "broker" : true , "a":[1,{"b":"]"}] }`,
		`{"s":"}\\","turn":"t"}`, `{"turn":1}`, `{"broker":"true"}`, `[]`, `{}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) {
			return
		}
		var m map[string]json.RawMessage
		isObject := json.Unmarshal([]byte(s), &m) == nil
		hd, ok := readHead([]byte(s))
		h := hd.strings()
		if ok != isObject {
			t.Fatalf("readHead(%s): object %v, encoding/json says %v", s, ok, isObject)
		}
		if !ok {
			return
		}
		str := func(k string) string {
			var v string
			_ = json.Unmarshal(m[k], &v)
			return v
		}
		_, hasTurn := m["turn"]
		want := headStrings{turn: str("turn"), session: str("session"), time: str("time"), event: str("event"),
			hasTurn: hasTurn, broker: string(m["broker"]) == "true"}
		if h != want {
			t.Fatalf("readHead(%s) = %+v, encoding/json reads %+v", s, h, want)
		}
		for _, k := range []string{"turn", "session"} {
			if v := str(k); !is(map[string][]byte{"turn": hd.turn, "session": hd.session}[k], v) {
				t.Fatalf("is(%s, %q) = false", k, v)
			}
		}
	})
}

// Colour only when asked (stdout a terminal), and then on what went wrong.
func TestTextColour(t *testing.T) {
	t.Parallel()
	trail := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := audit.Open(trail, "t", "s", nil)
	must(t, err)
	must(t, l.Log(audit.Event{Name: audit.EventTurnStarted}))
	must(t, l.Log(audit.Event{Name: audit.EventRefused, Capability: "p/x", Code: "write-refused", Reason: "\x1b[2Jno"}))
	r, err := Read([]string{trail}, Filter{})
	must(t, err)
	defer r.Close()
	var plain, colour bytes.Buffer
	must(t, r.Text(&plain, false))
	must(t, r.Text(&colour, true))
	if strings.Contains(plain.String(), "\x1b") {
		t.Errorf("escapes without a terminal:\n%q", plain.String())
	}
	if !strings.Contains(colour.String(), "\x1b[31mwrite-refused\x1b[0m") || strings.Contains(colour.String(), "\x1b[2J") {
		t.Errorf("the coloured report:\n%q", colour.String())
	}
}

// More turns than are kept in memory, written through the audit package: early turns get
// records again after they were retired (their calls' outcomes included), and the report is
// the one made with every turn in memory.
func TestRetiredTurns(t *testing.T) {
	trail := filepath.Join(t.TempDir(), "audit.jsonl")
	const turns = 40
	var loggers [turns]*audit.Logger
	for i := range loggers {
		l, err := audit.Open(trail, fmt.Sprintf("t%02d", i), "s", nil)
		must(t, err)
		loggers[i] = l
		if i%7 != 3 { // some turns have no turn_started
			must(t, l.Log(audit.Event{Name: audit.EventTurnStarted, Fields: map[string]any{"isolated": i%2 == 0}}))
		}
	}
	ids := make([]string, turns)
	for round := range 3 {
		for i, l := range loggers {
			if round < 2 {
				ids[i] = audit.NewAuditID()
				must(t, l.Log(audit.Event{Name: audit.EventInvoked, Provider: "p", Capability: "p/w", Class: "WRITE", AuditID: ids[i],
					Args: json.RawMessage(fmt.Sprintf(`{"round":%d}`, round)), Fields: map[string]any{"phase": "intent", "approval": "approved"}}))
				must(t, l.Log(audit.Event{Name: audit.EventRefused, Provider: "p", Capability: "p/x", Code: "not-described"}))
			}
			if round > 0 && i%5 != 0 { // every fifth turn's last call never ends
				must(t, l.Log(audit.Event{Name: audit.EventInvoked, Provider: "p", Capability: "p/w", Class: "WRITE", AuditID: ids[i], Code: "ok",
					Duration: time.Millisecond, Fields: map[string]any{"phase": "outcome"}}))
			}
		}
	}
	report := func(live, budget int) string {
		maxLive, spoolBudget = live, budget
		defer func() { maxLive, spoolBudget = 256, 4<<20 }()
		r, err := Read([]string{trail}, Filter{})
		must(t, err)
		defer r.Close()
		var b, h bytes.Buffer
		must(t, r.Text(&b, false))
		must(t, r.HTML(&h))
		return b.String() + h.String()[strings.Index(h.String(), "<section"):]
	}
	all, few := report(1000, 4<<20), report(3, 200)
	if all != few {
		t.Fatalf("with 3 turns in memory the report differs:\n%s\n---\n%s", few, all)
	}
	for _, want := range []string{"40 turns", "turn t39  session s", "does not add up in this turn: 2", "a turn without turn_started",
		"an intent without its outcome", "an outcome whose audit id matches no intent", "decisions: no-outcome 1, not-described 2, ok 2"} {
		if !strings.Contains(all, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}
