package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// checkAll runs every terminal with plain bash (the oracle for forwarded steps), then with
// spear-shell in each isolation mode, and prints one line per terminal and mode.
func checkAll(o options) int {
	shell := filepath.Join(o.bin, "spear-shell")
	bad := 0
	for _, t := range o.terminals {
		if o.mcpOnly {
			continue
		}
		base, err := runOnce(o, t, "/bin/bash", "bash", "none")
		if base != nil {
			base.run.close()
		}
		if err != nil {
			fmt.Printf("%-44s bash run failed: %v\n", t.label(), err)
			bad++
			continue
		}
		for _, mode := range o.isolation {
			res, err := runOnce(o, t, shell, "spear-"+mode, mode)
			if err != nil {
				fmt.Printf("%-44s %-5s run failed: %v\n", t.label(), mode, err)
				bad++
				continue
			}
			ok, faults := judge(res, base, t.twoPipes)
			if f := endTurn(res.run, shell); f != "" {
				faults = append(faults, "end of turn: "+f)
			}
			res.run.close()
			fmt.Printf("%-44s %-5s %2d/%d steps as expected  %5.1fs\n", t.label(), mode, ok, len(steps), res.elapsed.Seconds())
			for _, f := range faults {
				fmt.Println("    " + f)
			}
			if t.shellArg {
				fmt.Println("    " + probeShellArg(o, t, mode))
				if f := closedShellArg(o, t, mode); f != "" {
					faults = append(faults, f)
					fmt.Println("    " + f)
				}
			}
			if o.verbose {
				printSteps(res)
			}
			if len(faults) > 0 {
				bad++
			}
		}
	}
	// The MCP rows, after every shell row.
	for _, t := range o.terminals {
		if t.mcpResult == nil {
			continue
		}
		for _, mode := range o.isolation {
			if !checkMCP(o, t, mode) {
				bad++
			}
		}
	}
	if bad > 0 {
		return 1
	}
	return 0
}

// A result is one run's steps as handed back to the model, with the audit records of each.
type result struct {
	run     *run
	outs    []string
	codes   []int
	audit   [][]auditRecord
	elapsed time.Duration
}

