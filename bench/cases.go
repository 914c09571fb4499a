package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// benchCase is one group of rows; run never panics on a product failure, it reports a row
// that does not hold.
type benchCase struct {
	id  string
	run func(context.Context, *world) []row
}

var cases = []benchCase{
	{"c-true", caseCTrue},
	{"script", caseScript},
	{"interactive", caseInteractive},
	{"cold-invoke", caseColdInvoke},
	{"warm-invoke", caseWarmInvoke},
	{"warm-turn", caseWarmTurn},
	{"turn-start", caseTurnStart},
	{"tools-10k", caseTools10k},
	{"memory-flat", caseMemoryFlat},
	{"isolation", caseIsolation},
	{"mcpstdio-cold", caseClientCold},
	{"mcpstdio-warm", caseClientWarm},
	{"face-search", caseFaceSearch},
	{"first-search", caseFirstSearch},
	{"search-list", caseSearchList},
	{"answers-10k", caseAnswers10k},
	{"face-invoke", caseFaceInvoke},
	{"face-start", caseFaceStart},
	{"report", caseReport},
	{"broker", caseBroker},
}

// timed returns a side that runs s (made afresh by mk, outside the timing) and checks its
// output with check.
func timed(w *world, mk func() (spec, error), check func(outcome) error) func(context.Context) (float64, error) {
	return func(ctx context.Context) (float64, error) {
		s, err := mk()
		if err != nil {
			return 0, err
		}
		o, err := w.run(ctx, s)
		if err != nil {
			return 0, err
		}
		if check != nil {
			if err := check(o); err != nil {
				return 0, err
			}
		}
		return ms(o.elapsed), nil
	}
}

func fixed(s spec) func() (spec, error) { return func() (spec, error) { return s, nil } }

// contains checks that stdout holds every want.
func contains(want ...string) func(outcome) error {
	return func(o outcome) error {
		out := o.stdout.String()
		for _, s := range want {
			if !strings.Contains(out, s) {
				return fmt.Errorf("stdout lacks %q; it ends: %q; stderr: %s", s, lastLines(out, 3), lastLines(o.stderr.String(), 3))
			}
		}
		return nil
	}
}

func caseCTrue(ctx context.Context, w *world) []row {
	const (
		n1, n2 = "spear-shell -c true vs a Go program that only execs bash", "spear-shell -c true vs bash -c true"
		n3, n4 = "the binary of " + baselineCommit + ", -c true, vs a Go program that only execs bash", "spear-shell -c true vs the binary of " + baselineCommit
	)
	fail := func(err error) []row {
		return []row{failed(n1, "ratio <= 1.10", err), failed(n2, "reported", err), failed(n3, "reported", err), failed(n4, "reported", err)}
	}
	h, err := w.newHome("c-true", []provider{{id: "bench", tools: 1}}, "none")
	if err != nil {
		return fail(err)
	}
	sides := []func(context.Context) (float64, error){
		timed(w, fixed(spec{argv: []string{w.spear, "-c", "true"}, env: h.env}), nil),
		timed(w, fixed(spec{argv: []string{w.tool("execbash"), "-c", "true"}, env: h.env}), nil),
		timed(w, fixed(spec{argv: []string{"/bin/bash", "-c", "true"}, env: h.env}), nil),
	}
	// The baseline binary in the same alternation, with a state parent of its own: sharing one
	// would make each binary replace the other's stub link at every run.
	base, why := w.baselineBinary(ctx)
	if base != "" {
		bh, err := w.newHome("c-true-baseline", []provider{{id: "bench", tools: 1}}, "none")
		if err != nil {
			return fail(err)
		}
		sides = append(sides, timed(w, fixed(spec{argv: []string{base, "-c", "true"}, env: bh.env}), nil))
	}
	got, err := alternate(ctx, w.runs(300), sides...)
	if err != nil {
		return fail(err)
	}
	a := median(got[0])
	rows := []row{judge(n1, a, median(got[1]), "ms", 1.10), judge(n2, a, median(got[2]), "ms", 0)}
	if base == "" {
		return append(rows, skipped(n3, "reported", why), skipped(n4, "reported", why))
	}
	b := median(got[3])
	return append(rows, judge(n3, b, median(got[1]), "ms", 0), judge(n4, a, b, "ms", 0))
}

