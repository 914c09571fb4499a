package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"
)

// hostile is a string an agent or a provider could put into any field of the trail: terminal
// escapes (CSI, OSC, C1), a carriage return, HTML and SVG markup, a CSS break-out and invalid
// UTF-8.
const hostile = "x\x1b[2J\x1b]0;owned\x07\r\u009b31m</title></text></svg><script>alert(1)</script>\"' onmouseover=alert(2) style=\"x:expression(1)\"}</style><img src=//evil.example/a>\xff\xfe\u202e"

// hostileTrail writes a trail whose every string field is hostile, for every event the report
// reads.
func hostileTrail(t *testing.T) string {
	t.Helper()
	var b bytes.Buffer
	rec := func(m map[string]any) {
		m["turn"], m["session"] = hostile, hostile
		line, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		// encoding/json would write invalid UTF-8 as U+FFFD: put the raw bytes back.
		line = bytes.ReplaceAll(line, []byte(`\ufffd\ufffd`), []byte("\xff\xfe"))
		b.Write(line)
		b.WriteByte('\n')
	}
	ts := "2026-12-07T10:00:00.000Z"
	rec(map[string]any{"time": ts, "event": "turn_started", "isolated": true, "isolation": hostile, "task": hostile, "project": hostile, "workspace": hostile, "permission_mode": hostile})
	rec(map[string]any{"time": ts, "event": "provider_registered", "provider": hostile})
	rec(map[string]any{"time": ts, "event": "provider_rejected", "provider": hostile + "2", "reason": hostile})
	rec(map[string]any{"time": ts, "event": "capability_family_selected", "mode": hostile, "count": 1, "providers": []any{map[string]any{"id": hostile + "3", "offered": true}}})
	rec(map[string]any{"time": ts, "event": "capability_index_exposed", "via": hostile, "face": hostile})
	rec(map[string]any{"time": ts, "event": "capability_searched", "words": hostile, "matched": 1, "shown": 1})
	rec(map[string]any{"time": ts, "event": "capability_described", "capability": hostile + "/" + hostile})
	rec(map[string]any{"time": ts, "event": "capability_preflighted", "capability": hostile, "code": hostile})
	rec(map[string]any{"time": ts, "event": "capability_invoked", "phase": "intent", "audit_id": hostile, "capability": hostile, "class": "WRITE", "arguments": hostile, "approval": hostile, "provider": hostile})
	rec(map[string]any{"time": ts, "event": "capability_invoked", "phase": "outcome", "audit_id": hostile, "capability": hostile, "code": hostile, "reason": hostile, "duration_ms": 1.5})
	rec(map[string]any{"time": ts, "event": "capability_invoked", "phase": "outcome", "audit_id": hostile + "orphan", "code": hostile})
	rec(map[string]any{"time": ts, "event": "capability_refused", "capability": hostile, "class": "WRITE", "code": hostile, "reason": hostile, "arguments": hostile})
	rec(map[string]any{"time": ts, "event": "provider_failed", "provider": hostile, "stage": hostile, "reason": hostile, "stderr": hostile})
	rec(map[string]any{"time": ts, "event": "keeper_ended", "reason": hostile})
	rec(map[string]any{"time": ts, "event": hostile, "reason": hostile, "code": hostile})
	rec(map[string]any{"time": ts, "event": "turn_ended", "reason": hostile})
	// The broker's own records.
	line, _ := json.Marshal(map[string]any{"time": ts, "event": "provider_failed", "broker": true, "provider": hostile, "share_key": hostile, "stage": hostile, "reason": hostile})
	b.Write(line)
	b.WriteString("\n" + hostile + "\n") // a line that is not a record
	path := filepath.Join(t.TempDir(), "audit\x1b[31m.jsonl")
	must(t, os.WriteFile(path, b.Bytes(), 0o600))
	return path
}

