package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// A step is one model turn: one shell call. A forwarded step must hand back to the model what the
// same call with plain bash as the shell hands back; a capability step must be answered by
// spear-shell (exit code, words of the answer) and audited once.
type step struct {
	name     string
	cmd      string
	answered bool     // a capability step (answered by spear-shell or refused by its stub)
	code     int      // the exit code a capability step must hand back
	want     []string // text its output must contain
	event    string   // the one audit decision it must leave; "" for none
	refusal  string   // with event capability_refused: the code
	or       *step    // another exit code and words that are as expected
}

const (
	readInvoke = `spear-capability invoke notes/search_notes '{"query": "spear"}'`
	readResult = "n2  spear-shell"
)

var steps = []step{
	{name: "forwarded", cmd: "echo hello; echo err >&2"},
	{name: "own <", cmd: "wc -c < README.md"},
	{name: "heredoc", cmd: "cat <<'EOF'\nheredoc body\nEOF"},
	{name: "cd/export", cmd: "cd sub && export HX_VAR=set && pwd"},
	{name: "after cd/export", cmd: `pwd; echo "HX_VAR=${HX_VAR-unset}"`},
	{name: "list", cmd: "spear-capability list", answered: true, want: []string{"notes/search_notes"}, event: "capability_index_exposed"},
	{name: "describe", cmd: "spear-capability describe notes/search_notes", answered: true,
		want: []string{"Search the notes by a word"}, event: "capability_described"},
	{name: "READ invoke", cmd: readInvoke, answered: true, want: []string{readResult}, event: "capability_invoked"},
	{name: "refused WRITE", cmd: `spear-capability invoke notes/create_note '{"title": "t", "body": "b"}'`, answered: true,
		code: 3, want: []string{"write-refused"}, event: "capability_refused", refusal: "write-refused"},
	{name: "invalid arguments", cmd: `spear-capability invoke notes/search_notes '{"nope": 1}'`, answered: true,
		code: 3, want: []string{"invalid-arguments"}, event: "capability_refused", refusal: "invalid-arguments"},
	{name: "ls | list", cmd: "ls | spear-capability list", answered: true,
		code: 2, want: []string{"not-alone"}, event: "capability_refused", refusal: "not-alone"},
	{name: "bash -c 'exit 7'", cmd: "bash -c 'exit 7'"},
	// The name reached only at run time is the stub's, whatever PATH the shell has by then
	// (SPEC 3): 126 not-recognised, never 127, never an answer, nothing audited.
	{name: "eval", cmd: `eval 'spear-capability list'`, answered: true, code: 126, want: []string{"not-recognised"}},
	// Where bash on PATH is spear-shell (Gemini's recipe), a nested spear-shell refuses instead,
	// saying why (SPEC 9).
	{name: "bash -lc", cmd: `bash -lc 'spear-capability list'`, answered: true, code: 126, want: []string{"not-recognised"},
		or: &step{code: 3, want: []string{"no-capabilities", "nested spear-shell"}}},
	{name: "two lines", cmd: "echo first\n" + readInvoke, answered: true, want: []string{"first\n", readResult}, event: "capability_invoked"},
}

func scriptOf(ss []step) []string {
	var s []string
	for _, st := range ss {
		s = append(s, st.cmd)
	}
	return s
}

// auditRecord is the part of an audit record the check reads.
type auditRecord struct {
	Event   string `json:"event"`
	Code    string `json:"code"`
	AuditID string `json:"audit_id"`
	Turn    string `json:"turn"`
	Face    string `json:"face"`
}

// decisions are the records of a step's answers: what the check counts.
func isDecision(event string) bool {
	return event == "envelope_unmatched" || event == "capability_index_exposed" || event == "capability_described" ||
		event == "capability_invoked" || event == "capability_refused"
}

