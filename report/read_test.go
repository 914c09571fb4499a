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

// readHead reads the keys that place a record as encoding/json would, skipping nested ones.
func TestReadHead(t *testing.T) {
	t.Parallel()
	cases := []struct {
		line string
		want head
		ok   bool
	}{
		{`{"time":"T","event":"e","turn":"t1","session":"s"}`, head{turn: "t1", session: "s", time: "T", event: "e", hasTurn: true}, true},
		{`{"x":{"turn":"inner"},"turn":"outer"}`, head{turn: "outer", hasTurn: true}, true},
		{`{"turn":"a","turn":"b"}`, head{turn: "b", hasTurn: true}, true},
		{`{"tu\u0072n":"esc\"aped"}`, head{turn: `esc"aped`, hasTurn: true}, true},
		{`{ "broker" : true , "provider":"p", "a":[1,{"b":"]"}] }`, head{broker: true}, true},
		{`{"s":"}\\","turn":"t"}`, head{turn: "t", hasTurn: true}, true},
		{`[1,2]`, head{}, false},
		{`"turn"`, head{}, false},
	}
	for _, c := range cases {
		var v any
		if err := json.Unmarshal([]byte(c.line), &v); err != nil {
			t.Fatalf("%s: not JSON: %v", c.line, err)
		}
		got, ok := readHead([]byte(c.line))
		if got != c.want || ok != c.ok {
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
		line, _, ok, err := lr.next()
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
	if err != nil || len(r.Turns) != 0 || r.Records != 0 {
		t.Errorf("an empty file: %v, %+v", err, r)
	}
}
