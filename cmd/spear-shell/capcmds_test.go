package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/spear-shell/spear-shell/testdata/testkit"
)

// Transcript commands for the capability transcripts (testdata/script/cap_*.txtar).
func init() {
	registerCommands(map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"spear-home": cmdSpearHome,
		"expand":     cmdExpand,
		"gen-tools":  cmdGenTools,
		"audit":      cmdAudit,
	})
}

// expandVars replaces $WORK, $FAKEPROVIDER, $BIN, $NODE and $INTEROP, which txtar files
// cannot know.
func expandVars(ts *testscript.TestScript, s string) string {
	for _, k := range []string{"FAKEPROVIDER", "WORK", "BIN", "NODE", "INTEROP"} {
		s = strings.ReplaceAll(s, "$"+k, ts.Getenv(k))
	}
	return s
}

// spear-home CAPS.json: lays out $WORK/home with projects "demo" (rooted at $WORK) and
// "other" (rooted at $WORK/other, created), and capabilities.json from CAPS with $WORK,
// $FAKEPROVIDER and $BIN expanded.
func cmdSpearHome(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: spear-home CAPS.json")
	}
	home := ts.MkAbs("home")
	other := ts.MkAbs("other")
	for _, d := range []string{home, other} {
		ts.Check(os.MkdirAll(d, 0o755))
	}
	projects := map[string]any{"projects": []any{
		map[string]any{"name": "demo", "root": ts.Getenv("WORK"), "families": []string{"fw"}},
		map[string]any{"name": "other", "root": other},
	}}
	b, err := json.MarshalIndent(projects, "", "  ")
	ts.Check(err)
	ts.Check(os.WriteFile(filepath.Join(home, "projects.json"), b, 0o644))
	caps, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	ts.Check(os.WriteFile(filepath.Join(home, "capabilities.json"), []byte(expandVars(ts, string(caps))), 0o644))
}

// expand FILE...: replaces $WORK, $FAKEPROVIDER and $BIN in place.
func cmdExpand(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: expand FILE...")
	}
	for _, a := range args {
		p := ts.MkAbs(a)
		b, err := os.ReadFile(p)
		ts.Check(err)
		ts.Check(os.WriteFile(p, []byte(expandVars(ts, string(b))), 0o644))
	}
}

// gen-tools N BYTES OUT: writes a fake provider config with tools t0..t<N-1> that echo their
// arguments, whose description bytes plus compact inputSchema bytes total exactly BYTES.
func cmdGenTools(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: gen-tools N BYTES OUT")
	}
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	total, err := strconv.Atoi(args[1])
	ts.Check(err)
	const schema = `{"type":"object"}`
	left := total
	var tools []any
	for i := 0; i < n; i++ {
		d := (total - n*len(schema)) / n
		if i == n-1 {
			d = left - len(schema)
		}
		if d < 0 {
			ts.Fatalf("gen-tools: %d bytes cannot hold %d tools", total, n)
		}
		left -= d + len(schema)
		tools = append(tools, map[string]any{
			"name": fmt.Sprintf("t%d", i), "description": strings.Repeat("x", d),
			"inputSchema": json.RawMessage(schema), "behavior": map[string]any{"echo": true},
		})
	}
	b, err := json.Marshal(map[string]any{"record": "../record.jsonl", "tools": tools})
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[2]), b, 0o644))
}

// audit [-file=F] [-count=N] SPEC...: every line of the audit file ($WORK/audit.jsonl) must
// parse; each SPEC (event[,key=value...]) must match a record, in order (timestamps ignored).
// With -count=N, exactly N records match the one SPEC. Negated: no record matches any SPEC.
func cmdAudit(ts *testscript.TestScript, neg bool, args []string) {
	file, count := ts.MkAbs("audit.jsonl"), -1
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		k, v, _ := strings.Cut(args[0], "=")
		switch k {
		case "-file":
			file = ts.MkAbs(v)
		case "-count":
			count = countFlag(ts, v)
		default:
			ts.Fatalf("audit: unknown flag %s", k)
		}
		args = args[1:]
	}
	if len(args) == 0 {
		ts.Fatalf("usage: audit [-file=F] [-count=N] event[,key=value...]...")
	}
	records, err := testkit.Records(file)
	if err != nil && !(neg && errors.Is(err, fs.ErrNotExist)) {
		ts.Fatalf("audit: %v", err)
	}
	checkRecords(ts, "audit", records, neg, count, args)
}

// countFlag is the N of a -count=N flag.
func countFlag(ts *testscript.TestScript, v string) int {
	n, err := strconv.Atoi(v)
	ts.Check(err)
	return n
}

// checkRecords is the verdict of audit and baudit over records: with neg, no record matches any
// spec; with count >= 0, exactly count records match the one spec; otherwise one record matches
// each spec, in order.
func checkRecords(ts *testscript.TestScript, name string, records []map[string]any, neg bool, count int, specs []string) {
	switch {
	case neg:
		for _, spec := range specs {
			for _, m := range records {
				if testkit.Match(m, spec) {
					ts.Fatalf("%s: unexpected record matching %s: %v", name, spec, m)
				}
			}
		}
	case count >= 0:
		if n := countMatches(records, specs[0]); n != count {
			ts.Fatalf("%s: %d records match %s, want %d", name, n, specs[0], count)
		}
	default:
		i := 0
		for _, spec := range specs {
			for i < len(records) && !testkit.Match(records[i], spec) {
				i++
			}
			if i == len(records) {
				ts.Fatalf("%s: no record matching %s (in order)", name, spec)
			}
			i++
		}
	}
}

// countMatches is how many of records match spec.
func countMatches(records []map[string]any, spec string) int {
	n := 0
	for _, m := range records {
		if testkit.Match(m, spec) {
			n++
		}
	}
	return n
}

// awaitRecords is await-audit and await-baudit ([-count=N] SPEC): it waits (up to a minute)
// until at least N (default 1) of the records read returns match SPEC.
func awaitRecords(ts *testscript.TestScript, name string, neg bool, args []string, read func() []map[string]any) {
	want := 1
	if len(args) == 2 && strings.HasPrefix(args[0], "-count=") {
		want, args = countFlag(ts, strings.TrimPrefix(args[0], "-count=")), args[1:]
	}
	if neg || len(args) != 1 {
		ts.Fatalf("usage: %s [-count=N] SPEC", name)
	}
	if !testkit.Poll(func() bool { return countMatches(read(), args[0]) >= want }) {
		ts.Fatalf("%s: fewer than %d records match %s", name, want, args[0])
	}
}
