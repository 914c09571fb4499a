package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// captureScript is what the model asks for while the recorder listens: commands with their own
// `<`, a heredoc, two lines, and the capability lines whose envelopes spear-shell must see through.
var captureScript = []string{
	"echo hello; echo err >&2",
	"wc -c < README.md",
	"cat <<'EOF'\nheredoc body\nEOF",
	"echo one\necho two",
	"spear-capability list",
	"bash -c 'exit 7'",
	"echo first\n" + readInvoke,
}

// A capture is one recorded turn of a terminal; slowSnapshot holds back Codex's shell snapshot
// so that every command runs before it is ready (its -lc form).
type capture struct {
	file         string
	slowSnapshot bool
	note         string
}

func capturesOf(t *terminal) []capture {
	base := t.name + "-" + strings.Fields(t.version)[0]
	if t.name == "codex" {
		return []capture{
			{file: base + ".txt", note: "with its shell snapshot ready (the default, once the snapshot is made)"},
			{file: base + "-login.txt", slowSnapshot: true, note: "before its shell snapshot is ready (the recorder held the snapshot's making back 20 s)"},
		}
	}
	return []capture{{file: base + ".txt"}}
}

// recorder is the shell the terminal is given while capturing: it writes its arguments (NUL
// after each) to a file named by the time, then runs bash with them.
const recorder = `#!/bin/bash
f=%[1]s/$(date +%%s%%N).$$
printf '%%s\0' "$@" >"$f.tmp" && mv "$f.tmp" "$f.call"
%[2]s
exec /bin/bash "$@"
`

const slowSnapshot = `case "$*" in *__codex_snapshot_command*) sleep 20 ;; esac`

func captureAll(o options) int {
	if err := os.MkdirAll(o.capture, 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "check: %v\n", err)
		return 1
	}
	failed := 0
	for _, t := range o.terminals {
		if t.variant != "" {
			continue // a setting's form is captured with the defaults' (Codex's -lc before its snapshot)
		}
		for _, c := range capturesOf(t) {
			if err := captureOne(o, t, c); err != nil {
				fmt.Fprintf(os.Stderr, "check: capture %s: %v\n", c.file, err)
				failed++
				continue
			}
			fmt.Printf("captured %s\n", filepath.Join(o.capture, c.file))
		}
	}
	if failed > 0 {
		return 1
	}
	return 0
}

func captureOne(o options, t *terminal, c capture) error {
	dir := filepath.Join(o.work, "capture-"+strings.TrimSuffix(c.file, ".txt"))
	calls := filepath.Join(dir, "calls")
	if err := os.MkdirAll(calls, 0o755); err != nil {
		return err
	}
	delay := ""
	if c.slowSnapshot {
		delay = slowSnapshot
	}
	rec := filepath.Join(dir, "recorder")
	if err := os.WriteFile(rec, []byte(fmt.Sprintf(recorder, calls, delay)), 0o755); err != nil {
		return err
	}
	r, err := newRun(dir, o.cli, o.bin, rec, "none", t)
	if err != nil {
		return err
	}
	mark := func(n int, cmd string) {
		data := jsonString(cmd)
		name := filepath.Join(calls, fmt.Sprintf("%d.%d.step", time.Now().UnixNano(), n))
		os.WriteFile(name, []byte(data), 0o644)
	}
	defer r.close()
	tt := drive(r, t, captureScript, nil, mark)
	if tt.err != nil {
		return tt.err
	}
	return writeCapture(filepath.Join(o.capture, c.file), calls, t, c, r)
}

// writeCapture writes the calls in the order they were made, each after the step the model had
// asked for when it was made.
func writeCapture(out, calls string, t *terminal, c capture, r *run) error {
	entries, err := os.ReadDir(calls)
	if err != nil {
		return err
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "# %s %s: every shell call it made in one scripted turn%s.\n", t.name, t.version, noteOf(c))
	fmt.Fprintf(&b, "# Captured by `make harness-capture` with a recorder shell at %s (it logs its arguments\n", r.shell)
	fmt.Fprintf(&b, "# and execs /bin/bash); the run's directory was %s, the workspace %s.\n", r.dir, r.work)
	b.WriteString("# \"-- step N: CMD\" is the model's command N (JSON string) as the terminal was asked to run it;\n")
	b.WriteString("# \"== call\" is one shell process, then its arguments after argv[0], one JSON string a line.\n")
	n := 0
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(calls, name))
		if err != nil {
			return err
		}
		switch {
		case strings.HasSuffix(name, ".step"):
			step := strings.Split(name, ".")[1]
			fmt.Fprintf(&b, "\n-- step %s: %s\n", step, data)
		case strings.HasSuffix(name, ".call"):
			n++
			fmt.Fprintf(&b, "== call %d\n", n)
			args := strings.Split(string(data), "\x00")
			for _, a := range args[:len(args)-1] {
				fmt.Fprintf(&b, "%s\n", jsonString(a))
			}
		}
	}
	return os.WriteFile(out, []byte(b.String()), 0o644)
}

func noteOf(c capture) string {
	if c.note == "" {
		return ""
	}
	return ", " + c.note
}

// jsonString quotes s as JSON, leaving <, > and & as they are so the file reads like the shell text.
func jsonString(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}