// forwardedCommands are the 1,000 commands of the session cases: echo, cd and arithmetic in
// turn, the last one printing what the others built up; last is the line it must print.
func forwardedCommands(w *world) (cmds []string, last string) {
	x, dir := 0, ""
	for i := range 999 {
		switch i % 3 {
		case 0:
			cmds = append(cmds, fmt.Sprintf("echo line %d", i))
		case 1:
			dir = []string{"a", "b"}[i/3%2]
			cmds = append(cmds, "cd "+filepath.Join(w.ws, dir))
		default:
			cmds = append(cmds, "x=$((x+1))")
			x++
		}
	}
	return append(cmds, `echo "x=$x in ${PWD##*/}"`), fmt.Sprintf("x=%d in %s\n", x, dir)
}

func caseScript(ctx context.Context, w *world) []row {
	const (
		name, target = "1,000 forwarded commands piped to a session vs bash -s", "ratio <= 1.30"
		termName     = "the same session under a terminal's envelopes (terminal-bench) vs bash -s"
		floorName    = "a Go program piping the same script to bash -s vs bash -s"
	)
	fail := func(err error) []row {
		return []row{failed(name, target, err), failed(termName, "reported", err), failed(floorName, "reported", err)}
	}
	h, err := w.newHome("script", []provider{{id: "bench", tools: 1}}, "none")
	if err != nil {
		return fail(err)
	}
	// A manifest naming an agent terminal makes every unit a question for its envelopes.
	tb, err := w.newHome("script-tbench", []provider{{id: "bench", tools: 1}}, "none")
	if err == nil {
		tb.terminal = "terminal-bench"
		err = tb.newTurn()
	}
	if err != nil {
		return fail(err)
	}
	cmds, last := forwardedCommands(w)
	script := []byte(strings.Join(cmds, "\n") + "\n")
	bash := spec{argv: []string{"/bin/bash", "-s"}, env: h.env, stdin: script}
	ref, err := w.run(ctx, bash)
	if err != nil {
		return fail(err)
	}
	want := ref.stdout.String()
	if !strings.HasSuffix(want, last) {
		return fail(fmt.Errorf("bash -s printed an unexpected end: %q", lastLines(want, 2)))
	}
	same := func(o outcome) error {
		if got := o.stdout.String(); got != want {
			return fmt.Errorf("stdout differs from bash -s: ends %q, want %q", lastLines(got, 2), lastLines(want, 2))
		}
		return nil
	}
	// A bare pass-through in front of bash -s (bench/pipebash) runs in the same alternation.
	got, err := alternate(ctx, w.runs(40),
		timed(w, fixed(spec{argv: []string{w.spear}, env: h.env, stdin: script}), same),
		timed(w, fixed(bash), same),
		timed(w, fixed(spec{argv: []string{w.tool("pipebash")}, env: h.env, stdin: script}), same),
		timed(w, fixed(spec{argv: []string{w.spear}, env: tb.env, stdin: script}), same),
	)
	if err != nil {
		return fail(err)
	}
	b := median(got[1])
	return []row{judge(name, median(got[0]), b, "ms", 1.30), judge(termName, median(got[3]), b, "ms", 0),
		judge(floorName, median(got[2]), b, "ms", 0)}
}

func caseInteractive(ctx context.Context, w *world) []row {
	const name, target = "the same commands one at a time, waiting for each (per command)", "<= 0.5 ms added"
	h, err := w.newHome("interactive", []provider{{id: "bench", tools: 1}}, "none")
	if err != nil {
		return []row{failed(name, target, err)}
	}
	cmds, last := forwardedCommands(w)
	var want string
	side := func(argv []string) func(context.Context) (float64, error) {
		return func(ctx context.Context) (float64, error) {
			per, out, err := w.interactive(ctx, argv, h.env, cmds)
			if err != nil {
				return 0, err
			}
			if want == "" {
				want = out
			}
			if out != want || !strings.HasSuffix(out, last) {
				return 0, fmt.Errorf("output differs: ends %q, want %q", lastLines(out, 2), lastLines(want, 2))
			}
			return median(per), nil
		}
	}
	got, err := alternate(ctx, w.runs(7), side([]string{w.spear}), side([]string{"/bin/bash", "-s"}))
	if err != nil {
		return []row{failed(name, target, err)}
	}
	a, b := median(got[0]), median(got[1])
	r := judge(name, a, b, "ms", 0)
	r.target, r.holds = target, yesNo(a-b <= 0.5)
	r.note = fmt.Sprintf("%s: %.3f ms added per command (median of per-run medians over %d commands)", name, a-b, len(cmds))
	return []row{r}
}