// auditBetween reads the decision records written to name between two offsets.
func auditBetween(name string, from, to int64) ([]auditRecord, error) {
	all, err := readAudit(name, from, to)
	var recs []auditRecord
	for _, rec := range all {
		if isDecision(rec.Event) {
			recs = append(recs, rec)
		}
	}
	return recs, err
}

// auditEvents are the events of every record written to name between two offsets.
func auditEvents(name string, from, to int64) ([]string, error) {
	all, err := readAudit(name, from, to)
	var events []string
	for _, rec := range all {
		events = append(events, rec.Event)
	}
	return events, err
}

func readAudit(name string, from, to int64) ([]auditRecord, error) {
	f, err := os.Open(name)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var recs []auditRecord
	sc := bufio.NewScanner(io.NewSectionReader(f, from, to-from))
	sc.Buffer(make([]byte, 0, 1<<16), 1<<24)
	for sc.Scan() {
		var rec auditRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, fmt.Errorf("audit: %w", err)
		}
		recs = append(recs, rec)
	}
	return recs, sc.Err()
}

var auditIDRe = regexp.MustCompile(`audit_id=([a-z0-9]+)>>>`)

// judgeAnswered says what is wrong with a capability step's result and audit, "" if nothing.
func judgeAnswered(st step, out string, code int, recs []auditRecord) string {
	if alt := st.or; alt != nil && code == alt.code {
		st.code, st.want = alt.code, alt.want
	}
	var faults []string
	if code != st.code {
		faults = append(faults, fmt.Sprintf("exit %d, want %d", code, st.code))
	}
	for _, w := range st.want {
		if !strings.Contains(out, w) {
			faults = append(faults, fmt.Sprintf("output lacks %q", w))
		}
	}
	if f := judgeAudit(st, out, recs); f != "" {
		faults = append(faults, f)
	}
	if len(faults) == 0 {
		return ""
	}
	return strings.Join(faults, "; ") + "; output " + brief(out)
}

// judgeAudit wants exactly one decision, of the step's kind; an invocation is one call recorded
// before and after, under the audit id the answer the model saw carries.
func judgeAudit(st step, out string, recs []auditRecord) string {
	var events []string
	for _, r := range recs {
		events = append(events, r.Event+"/"+r.Code)
	}
	if st.event == "capability_invoked" {
		m := auditIDRe.FindStringSubmatch(out)
		if m == nil {
			return fmt.Sprintf("no audit id in the answer; audit %v", events)
		}
		if len(recs) != 2 || recs[0].Event != st.event || recs[1].Event != st.event ||
			recs[0].AuditID != m[1] || recs[1].AuditID != m[1] || recs[1].Code != "ok" {
			return fmt.Sprintf("audit %v, want one call (2 records) with audit id %s", events, m[1])
		}
		return ""
	}
	if st.event == "" {
		if len(recs) != 0 {
			return fmt.Sprintf("audit %v, want none", events)
		}
		return ""
	}
	if len(recs) != 1 || recs[0].Event != st.event || recs[0].Code != st.refusal {
		return fmt.Sprintf("audit %v, want [%s/%s]", events, st.event, st.refusal)
	}
	return ""
}

// judgeForwarded compares a forwarded step with the same step under plain bash.
func judgeForwarded(out string, code int, bashOut string, bashCode int, recs []auditRecord) string {
	var faults []string
	if code != bashCode {
		faults = append(faults, fmt.Sprintf("exit %d, bash %d", code, bashCode))
	}
	if out != bashOut {
		faults = append(faults, fmt.Sprintf("output %s, bash %s", brief(out), brief(bashOut)))
	}
	if len(recs) != 0 {
		var events []string
		for _, r := range recs {
			events = append(events, r.Event+"/"+r.Code)
		}
		faults = append(faults, fmt.Sprintf("audit %v, want none", events))
	}
	return strings.Join(faults, "; ")
}

func brief(s string) string {
	if len(s) > 160 {
		s = s[:160] + "..."
	}
	return fmt.Sprintf("%q", s)
}
