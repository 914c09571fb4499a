package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/spear-shell/spear-shell/testdata/testkit"
)

// The broker group (issue 26, SPEC 14's targets): shared providers, one process for every turn
// of a project, reached through the broker.

// sharedHome is a home whose providers are shared (share project, restart_delay 0.2): every
// turn of it reaches them through the broker of its SPEAR_HOME. Its name must stay short: the
// broker's socket lies under it (at most 107 bytes).
func (w *world) sharedHome(name string, provs []provider) (*home, error) {
	h, err := w.newHome(name, provs, "none")
	if err != nil {
		return nil, err
	}
	var caps struct {
		Providers []map[string]any `json:"providers"`
	}
	file := filepath.Join(h.dir, "capabilities.json")
	b, err := os.ReadFile(file)
	if err == nil {
		err = json.Unmarshal(b, &caps)
	}
	if err != nil {
		return nil, fmt.Errorf("home %s: %w", name, err)
	}
	for _, e := range caps.Providers {
		e["share"], e["restart_delay"] = "project", 0.2
	}
	return h, writeSharedCaps(h, caps.Providers)
}

// writeSharedCaps writes h's capabilities.json with entries and the broker's audit file beside
// the turns'.
func writeSharedCaps(h *home, entries []map[string]any) error {
	base := filepath.Dir(h.manifest)
	return writeJSON(filepath.Join(h.dir, "capabilities.json"), map[string]any{
		"broker":    map[string]any{"audit": filepath.Join(base, "broker.audit")},
		"providers": entries,
	})
}

// stopBroker ends h's broker (spear-shell --broker-stop), untimed.
func (h *home) stopBroker() error {
	_, err := h.w.run(context.Background(), spec{argv: []string{h.w.spear, "--broker-stop"}, env: h.env})
	return err
}

// turnEnv writes a manifest of its own for turn name of h (a keeper's turns keep their providers
// as h's do) and returns the environment of that turn's processes.
func (h *home) turnEnv(name string) ([]string, error) {
	manifest := filepath.Join(filepath.Dir(h.manifest), name+".json")
	if err := writeJSON(manifest, map[string]any{"turn": "bench-" + h.name + "-" + name, "task": "implementation",
		"workspace": h.w.ws, "keep_providers": max(h.keep, 300)}); err != nil {
		return nil, err
	}
	env := make([]string, 0, len(h.env))
	for _, kv := range h.env {
		if !strings.HasPrefix(kv, "SPEAR_TURN_MANIFEST=") {
			env = append(env, kv)
		}
	}
	return append(env, "SPEAR_TURN_MANIFEST="+manifest), nil
}

func caseBroker(ctx context.Context, w *world) []row {
	rows := brokerSixTurns(ctx, w)
	return append(rows, brokerInvokes(ctx, w)...)
}

