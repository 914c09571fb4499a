package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// Transcript commands for the turn report (testdata/script/report_*.txtar).
func init() {
	registerCommands(map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"report-page": cmdReportPage,
		"big-invoke":  cmdBigInvoke,
		"interleaved": cmdInterleaved,
	})
}

// chromiumFlags run Debian's chromium headless, as root in a container, fetching nothing of
// its own, with a profile of its own.
var chromiumFlags = []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync"}

// chromiumFound is the transcripts' [chromium] condition: without chromium they are skipped,
// unless SPEAR_REQUIRE_BROWSER=1 (make test), which fails them.
func chromiumFound() bool {
	_, err := exec.LookPath("chromium")
	if err != nil && os.Getenv("SPEAR_REQUIRE_BROWSER") == "1" {
		panic("chromium is required (SPEAR_REQUIRE_BROWSER=1) but is not found: " + err.Error())
	}
	return err == nil
}

// chromium runs the browser on page with extra flags and returns its stdout.
func chromium(ts *testscript.TestScript, page string, extra ...string) []byte {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		ts.Fatalf("report-page: %v (guard the transcript with [!chromium] skip)", err)
	}
	profile, err := os.MkdirTemp("", "spear-chromium-")
	ts.Check(err)
	defer os.RemoveAll(profile)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append(append(append([]string{}, chromiumFlags...), "--user-data-dir="+profile), extra...)
	cmd := exec.CommandContext(ctx, bin, append(args, "file://"+page)...)
	cmd.Dir = profile
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		ts.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	return out
}

// report-page [-hostile] [-turn=T] PAGE AUDIT (T: only that turn's records): PAGE (written 0600 by spear-shell --report --html) is
// opened in headless Chromium; its DOM must show every call of AUDIT with its audit id,
// decision and duration, every intent without an outcome, and per turn every decision's code
// counted as often as AUDIT has it. A screenshot is kept as an artefact (its path logged). With
// -hostile the DOM must also show that nothing the audit holds ran or became markup.
func cmdReportPage(ts *testscript.TestScript, neg bool, args []string) {
	hostile, only := false, ""
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch k, v, _ := strings.Cut(args[0], "="); k {
		case "-hostile":
			hostile = true
		case "-turn":
			only = v
		default:
			ts.Fatalf("report-page: unknown flag %s", k)
		}
		args = args[1:]
	}
	if neg || len(args) != 2 {
		ts.Fatalf("usage: report-page [-hostile] [-turn=T] PAGE AUDIT")
	}
	page, trail := ts.MkAbs(args[0]), ts.MkAbs(args[1])
	fi, err := os.Stat(page)
	ts.Check(err)
	if fi.Mode().Perm() != 0o600 {
		ts.Fatalf("report-page: %s has mode %v, want 0600", page, fi.Mode().Perm())
	}
	dom := string(chromium(ts, page, "--dump-dom"))
	if !strings.Contains(dom, "spear-shell turn report") {
		ts.Fatalf("report-page: the DOM is not the report:\n%.2000s", dom)
	}

	type turnKey struct{ session, turn string }
	codes := map[turnKey]map[string]int{}
	intents := map[string]string{} // audit id -> turn, until its outcome
	calls := 0
	f, err := os.Open(trail)
	ts.Check(err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var r struct {
			Event, Turn, Session, Code, Phase string
			AuditID                           string  `json:"audit_id"`
			MS                                float64 `json:"duration_ms"`
		}
		if json.Unmarshal(sc.Bytes(), &r) != nil || only != "" && r.Turn != only {
			continue
		}
		k := turnKey{r.Session, r.Turn}
		if codes[k] == nil {
			codes[k] = map[string]int{}
		}
		switch {
		case r.Event == "capability_refused":
			codes[k][r.Code]++
		case r.Event == "capability_invoked" && r.Phase == "intent":
			intents[r.AuditID] = r.Turn
		case r.Event == "capability_invoked":
			delete(intents, r.AuditID)
			code := r.Code
			if code == "" {
				code = "ok"
			}
			codes[k][code]++
			calls++
			row := fmt.Sprintf(`data-kind="call" data-decision="%s" data-ms="%.1f" data-audit-id="%s"`, code, r.MS, r.AuditID)
			if !strings.Contains(dom, row) {
				ts.Fatalf("report-page: the DOM has no row %s", row)
			}
		}
	}
	ts.Check(sc.Err())
	for id, turn := range intents {
		row := fmt.Sprintf(`data-kind="call" data-decision="no-outcome" data-audit-id="%s"`, id)
		if !strings.Contains(dom, row) {
			ts.Fatalf("report-page: the DOM has no row %s (turn %s)", row, turn)
		}
		codes[turnKey{"", ""}] = nil
	}
	checked := 0
	for k, byCode := range codes {
		if byCode == nil {
			continue
		}
		start := strings.Index(dom, fmt.Sprintf(`data-turn="%s" data-session="%s"`, k.turn, k.session))
		if start < 0 {
			ts.Fatalf("report-page: no section for turn %q of session %q", k.turn, k.session)
		}
		section := dom[start:]
		if end := strings.Index(section, "</section>"); end >= 0 {
			section = section[:end]
		}
		for code, n := range byCode {
			cell := fmt.Sprintf(`data-code="%s">%d<`, code, n)
			if !strings.Contains(section, cell) {
				ts.Fatalf("report-page: turn %s: no %s", k.turn, cell)
			}
			checked++
		}
	}
	ts.Logf("report-page: %d calls, %d intents without outcome and %d decision counts found in the DOM", calls, len(intents), checked)
	if hostile {
		checkHostileDOM(ts, dom)
	}
	dir := os.Getenv("SPEAR_TEST_ARTEFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "spear-report-artefacts")
	}
	ts.Check(os.MkdirAll(dir, 0o755))
	shot := filepath.Join(dir, filepath.Base(filepath.Dir(page))+"-"+strings.TrimSuffix(filepath.Base(page), ".html")+".png")
	chromium(ts, page, "--screenshot="+shot, "--window-size=1280,1600")
	if fi, err := os.Stat(shot); err != nil || fi.Size() == 0 {
		ts.Fatalf("report-page: no screenshot at %s: %v", shot, err)
	}
	ts.Logf("report-page: screenshot %s", shot)
}