// attack: no terminal escape, carriage return or invalid UTF-8 reaches the terminal from any
// field of the trail in the text report (SPEC 16: every string cleaned as section 5 cleans a
// description).
func TestAttackTextEscapes(t *testing.T) {
	t.Parallel()
	trail := hostileTrail(t)
	for _, color := range []bool{false, true} {
		var out, errb bytes.Buffer
		if code := Main([]string{"--audit", trail}, &out, &errb, color, func(string) string { return "" }); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		text := out.String()
		if !strings.Contains(text, "alert(1)") {
			t.Fatalf("the hostile strings are not in the report at all:\n%s", text)
		}
		if !utf8.ValidString(text) {
			t.Errorf("color %v: the report holds invalid UTF-8", color)
		}
		if color {
			text = strings.NewReplacer("\x1b[1m", "", "\x1b[0m", "", "\x1b[31m", "", "\x1b[2m", "").Replace(text)
		}
		for i, r := range text {
			if (r < 0x20 && r != '\n') || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u202e' {
				t.Errorf("color %v: control character %U at byte %d reaches the terminal: %q", color, r, i, text[max(0, i-40):min(len(text), i+40)])
				break
			}
		}
	}
}

// attack: the page escapes every hostile string in every context (text, attribute, SVG title):
// no element, attribute or style of the trail's making appears in it.
func TestAttackHTMLInjection(t *testing.T) {
	t.Parallel()
	trail := hostileTrail(t)
	page := filepath.Join(t.TempDir(), "r.html")
	var out, errb bytes.Buffer
	if code := Main([]string{"--audit", trail, "--html", page}, &out, &errb, false, func(string) string { return "" }); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	b, err := os.ReadFile(page)
	must(t, err)
	html := string(b)
	if !strings.Contains(html, "alert(1)") {
		t.Fatal("the hostile strings are not in the page at all")
	}
	for _, bad := range []string{"<script", "<img", "</svg><script", "\" onmouseover", "' onmouseover", "style=\"x:", "//evil.example/a>"} {
		if strings.Contains(html, bad) {
			i := strings.Index(html, bad)
			t.Errorf("the page holds %q: %q", bad, html[max(0, i-60):min(len(html), i+60)])
		}
	}
}

// attack: --html names a symlink the agent planted (in its workspace, where an operator may
// well write a report) pointing at a file of the operator's; the page replaces the link and
// never writes through it (nor truncates, nor chmods the target).
func TestAttackHTMLThroughSymlink(t *testing.T) {
	t.Parallel()
	trail := hostileTrail(t)
	dir := t.TempDir()
	target := filepath.Join(dir, "bashrc")
	must(t, os.WriteFile(target, []byte("export KEEP=1\n"), 0o644))
	link := filepath.Join(dir, "report.html")
	must(t, os.Symlink(target, link))
	var out, errb bytes.Buffer
	code := Main([]string{"--audit", trail, "--html", link}, &out, &errb, false, func(string) string { return "" })
	got, err := os.ReadFile(target)
	must(t, err)
	if string(got) != "export KEEP=1\n" {
		t.Errorf("the page was written through the symlink into its target (exit %d): %q", code, excerpt(string(got), 80))
	}
	if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("the target's mode changed: %v %v", fi.Mode(), err)
	}
	if code == 0 {
		fi, err := os.Lstat(link)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
			t.Errorf("exit 0 but the page is not a 0600 regular file: %v %v", fi.Mode(), err)
		}
	}
	// A FIFO in the page's place must not hang the report.
	fifo := filepath.Join(dir, "fifo.html")
	must(t, syscallMkfifo(fifo))
	if code := Main([]string{"--audit", trail, "--html", fifo}, &out, &errb, false, func(string) string { return "" }); code != 0 {
		t.Logf("a FIFO in the page's place: exit %d", code)
	}
}

func syscallMkfifo(p string) error { return syscall.Mkfifo(p, 0o600) }