// interactive drives a session the way an agent terminal does: it writes one command and a
// marker echo, and waits for the marker before the next. It returns each command's round
// trip in ms and the output without the markers.
func (w *world) interactive(ctx context.Context, argv, env, cmds []string) ([]float64, string, error) {
	ctx, cancel := context.WithTimeout(ctx, maxRun)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env, cmd.WaitDelay = w.ws, env, time.Second
	stderr := newTail(16 << 10)
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, "", err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	per, out, err := converse(stdin, bufio.NewReader(stdout), cmds)
	stdin.Close()
	_, _ = io.Copy(io.Discard, stdout)
	werr := cmd.Wait()
	if err == nil && werr != nil {
		err = werr
	}
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w: %s", filepath.Base(argv[0]), err, lastLines(stderr.String(), 3))
	}
	return per, out, nil
}

func converse(stdin io.Writer, stdout *bufio.Reader, cmds []string) ([]float64, string, error) {
	per := make([]float64, 0, len(cmds))
	var out strings.Builder
	for i, c := range cmds {
		marker := fmt.Sprintf("__bench_done_%d__", i)
		start := time.Now()
		if _, err := io.WriteString(stdin, c+"\necho "+marker+"\n"); err != nil {
			return nil, "", fmt.Errorf("command %d: write: %w", i, err)
		}
		for {
			line, err := stdout.ReadString('\n')
			if err != nil {
				return nil, "", fmt.Errorf("command %d: read: %w", i, err)
			}
			if line == marker+"\n" {
				break
			}
			out.WriteString(line)
		}
		per = append(per, ms(time.Since(start)))
	}
	return per, out.String(), nil
}

// invokeLine is the invocation of echo with message msg.
func invokeLine(capability, msg string) string {
	return fmt.Sprintf(`spear-capability invoke %s '{"message":%q}'`, capability, msg)
}

// invokeScript is n invocations of bench/echo, the i-th with the message sdkclient sends.
func invokeScript(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		msg := "hi"
		if i > 0 {
			msg = fmt.Sprintf("hi %d", i)
		}
		b.WriteString(invokeLine("bench/echo", msg) + "\n")
	}
	return b.Bytes()
}

// inTurn is a spec in a new turn of h each time it is made.
func inTurn(h *home, s spec) func() (spec, error) {
	return func() (spec, error) { return s, h.newTurn() }
}

func caseColdInvoke(ctx context.Context, w *world) []row {
	const name, target = "-c invoke of a READ tool, cold vs go-sdk client start+initialize+list+call", "ratio <= 1.10"
	h, err := w.newHome("cold", []provider{{id: "bench", tools: 1}}, "none")
	if err != nil {
		return []row{failed(name, target, err)}
	}
	got, err := alternate(ctx, w.runs(60),
		timed(w, inTurn(h, spec{argv: []string{w.spear, "-c", invokeLine("bench/echo", "hi")}, env: h.env}), contains("hi")),
		timed(w, fixed(spec{argv: []string{w.tool("sdkclient"), "-n", "1", "--", w.tool("slowprovider"), "-init-ms", "0", "-tools", "1"}, env: h.env}), contains("hi\n")),
	)
	return []row{judged(name, target, got, err, 1.10)}
}