// brokerInvokes are the timed rows: a new turn's first invoke, and a warm invoke through the
// broker against the keeper, by -c and by spear-mcp.
func brokerInvokes(ctx context.Context, w *world) []row {
	const (
		firstName, firstTarget = "a new turn's first -c invoke of a shared provider (0.3 s start; broker warm) vs a later -c invoke of a warm turn", "ratio <= 1.50"
		warmName, warmTarget   = "warm -c invoke through the broker vs the same through the turn's keeper", "ratio <= 1.10"
		faceName, faceTarget   = "spear_invoke through spear-mcp, the broker vs the turn's keeper (per call)", "ratio <= 1.10"
	)
	fail := func(err error) []row {
		return []row{failed(firstName, firstTarget, err), failed(warmName, warmTarget, err), failed(faceName, faceTarget, err)}
	}
	provs := []provider{{id: "bench", initMS: slowStartMS, tools: 1}}
	shared, err := w.sharedHome("bs", provs)
	if err != nil {
		return fail(err)
	}
	defer shared.stopBroker()
	kept, err := w.keeperHome("bk", provs)
	if err != nil {
		return fail(err)
	}
	defer kept.endTurn()
	warmShared, err := shared.turnEnv("warm")
	if err != nil {
		return fail(err)
	}
	invoke := func(env []string, msg string) spec {
		return spec{argv: []string{w.spear, "-c", invokeLine("bench/echo", msg)}, env: env}
	}
	// Warm both: the broker runs the shared provider, the keeper its turn's own.
	for _, s := range []spec{invoke(warmShared, "hi"), invoke(shared.env, "hi"), invoke(kept.env, "hi")} {
		if _, err := w.run(ctx, s); err != nil {
			return fail(err)
		}
	}
	if err := brokerReached(shared); err != nil {
		return fail(err)
	}
	got, err := alternate(ctx, w.runs(30),
		timed(w, inTurn(shared, invoke(shared.env, "hi")), contains("hi")),
		timed(w, fixed(invoke(warmShared, "hi")), contains("hi")))
	rows := []row{judged(firstName, firstTarget, got, err, 1.50)}

	got, err = alternate(ctx, w.runs(30),
		timed(w, fixed(invoke(warmShared, "hi")), contains("hi")),
		timed(w, fixed(invoke(kept.env, "hi")), contains("hi")))
	rows = append(rows, judged(warmName, warmTarget, got, err, 1.10))

	describe := func(server int) map[string]any {
		return map[string]any{"Server": server, "Tool": "spear_describe", "Args": map[string]any{"ids": []string{"bench/echo"}}, "Want": "bench/echo"}
	}
	viaKeeper := echoCall("found")
	viaKeeper["Server"] = 1
	got, err = faceRuns(ctx, w, shared, w.runs(5), map[string]any{
		"Servers": [][]string{{w.face}, {w.face}},
		"Env":     [][]string{warmShared, kept.env},
		"Setup":   []any{describe(0), describe(1)},
		"Sides":   []any{echoCall("found"), viaKeeper},
		"Calls":   40,
		"Shuffle": true,
	})
	if err == nil {
		err = brokerReached(shared)
	}
	return append(rows, judged(faceName, faceTarget, got, err, 1.10))
}

// brokerReached checks that h's turns reached its provider through the broker: a turn that
// could not would have recorded broker_unavailable, or started a keeper for it, and measured
// another path.
func brokerReached(h *home) error {
	b, err := os.ReadFile(filepath.Join(filepath.Dir(h.manifest), "audit.jsonl"))
	if err != nil {
		return err
	}
	for _, ev := range []string{`"broker_unavailable"`, `"keeper_started"`, `"keeper_unavailable"`} {
		if bytes.Contains(b, []byte(ev)) {
			return fmt.Errorf("home %s: the shared provider was not reached through the broker (audit: %s)", h.name, ev)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(h.manifest), "broker.audit")); err != nil {
		return fmt.Errorf("home %s: no broker ran: %w", h.name, err)
	}
	return nil
}

// sixTurns is how many turns run at once in the six-turn rows.
const sixTurns = 6

// brokerSixTurns is the six-turn run (SPEC 14's targets): six concurrent turns, each making -c
// invokes of three real Node servers and an invoke through a spear-mcp session kept open, first
// unshared (each turn's keeper runs its own three), then shared (share project: the broker runs
// three for all); the servers are counted and their memory summed once every turn has made its
// calls, while every face is still open.
func brokerSixTurns(ctx context.Context, w *world) []row {
	const (
		pssName, pssTarget = "six turns x three Node servers (-c and spear-mcp): the servers' summed PSS, shared vs unshared", "ratio <= 0.25"
		rssName            = "the same, the servers' summed RSS, shared vs unshared"
		procName           = "the same, server processes, shared vs unshared"
	)
	fail := func(err error) []row {
		return []row{failed(pssName, pssTarget, err), failed(rssName, "reported", err), failed(procName, "3 shared", err)}
	}
	node, err := exec.LookPath("node")
	mods := filepath.Join(w.modDir, "testdata", "interop", "node_modules")
	if err == nil {
		_, err = os.Stat(filepath.Join(mods, "@modelcontextprotocol", "server-memory"))
	}
	if err != nil {
		why := fmt.Sprintf("the npm MCP servers are not installed (make deps): %v", err)
		return []row{skipped(pssName, pssTarget, why), skipped(rssName, "reported", why), skipped(procName, "3 shared", why)}
	}
	var runs [2]memorySample
	for i, shared := range []bool{false, true} {
		if runs[i], err = sixTurnRun(ctx, w, node, mods, shared); err != nil {
			return fail(err)
		}
		w.logf("six turns, shared=%v: %d server processes, RSS %.0f MiB, PSS %.0f MiB", shared, runs[i].procs, runs[i].rss, runs[i].pss)
	}
	unshared, shared := runs[0], runs[1]
	procRow := row{name: procName, a: strconv.Itoa(shared.procs), b: strconv.Itoa(unshared.procs),
		ratio: fmt.Sprintf("%.2f", float64(shared.procs)/float64(unshared.procs)), target: "3 shared", holds: yesNo(shared.procs == 3)}
	if unshared.procs != 3*sixTurns {
		procRow.note = fmt.Sprintf("%s: unshared, %d server processes where each turn's keeper should run 3 (%d)", procName, unshared.procs, 3*sixTurns)
	}
	return []row{judge(pssName, shared.pss, unshared.pss, "MiB", 0.25), judge(rssName, shared.rss, unshared.rss, "MiB", 0), procRow}
}