// markup a page may hold: anything else that looks like an element or a handler came from the
// audit and was not escaped.
var (
	scriptTag   = regexp.MustCompile(`(?i)<script`)
	handlerAttr = regexp.MustCompile(`(?i)<[a-z][^>]*\son[a-z]+\s*=`)
	markedAttr  = regexp.MustCompile(`(?i)<[a-z][^>]*\s(data-pwned|id="pwned")`)
)

// checkHostileDOM: the hostile strings are there as text, and none became markup or ran (a
// script that ran would have set the title, an attribute on body or an element with id pwned).
func checkHostileDOM(ts *testscript.TestScript, dom string) {
	for _, re := range []*regexp.Regexp{scriptTag, handlerAttr, markedAttr} {
		if m := re.FindString(dom); m != "" {
			ts.Fatalf("report-page: the DOM holds markup from the audit: %q", m)
		}
	}
	if strings.Contains(dom, "<title>PWNED") || strings.Contains(dom, "\x1b") {
		ts.Fatalf("report-page: a script ran, or an escape reached the page")
	}
	for _, text := range []string{"&lt;script&gt;", "onerror=", "&lt;img"} {
		if !strings.Contains(dom, text) {
			ts.Fatalf("report-page: the hostile text %q is not shown as text", text)
		}
	}
	if !strings.Contains(dom, "…") {
		ts.Fatalf("report-page: the 64 KiB strings are not shown cut")
	}
	ts.Logf("report-page: the hostile audit rendered as text, no script ran")
}

// big-invoke N CAP FILE: appends to FILE a session line invoking CAP with one string argument
// of N bytes that opens with a <script> and an escape sequence (an agent's hostile arguments).
func cmdBigInvoke(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: big-invoke N CAP FILE")
	}
	var n int
	_, err := fmt.Sscan(args[0], &n)
	ts.Check(err)
	head := `<script>document.title=\"PWNED\"</script>\u001b[31m`
	line := fmt.Sprintf("spear-capability invoke %s '{\"big\":\"%s%s\"}'\n", args[1], head, strings.Repeat("A", max(n-len(head), 0)))
	f, err := os.OpenFile(ts.MkAbs(args[2]), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	ts.Check(err)
	_, err = f.WriteString(line)
	ts.Check(err)
	ts.Check(f.Close())
}

// interleaved FILE A B: some record of turn B lies between two records of turn A in the trail
// FILE (two turns ran at once), so that a report of it meets interleaved turns.
func cmdInterleaved(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: interleaved FILE A B")
	}
	b, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	state := 0 // 1: seen A, 2: then B, 3: then A again
	for _, line := range bytes.Split(b, []byte("\n")) {
		var r struct{ Turn string }
		if json.Unmarshal(line, &r) != nil {
			continue
		}
		switch {
		case r.Turn == args[1] && (state == 0 || state == 2):
			state++
		case r.Turn == args[2] && state == 1:
			state = 2
		}
	}
	if state != 3 {
		ts.Fatalf("interleaved: the records of %s and %s do not interleave in %s", args[1], args[2], args[0])
	}
}