func runOnce(o options, t *terminal, target, label, mode string) (*result, error) {
	dir := filepath.Join(o.work, t.dirName()+"-"+label)
	r, err := newRun(dir, o.cli, o.bin, target, mode, t)
	if err != nil {
		return nil, err
	}
	tt := drive(r, t, scriptOf(steps), nil, nil)
	if tt.err != nil {
		if target != "/bin/bash" {
			endTurn(r, target)
		}
		r.close()
		return nil, tt.err
	}
	res := &result{run: r, elapsed: tt.elapsed, outs: make([]string, len(steps)), codes: make([]int, len(steps)),
		audit: make([][]auditRecord, len(steps))}
	for _, rec := range tt.records {
		out, code := t.result(rec)
		res.outs[rec.Step] = strings.ReplaceAll(out, r.dir, "$RUN")
		res.codes[rec.Step] = code
	}
	for n := range steps {
		end := tt.auditEnd
		if n+1 < len(steps) {
			end = tt.auditAt[n+1]
		}
		if res.audit[n], err = auditBetween(r.audit, tt.auditAt[n], end); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// judge counts the steps as expected and describes the others.
func judge(res, base *result, twoPipes bool) (int, []string) {
	ok := 0
	var faults []string
	for n, st := range steps {
		var f string
		if st.answered {
			f = judgeAnswered(st, res.outs[n], res.codes[n], res.audit[n])
		} else {
			out, bashOut := res.outs[n], base.outs[n]
			if twoPipes {
				out, bashOut = sortedLines(out), sortedLines(bashOut)
			}
			f = judgeForwarded(out, res.codes[n], bashOut, base.codes[n], res.audit[n])
		}
		if f == "" {
			ok++
			continue
		}
		faults = append(faults, fmt.Sprintf("step %d (%s): %s", n, st.name, f))
	}
	return ok, faults
}

func printSteps(res *result) {
	for n, st := range steps {
		fmt.Fprintf(os.Stdout, "    %2d %-18s exit %-3d %s\n", n, st.name, res.codes[n], brief(res.outs[n]))
	}
}

func sortedLines(s string) string {
	lines := strings.SplitAfter(s, "\n")
	sort.Strings(lines)
	return strings.Join(lines, "")
}

// tryAll runs o.try alone through each terminal and mode and prints what came back.
func tryAll(o options) int {
	for _, t := range o.terminals {
		for _, mode := range o.isolation {
			dir := filepath.Join(o.work, t.dirName()+"-try-"+mode)
			r, err := newRun(dir, o.cli, o.bin, filepath.Join(o.bin, "spear-shell"), mode, t)
			if err != nil {
				fmt.Fprintf(os.Stderr, "check: %v\n", err)
				return 1
			}
			var extra map[int]map[string]any
			if o.tryShell != "" {
				extra = map[int]map[string]any{0: {"shell": o.tryShell}}
			}
			tt := drive(r, t, []string{o.try}, extra, nil)
			endTurn(r, filepath.Join(o.bin, "spear-shell"))
			r.close()
			fmt.Printf("== %s %s (%s)\n", t.label(), mode, dir)
			if tt.err != nil {
				fmt.Printf("run failed: %v\n", tt.err)
				continue
			}
			for _, rec := range tt.records {
				out, code := t.result(rec)
				fmt.Printf("exit %d\n%s\n", code, out)
			}
		}
	}
	return 0
}

// endTurn does what the recipe's deployment does when the terminal's turn is over: spear-shell
// --end-turn with the turn's manifest. It must exit 0 and record turn_ended; it also stops the
// turn's keeper, which would otherwise keep the providers for keep_providers seconds. Then the
// turn's once-only records must each be there once, however many processes answered.
func endTurn(r *run, shell string) string {
	before := fileSize(r.audit)
	cmd := exec.Command(shell, "--end-turn")
	cmd.Env, cmd.Dir = r.env(), r.work
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Sprintf("spear-shell --end-turn: %v: %s", err, brief(string(out)))
	}
	recs, err := auditEvents(r.audit, before, fileSize(r.audit))
	if err != nil {
		return err.Error()
	}
	if !slices.Contains(recs, "turn_ended") {
		return fmt.Sprintf("spear-shell --end-turn recorded %v, no turn_ended", recs)
	}
	all, err := auditEvents(r.audit, 0, fileSize(r.audit))
	if err != nil {
		return err.Error()
	}
	for _, once := range []string{"turn_started", "capability_family_selected", "turn_ended"} {
		if n := count(all, once); n != 1 {
			return fmt.Sprintf("the turn recorded %s %d times, want once", once, n)
		}
	}
	return ""
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// probeShellArg shows where a command runs when the model names another shell (SPEC 9: the
// deployment must close this; docs/harnesses.md says how). It is reported, not judged: the check
// sets the terminal up as the recipe says, and the recipe leaves the closing to the deployment.
func probeShellArg(o options, t *terminal, mode string) string {
	const probe = `echo "$(readlink /proc/$$/exe), parent $(cat /proc/$PPID/comm), boundary=${AGENT_SHELL_BOUNDARY-none}"`
	dir := filepath.Join(o.work, t.dirName()+"-shellarg-"+mode)
	r, err := newRun(dir, o.cli, o.bin, filepath.Join(o.bin, "spear-shell"), mode, t)
	if err != nil {
		return "shell argument probe: " + err.Error()
	}
	// The first command of a session may come before the shell snapshot; the probe is the second,
	// and the third says which form Codex used by then (its snapshot puts codex-path on PATH).
	const form = `case $PATH in *codex-path*) echo "the snapshot form";; *) echo "the -lc form";; esac`
	tt := drive(r, t, []string{"true", probe, form}, map[int]map[string]any{1: {"shell": "/bin/sh"}}, nil)
	endTurn(r, filepath.Join(o.bin, "spear-shell"))
	r.close()
	if tt.err != nil || len(tt.records) != 3 {
		return fmt.Sprintf("shell argument probe: %v", tt.err)
	}
	out, _ := t.result(tt.records[1])
	used, _ := t.result(tt.records[2])
	return fmt.Sprintf(`(not judged) the model's shell "/bin/sh" ran: %s; the next command came in %s`,
		strings.TrimSpace(out), strings.TrimSpace(used))
}

// closedShellArg checks the deployment's closing of the shell argument as docs/harnesses.md gives
// it (/bin/sh is spear-shell in Codex's mount namespace): the model's shell "/bin/sh" then reaches
// spear-shell, which answers, and sh inside the boundary still works.
func closedShellArg(o options, t *terminal, mode string) string {
	dir := filepath.Join(o.work, t.dirName()+"-closed-"+mode)
	shell := filepath.Join(o.bin, "spear-shell")
	r, err := newRun(dir, o.cli, o.bin, shell, mode, t)
	if err != nil {
		return "closed shell argument: " + err.Error()
	}
	r.onlySpear = true
	script := []string{"true", "spear-capability list", `sh -c 'echo "sh: $0"'`}
	tt := drive(r, t, script, map[int]map[string]any{1: {"shell": "/bin/sh"}}, nil)
	endTurn(r, shell)
	r.close()
	if tt.err != nil || len(tt.records) != 3 {
		return fmt.Sprintf("closed shell argument: %v", tt.err)
	}
	list, code := t.result(tt.records[1])
	sh, shCode := t.result(tt.records[2])
	if code != 0 || !strings.Contains(list, "notes/search_notes") || shCode != 0 || strings.TrimSpace(sh) != "sh: sh" {
		return fmt.Sprintf("closed shell argument: the model's shell /bin/sh got exit %d %s; sh inside got exit %d %s",
			code, brief(list), shCode, brief(sh))
	}
	return ""
}