func caseWarmInvoke(ctx context.Context, w *world) []row {
	const name, target = "1,000 invokes in one session vs go-sdk client, 1,000 calls on one session", "ratio <= 1.25"
	h, err := w.newHome("warm", []provider{{id: "bench", tools: 1}}, "none")
	if err != nil {
		return []row{failed(name, target, err)}
	}
	got, err := alternate(ctx, w.runs(9),
		timed(w, inTurn(h, spec{argv: []string{w.spear}, env: h.env, stdin: invokeScript(1000)}), contains("hi 999")),
		timed(w, fixed(spec{argv: []string{w.tool("sdkclient"), "-n", "1000", "--", w.tool("slowprovider"), "-init-ms", "0", "-tools", "1"}, env: h.env}), contains("hi 999\n")),
	)
	return []row{judged(name, target, got, err, 1.25)}
}

// providers returns n providers p01, p02, ... each slow by initMS, serving tools(i) tools.
func providers(n, initMS int, tools func(i int) int) []provider {
	out := make([]provider, n)
	for i := range out {
		out[i] = provider{id: fmt.Sprintf("p%02d", i+1), initMS: initMS, tools: tools(i)}
	}
	return out
}

func caseTurnStart(ctx context.Context, w *world) []row {
	const (
		name, target = "turn start (--context), 20 providers 50 ms slow vs one", "ratio <= 1.30"
		sdkName      = "the go-sdk client starting those 20 providers at once vs one"
		bareName     = "a bare client (fork, initialize, list, close) doing the same"
		versusName   = "turn start with 20 providers: spear-shell vs the go-sdk client"
	)
	fail := func(err error) []row {
		return []row{failed(name, target, err), failed(sdkName, "reported", err),
			failed(bareName, "reported", err), failed(versusName, "reported", err)}
	}
	one := func(int) int { return 1 }
	many, err := w.newHome("start20", providers(20, 50, one), "none")
	if err != nil {
		return fail(err)
	}
	single, err := w.newHome("start1", providers(1, 50, one), "none")
	if err != nil {
		return fail(err)
	}
	// The same start-up without spear-shell, which is what this machine allows any gateway:
	// the official client, and a client that does nothing but start the servers, initialize
	// them and list their tools (bench/bareclient), each starting 20 such servers at once
	// against one. All six sides run in one alternation, so the rows compare times taken side
	// by side.
	server := []string{w.tool("slowprovider"), "-init-ms", "50", "-tools", "1"}
	client := func(k int, tool string, flags ...string) func(context.Context) (float64, error) {
		argv := append(append([]string{w.tool(tool), "-parallel", strconv.Itoa(k)}, flags...), "--")
		return timed(w, fixed(spec{argv: append(argv, server...), env: many.env}), nil)
	}
	got, err := alternate(ctx, w.runs(21),
		timed(w, inTurn(many, spec{argv: []string{w.spear, "--context"}, env: many.env}), contains("p01/echo", "p20/echo")),
		timed(w, inTurn(single, spec{argv: []string{w.spear, "--context"}, env: single.env}), contains("p01/echo")),
		client(20, "sdkclient", "-n", "0"), client(1, "sdkclient", "-n", "0"),
		client(20, "bareclient"), client(1, "bareclient"),
	)
	if err != nil {
		return fail(err)
	}
	m := make([]float64, len(got))
	for i, g := range got {
		m[i] = median(g)
	}
	return []row{
		judge(name, m[0], m[1], "ms", 1.30),
		judge(sdkName, m[2], m[3], "ms", 0),
		judge(bareName, m[4], m[5], "ms", 0),
		judge(versusName, m[0], m[2], "ms", 0),
	}
}

