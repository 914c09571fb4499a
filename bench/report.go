package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// caseReport: spear-shell --report of one turn in a 1 GB trail against jq selecting that
// turn's records, side by side; and the report's peak resident memory (SPEC 16: at most 64 MiB).
func caseReport(ctx context.Context, w *world) []row {
	const (
		name    = "--report --turn T of a 1 GB trail vs jq -c 'select(.turn == T)'"
		target  = "ratio <= 1.00"
		memName = "--report --turn T of a 1 GB trail: peak resident memory"
	)
	jq, err := exec.LookPath("jq")
	if err != nil {
		return []row{skipped(name, target, "jq is not on PATH")}
	}
	trail := filepath.Join(w.root, "report-trail.jsonl")
	began := time.Now()
	turn, records, turns, err := writeTrail(trail, 1<<30)
	if err != nil {
		return []row{failed(name, target, err)}
	}
	defer os.Remove(trail)
	w.logf("report: a trail of %d records written in %s; the turn reported: %s", records, time.Since(began).Round(time.Millisecond), turn)
	var rss []float64
	report := func(ctx context.Context) (float64, error) {
		o, err := w.run(ctx, spec{argv: []string{w.spear, "--report", "--audit", trail, "--turn", turn}})
		if err != nil {
			return 0, err
		}
		if err := contains("turn "+turn+"  session ", "calls      ")(o); err != nil {
			return 0, err
		}
		rss = append(rss, float64(o.maxRSS)/1024)
		return ms(o.elapsed), nil
	}
	q := fmt.Sprintf("select(.turn == %q)", turn)
	got, err := alternate(ctx, w.runs(2), report,
		timed(w, fixed(spec{argv: []string{jq, "-c", q, trail}}), contains(`"turn":"`+turn+`"`)))
	if err != nil {
		return []row{failed(name, target, err)}
	}
	r := judged(name, target, got, nil, 1.0)
	r.note = fmt.Sprintf("%s --report --audit TRAIL --turn %s against %s -c '%s' TRAIL, a generated trail of %d records (%d turns, two at a time interleaved)",
		w.spear, turn, jq, q, records, turns)
	m := memRow(memName, median(rss[1:]))
	// Once, every turn of the trail: the memory a report of the whole file needs (its time is
	// the text of 29,000 turns, with nothing to compare it with).
	o, err := w.run(ctx, spec{argv: []string{w.spear, "--report", "--audit", trail}})
	if err != nil {
		return []row{r, m, failed(wholeName, "<= 64 MiB", err)}
	}
	whole := memRow(wholeName, float64(o.maxRSS)/1024)
	whole.note = fmt.Sprintf("the whole trail reported in %s", o.elapsed.Round(time.Millisecond))
	return []row{r, m, whole}
}

const wholeName = "--report of the whole 1 GB trail (every turn): peak resident memory"

func memRow(name string, mib float64) row {
	return row{name: name, a: format(mib, "MiB"), b: "64 MiB", target: "<= 64 MiB", ratio: fmt.Sprintf("%.2f", mib/64), holds: yesNo(mib <= 64)}
}

// writeTrail writes at least size bytes of records shaped as spear-shell writes them: turns
// two at a time, their records interleaved as concurrent processes interleave them, each with
// its start, providers, family, searches, descriptions, calls (intent and outcome) and
// refusals. It returns a turn from the middle of the file.
func writeTrail(path string, size int64) (turn string, records, turns int, err error) {
	f, err := os.Create(path)
	if err != nil {
		return "", 0, 0, err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	now := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	var written int64
	pair := 0
	middle := ""
	enc := func(m map[string]any) {
		b, _ := json.Marshal(m)
		n, _ := bw.Write(append(b, '\n'))
		written += int64(n)
		records++
	}
	filler := func(n int) string { return strings.Repeat("lorem ipsum ", n/12+1)[:n] }
	for written < size {
		turns := [2]string{fmt.Sprintf("turn-%06d-a", pair), fmt.Sprintf("turn-%06d-b", pair)}
		if middle == "" && written > size/2 {
			middle = turns[0]
		}
		rec := func(k int, event string, extra map[string]any) {
			now = now.Add(time.Duration(rng.IntN(3000)) * time.Microsecond)
			m := map[string]any{"time": now.Format(time.RFC3339Nano), "event": event, "turn": turns[k], "session": "bench"}
			for key, v := range extra {
				m[key] = v
			}
			enc(m)
		}
		for k := range 2 {
			rec(k, "turn_started", map[string]any{"isolated": true, "isolation": "bwrap", "task": "implementation", "project": "webapp", "workspace": "/src/webapp", "permission_mode": "ask", "runtime": "gateway", "pid": 4242})
			for _, p := range []string{"notes", "files", "memory"} {
				rec(k, "provider_registered", map[string]any{"provider": p, "enabled": true, "scope": "global", "write": "refuse"})
			}
			rec(k, "capability_family_selected", map[string]any{"mode": "whole", "count": 8, "bytes": 3100, "project": "webapp",
				"family":    []string{"notes/search READ", "notes/get READ", "notes/create WRITE", "files/read READ", "files/list READ", "files/write WRITE", "memory/get READ", "memory/put WRITE"},
				"providers": []map[string]any{{"id": "notes", "offered": true, "read_only": false, "reason": "scope global and task implementation"}}})
			rec(k, "capability_index_exposed", map[string]any{"mode": "whole", "count": 8, "via": "context"})
		}
		for i := range 40 {
			k := rng.IntN(2)
			id := fmt.Sprintf("%026d", records)
			args := fmt.Sprintf(`{"query":"%s","n":%d}`, filler(40+rng.IntN(200)), i)
			switch i % 8 {
			case 0:
				rec(k, "capability_searched", map[string]any{"mode": "whole", "admitted": 8, "first": 0, "matched": 3, "shown": 3, "words": filler(30)})
			case 1:
				rec(k, "capability_described", map[string]any{"provider": "files", "capability": "files/read", "class": "READ", "mode": "whole"})
			case 2:
				rec(k, "capability_refused", map[string]any{"provider": "notes", "capability": "notes/create", "class": "WRITE", "code": "write-refused",
					"reason": "notes/create is a WRITE capability; its write policy \"refuse\" under permission mode \"ask\" refuses calls", "args_sha256": strings.Repeat("ab", 32), "args": args})
			default:
				rec(k, "capability_invoked", map[string]any{"provider": "files", "capability": "files/read", "class": "READ", "mode": "whole", "audit_id": id,
					"args_sha256": strings.Repeat("cd", 32), "args": args, "approval": "not-needed", "phase": "intent"})
			}
			if i%8 > 2 {
				rec(k, "capability_invoked", map[string]any{"provider": "files", "capability": "files/read", "class": "READ", "code": "ok", "audit_id": id,
					"duration_ms": float64(rng.IntN(50000)) / 1000, "result": filler(200 + rng.IntN(3000)), "result_bytes": 4000, "phase": "outcome"})
			} else {
				rec(k, "capability_index_exposed", map[string]any{"mode": "whole", "count": 8, "via": "list"})
			}
		}
		for k := range 2 {
			rec(k, "turn_ended", map[string]any{"reason": "the session ended"})
		}
		pair++
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return "", 0, 0, err
	}
	return middle, records, 2 * pair, f.Close()
}