// memorySample is what the six-turn run measured of its servers.
type memorySample struct {
	procs    int
	rss, pss float64 // MiB, summed
}

func sixTurnRun(ctx context.Context, w *world, node, mods string, shared bool) (memorySample, error) {
	name := "six"
	if shared {
		name = "six-s"
	}
	h, err := w.newHome(name, nil, "none")
	if err != nil {
		return memorySample{}, err
	}
	h.keep = 300
	marker := filepath.Dir(h.manifest)
	files := filepath.Join(marker, "files")
	if err := os.MkdirAll(files, 0o755); err != nil {
		return memorySample{}, err
	}
	mark := "SPEAR_BENCH_SIX=" + marker
	entries := testkit.ReferenceServers(node, mods, files, mark, shared)
	if err := writeSharedCaps(h, entries); err != nil {
		return memorySample{}, err
	}
	envs := make([][]string, sixTurns)
	for i := range envs {
		if envs[i], err = h.turnEnv("t" + strconv.Itoa(i)); err != nil {
			return memorySample{}, err
		}
	}
	defer func() {
		for _, env := range envs {
			w.run(context.Background(), spec{argv: []string{w.spear, "--end-turn"}, env: env})
		}
		h.stopBroker()
	}()

	lines := []struct{ line, want string }{
		{"spear-capability describe ev/echo mem/read_graph fs/list_allowed_directories", "ev/echo"},
		{`spear-capability invoke ev/echo '{"message":"six"}'`, "Echo: six"},
		{`spear-capability invoke mem/read_graph '{}'`, "entities"},
		{`spear-capability invoke fs/list_allowed_directories '{}'`, "Allowed directories"},
	}
	sessions := make([]*mcp.ClientSession, sixTurns)
	defer func() {
		for _, cs := range sessions {
			if cs != nil {
				cs.Close()
			}
		}
	}()
	errs := make([]error, sixTurns)
	var wg sync.WaitGroup
	for i, env := range envs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, l := range lines {
				o, err := w.run(ctx, spec{argv: []string{w.spear, "-c", l.line}, env: env})
				if err == nil {
					err = contains(l.want)(o)
				}
				if err != nil {
					errs[i] = fmt.Errorf("turn %d: %w", i, err)
					return
				}
			}
			sessions[i], errs[i] = faceEcho(ctx, w, env)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return memorySample{}, err
	}
	pids, rss, pss := testkit.Marked(mark)
	return memorySample{procs: len(pids), rss: float64(rss) / 1024, pss: float64(pss) / 1024}, nil
}

// faceEcho opens a spear-mcp session in the turn of env, describes and invokes ev/echo, and
// leaves the session open.
func faceEcho(ctx context.Context, w *world, env []string) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1.0.0"}, nil)
	cmd := exec.Command(w.face)
	cmd.Env, cmd.Dir = env, w.ws
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		return nil, fmt.Errorf("spear-mcp: %w", err)
	}
	for _, c := range []mcp.CallToolParams{
		{Name: "spear_describe", Arguments: map[string]any{"ids": []string{"ev/echo"}}},
		{Name: "spear_invoke", Arguments: map[string]any{"id": "ev/echo", "arguments": map[string]any{"message": "face"}}},
	} {
		res, err := cs.CallTool(ctx, &c)
		if err == nil && res.IsError {
			b, _ := json.Marshal(res.Content)
			err = fmt.Errorf("isError: %s", b)
		}
		if err != nil {
			return cs, fmt.Errorf("spear-mcp %s: %w", c.Name, err)
		}
	}
	return cs, nil
}