func caseTools10k(ctx context.Context, w *world) []row {
	const (
		name1, target1 = "10,000 tools from 20 providers vs 10 tools: list, describe, invoke", "ratio <= 3.00"
		name2, target2 = "peak memory of that session, 10,000 tools vs 10", "< 150 MiB"
	)
	fail := func(err error) []row { return []row{failed(name1, target1, err), failed(name2, target2, err)} }
	big, err := w.newHome("tools10k", providers(20, 0, func(int) int { return 500 }), "none")
	if err != nil {
		return fail(err)
	}
	// The same 20 provider processes, so the ratio measures what the tools cost: p01-p10
	// serve echo alone, p11-p20 nothing.
	small, err := w.newHome("tools10", providers(20, 0, func(i int) int { return 1 - i/10 }), "none")
	if err != nil {
		return fail(err)
	}
	script := []byte(strings.Join([]string{
		"spear-capability list",
		"spear-capability describe p07/echo",
		invokeLine("p07/echo", "found"),
	}, "\n") + "\n")
	var rss [2][]float64
	side := func(k int, h *home, want ...string) func(context.Context) (float64, error) {
		check := contains(want...)
		return func(ctx context.Context) (float64, error) {
			if err := h.newTurn(); err != nil {
				return 0, err
			}
			o, err := w.run(ctx, spec{argv: []string{w.spear}, env: h.env, stdin: script})
			if err != nil {
				return 0, err
			}
			if err := check(o); err != nil {
				return 0, err
			}
			rss[k] = append(rss[k], float64(o.maxRSS)/1024)
			return ms(o.elapsed), nil
		}
	}
	got, err := alternate(ctx, w.runs(7),
		side(0, big, "p20/t0499", "found"),
		side(1, small, "p10/echo", "found"))
	if err != nil {
		return fail(err)
	}
	// The warm-up's memory counts too: the peak is a property of every run.
	memA, memB := median(rss[0]), median(rss[1])
	peak := math.Inf(-1)
	for _, v := range rss[0] {
		peak = max(peak, v)
	}
	mem := judge(name2, memA, memB, "MiB", 0)
	mem.target, mem.holds = target2, yesNo(peak < 150)
	mem.note = fmt.Sprintf("%s: highest peak over %d runs %.1f MiB", name2, len(rss[0]), peak)
	return []row{judge(name1, median(got[0]), median(got[1]), "ms", 3), mem}
}

func caseMemoryFlat(ctx context.Context, w *world) []row {
	const name, target = "peak memory of a session, 10,000 invokes vs 1,000", "within 10%"
	h, err := w.newHome("flat", []provider{{id: "bench", tools: 1}}, "none")
	if err != nil {
		return []row{failed(name, target, err)}
	}
	side := func(n int) func(context.Context) (float64, error) {
		script := invokeScript(n)
		check := contains(fmt.Sprintf("hi %d", n-1))
		return func(ctx context.Context) (float64, error) {
			if err := h.newTurn(); err != nil {
				return 0, err
			}
			o, err := w.run(ctx, spec{argv: []string{w.spear}, env: h.env, stdin: script})
			if err != nil {
				return 0, err
			}
			if err := check(o); err != nil {
				return 0, err
			}
			w.logf("%d invokes: %s, peak %.1f MiB", n, o.elapsed.Round(time.Millisecond), float64(o.maxRSS)/1024)
			return float64(o.maxRSS) / 1024, nil
		}
	}
	got, err := alternate(ctx, w.runs(2), side(10000), side(1000))
	if err != nil {
		return []row{failed(name, target, err)}
	}
	a, b := median(got[0]), median(got[1])
	r := judge(name, a, b, "MiB", 0)
	r.target, r.holds = target, yesNo(math.Abs(a/b-1) <= 0.10)
	return []row{r}
}

// caseIsolation compares spear-shell -c true inside the boundary with a minimal Go program
// that execs bwrap with the very options spear-shell used: those are read from inside the
// boundary, where PID 1 is bwrap itself (/proc/1/cmdline and /proc/1/environ).
func caseIsolation(ctx context.Context, w *world) []row {
	const (
		name, target = "spear-shell -c true in the boundary vs a Go program exec'ing bwrap", "ratio <= 1.10"
		floorName    = "a Go program that forks that bwrap, passes signals on and waits vs exec'ing it"
	)
	if _, err := exec.LookPath("bwrap"); err != nil {
		return []row{skipped(name, target, "bwrap is not on PATH (install bubblewrap)")}
	}
	h, err := w.newHome("isolation", []provider{{id: "bench", tools: 1}}, "bwrap")
	if err != nil {
		return []row{failed(name, target, err)}
	}
	ref, env, err := recordBwrap(ctx, w, h)
	if err != nil {
		return []row{skipped(name, target, fmt.Sprintf("spear-shell -c under SPEAR_ISOLATION=bwrap does not run here: %v", err))}
	}
	w.logf("bwrap argv: %q", ref)
	// The floor of any parent that stays to pass signals on is a Go program doing only that
	// (bench/forkbwrap); all three sides run in one alternation.
	got, err := alternate(ctx, w.runs(200),
		timed(w, fixed(spec{argv: []string{w.spear, "-c", "true"}, env: h.env}), nil),
		timed(w, fixed(spec{argv: append([]string{w.tool("execbwrap")}, ref...), env: env}), nil),
		timed(w, fixed(spec{argv: append([]string{w.tool("forkbwrap")}, ref...), env: env}), nil),
	)
	if err != nil {
		return []row{failed(name, target, err), failed(floorName, "reported", err)}
	}
	spear, execed, forked := median(got[0]), median(got[1]), median(got[2])
	return []row{judge(name, spear, execed, "ms", 1.10), judge(floorName, forked, execed, "ms", 0)}
}

// recordBwrap runs `spear-shell -c true` once with bench/bwraprec standing in for bwrap
// (SPEAR_BWRAP), and returns the argv and environment bwrap got, options passed on a
// descriptor included: the reference runs bwrap with exactly those.
func recordBwrap(ctx context.Context, w *world, h *home) (argv, env []string, err error) {
	real, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, nil, err
	}
	dir := filepath.Join(w.root, "bwraprec")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	rec, err := os.ReadFile(w.tool("bwraprec"))
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "bwrap"), rec, 0o755)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "real"), []byte(real), 0o644)
	}
	if err != nil {
		return nil, nil, err
	}
	out := filepath.Join(dir, "record")
	e := append(slices.Clone(h.env), "SPEAR_BWRAP="+filepath.Join(dir, "bwrap"))
	if _, err := w.run(ctx, spec{argv: []string{w.spear, "-c", "true"}, env: e}); err != nil {
		return nil, nil, err
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return nil, nil, err
	}
	return parseBwrapRecord(b)
}

// parseBwrapRecord reads what bwraprec wrote: the argv of a shell's -c true NAME, and the environment.
func parseBwrapRecord(b []byte) (argv, env []string, err error) {
	a, v, ok := strings.Cut(string(b), "\n\n")
	if !ok {
		return nil, nil, errors.New("bwrap record: no blank line between argv and environment")
	}
	argv, env = strings.Split(a, "\x00"), strings.Split(v, "\x00")
	// The shell gets spear-shell's argv[0] as $0 after the string, as bash run by that name has it.
	if n := len(argv); n < 6 || argv[n-5] != "--" || argv[n-3] != "-c" || argv[n-2] != "true" {
		return nil, nil, fmt.Errorf("bwrap ran %q, not a shell's -c true", argv)
	}
	return argv, env, nil
}

// The mcpstdio rows (issue 3) compare spear-shell's client alone with the go-sdk client:
// both helpers do the same start, initialize, list and calls on the same server binary.

func clientSpec(w *world, client string, n int, report bool) spec {
	argv := []string{w.tool(client), "-n", strconv.Itoa(n)}
	if report {
		argv = append(argv, "-report")
	}
	argv = append(argv, "--", w.tool("slowprovider"), "-init-ms", "0", "-tools", "1")
	return spec{argv: argv}
}

func caseClientCold(ctx context.Context, w *world) []row {
	const name, target = "mcpstdio cold: start+initialize+list+call+close vs go-sdk client", "ratio <= 1.05"
	got, err := alternate(ctx, w.runs(60),
		timed(w, fixed(clientSpec(w, "mcpclient", 1, false)), contains("hi\n")),
		timed(w, fixed(clientSpec(w, "sdkclient", 1, false)), contains("hi\n")),
	)
	return []row{judged(name, target, got, err, 1.05)}
}

func caseClientWarm(ctx context.Context, w *world) []row {
	const name, target = "mcpstdio warm: one call on an open session vs go-sdk client", "ratio <= 1.10"
	const calls = 1000
	side := func(client string) func(context.Context) (float64, error) {
		return func(ctx context.Context) (float64, error) { return warmCallMS(ctx, w, client, calls) }
	}
	got, err := alternate(ctx, w.runs(9), side("mcpclient"), side("sdkclient"))
	return []row{judged(name, target, got, err, 1.10)}
}
