package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// helpers are the programs under bench/ that the cases run.
var helpers = []string{"bareclient", "bwraprec", "execbash", "execbwrap", "faceclient", "forkbwrap", "fwdserver", "gostart",
	"listserver", "mcpclient", "pipebash", "relay", "sdkclient", "slowprovider"}

// world is the scratch directory every case works in: the helpers built once, one
// workspace (the registered project's root) and one SPEAR_HOME per configuration.
type world struct {
	o       options
	root    string
	tools   string // built helpers
	ws      string // the workspace and project root
	spear   string // bin/spear-shell
	face    string // bin/spear-mcp, beside it
	baseEnv []string
	homes   int
	goTool  string
	modDir  string // the spear-shell module's directory, where the helpers are built
	// baseline is the copy of the baseline spear-shell (baseline.go), once asked for; "" with
	// baselineWhy saying why there is none.
	baseline, baselineWhy string
	baselineDone          bool
}

func newWorld(ctx context.Context, o options, goTool string) (*world, error) {
	// Outside /tmp, as a deployment keeps its configuration: inside the boundary /tmp is the
	// turn's own, and masks there would cost nothing.
	cache, err := os.UserCacheDir()
	if err == nil {
		err = os.MkdirAll(cache, 0o700)
	}
	if err != nil {
		return nil, fmt.Errorf("scratch directory: %w", err)
	}
	root, err := os.MkdirTemp(cache, "spear-bench-")
	if err != nil {
		return nil, fmt.Errorf("scratch directory: %w", err)
	}
	// Symlinks resolved, so the workspace matches the project root as spear-shell sees it.
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return nil, fmt.Errorf("scratch directory: %w", err)
	}
	w := &world{o: o, root: root, tools: filepath.Join(root, "tools"), ws: filepath.Join(root, "ws"),
		spear: filepath.Join(o.bin, "spear-shell"), goTool: goTool}
	for _, d := range []string{w.tools, filepath.Join(w.ws, "a"), filepath.Join(w.ws, "b")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			os.RemoveAll(root)
			return nil, fmt.Errorf("scratch directory: %w", err)
		}
	}
	if err := w.build(ctx, goTool); err != nil {
		os.RemoveAll(root)
		return nil, err
	}
	if err := w.install(); err != nil {
		os.RemoveAll(root)
		return nil, err
	}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "SPEAR_") || name == "XDG_RUNTIME_DIR" {
			continue // each case sets its own
		}
		w.baseEnv = append(w.baseEnv, kv)
	}
	return w, nil
}

// build compiles the helpers as the product is built (CGO_ENABLED=0, -trimpath), so the
// references start as fast as a Go program can.
func (w *world) build(ctx context.Context, goTool string) error {
	out, err := exec.CommandContext(ctx, goTool, "env", "GOMOD").Output()
	mod := strings.TrimSpace(string(out))
	if err != nil || mod == "" || mod == os.DevNull {
		return fmt.Errorf("build helpers: run from inside the spear-shell module (go env GOMOD: %q, %v)", mod, err)
	}
	w.modDir = filepath.Dir(mod)
	args := []string{"build", "-trimpath", "-o", w.tools + "/"}
	for _, h := range helpers {
		args = append(args, "./bench/"+h)
	}
	cmd := exec.CommandContext(ctx, goTool, args...)
	cmd.Dir = w.modDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build helpers: %w\n%s", err, out)
	}
	return nil
}

func (w *world) tool(name string) string { return filepath.Join(w.tools, name) }

// runs is the number of runs per side for a case whose default is def.
func (w *world) runs(def int) int {
	if w.o.runs > 0 {
		return w.o.runs
	}
	return def
}

func (w *world) logf(format string, args ...any) {
	fmt.Fprintf(w.o.log, "  "+format+"\n", args...)
}

// provider is one capabilities.json entry served by slowprovider.
type provider struct {
	id      string
	initMS  int
	tools   int
	catalog bool // slowprovider -catalog: the tools after echo are bench/internal/catalog's
}

// command is the provider's argv.
func (p provider) command(w *world) []string {
	argv := []string{w.tool("slowprovider"), "-init-ms", strconv.Itoa(p.initMS), "-tools", strconv.Itoa(p.tools)}
	if p.catalog {
		argv = append(argv, "-catalog")
	}
	return argv
}

// home is one SPEAR_HOME with its own runtime directory, audit file and manifest.
type home struct {
	w        *world
	name     string
	dir      string
	manifest string
	env      []string
	turn     int
	keep     int    // keep_providers of its turns: 0 (no keeper) unless a case wants the keeper
	terminal string // the manifest's terminal; "" names none
}

// newHome writes a SPEAR_HOME whose one project is the workspace and whose providers are
// provs (scope global, echo READ), and a fresh audit file and runtime directory.
func (w *world) newHome(name string, provs []provider, isolation string) (*home, error) {
	w.homes++
	base := filepath.Join(w.root, fmt.Sprintf("%02d-%s", w.homes, name))
	h := &home{w: w, name: name, dir: filepath.Join(base, "home"), manifest: filepath.Join(base, "turn.json")}
	// Short: the keeper's socket (SPEC 12) lies under it, in a path of at most 107 bytes.
	runtime := filepath.Join(base, "r")
	for _, d := range []string{h.dir, runtime} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("home %s: %w", name, err)
		}
	}
	projects := map[string]any{"projects": []any{map[string]any{"name": "bench", "root": w.ws}}}
	var entries []any
	for _, p := range provs {
		entries = append(entries, map[string]any{
			"id":      p.id,
			"command": p.command(w),
			"scope":   "global",
			"read":    []string{"echo"},
		})
	}
	caps := map[string]any{"providers": entries}
	for file, v := range map[string]any{"projects.json": projects, "capabilities.json": caps} {
		if err := writeJSON(filepath.Join(h.dir, file), v); err != nil {
			return nil, fmt.Errorf("home %s: %w", name, err)
		}
	}
	h.env = append(append([]string(nil), w.baseEnv...),
		"SPEAR_HOME="+h.dir,
		"SPEAR_TURN_MANIFEST="+h.manifest,
		"SPEAR_AUDIT_FILE="+filepath.Join(base, "audit.jsonl"),
		"SPEAR_ISOLATION="+isolation,
		"XDG_RUNTIME_DIR="+runtime,
	)
	return h, h.newTurn()
}

// newTurn writes the manifest of a new turn: a new turn id means a new state directory,
// so the next spear-shell starts its providers afresh. A home with a keeper ends the previous
// turn first (spear-shell --end-turn), so that no keeper outlives its turn's runs.
func (h *home) newTurn() error {
	if h.keep > 0 && h.turn > 0 {
		if err := h.endTurn(); err != nil {
			return err
		}
	}
	h.turn++
	m := map[string]any{"turn": fmt.Sprintf("bench-%s-%d", h.name, h.turn), "task": "implementation", "workspace": h.w.ws,
		"keep_providers": h.keep}
	if h.terminal != "" {
		m["terminal"] = h.terminal
	}
	if err := writeJSON(h.manifest, m); err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	return nil
}

// writeJSON writes v to path, mode 0644 whatever the umask: spear-shell refuses config
// files that are group- or world-writable.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Chmod(path, 0o644)
}

// spec is one process to run and time.
type spec struct {
	argv  []string
	env   []string // nil: the world's base environment
	stdin []byte   // nil: /dev/null
}

// outcome is what a run produced.
type outcome struct {
	elapsed time.Duration
	stdout  *tail
	stderr  *tail
	maxRSS  int64 // KiB, the child's peak resident set (its waited-for descendants included)
}

// maxRun bounds one process: a benchmark that hangs is a failure, not a wait.
const maxRun = 3 * time.Minute

// run starts s in the workspace and waits for it; the time is from start to exit. A
// non-zero exit is an error carrying the end of stderr.
func (w *world) run(ctx context.Context, s spec) (outcome, error) {
	ctx, cancel := context.WithTimeout(ctx, maxRun)
	defer cancel()
	o := outcome{stdout: newTail(1 << 20), stderr: newTail(16 << 10)}
	cmd := exec.CommandContext(ctx, s.argv[0], s.argv[1:]...)
	cmd.Dir = w.ws
	cmd.Env = s.env
	if cmd.Env == nil {
		cmd.Env = w.baseEnv
	}
	if s.stdin != nil {
		cmd.Stdin = bytes.NewReader(s.stdin)
	}
	cmd.Stdout, cmd.Stderr = o.stdout, o.stderr
	cmd.WaitDelay = time.Second
	start := time.Now()
	err := cmd.Run()
	o.elapsed = time.Since(start)
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			o.maxRSS = ru.Maxrss
		}
	}
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("%w (killed after %s)", err, maxRun)
		}
		return o, fmt.Errorf("%s: %w: %s", filepath.Base(s.argv[0]), err, lastLines(o.stderr.String(), 3))
	}
	return o, nil
}

// alternate runs the sides in turn, A B A B ..., after one untimed warm-up of each, and
// returns each side's measurements. A side returns what it measured (in the case's unit).
func alternate(ctx context.Context, runs int, sides ...func(context.Context) (float64, error)) ([][]float64, error) {
	got := make([][]float64, len(sides))
	for i := -1; i < runs; i++ {
		for k, side := range sides {
			v, err := side(ctx)
			if err != nil {
				return nil, fmt.Errorf("%s, run %d: %w", sideName(k), i+1, err)
			}
			if i >= 0 {
				got[k] = append(got[k], v)
			}
		}
	}
	return got, nil
}

func sideName(k int) string {
	if k == 0 {
		return "spear-shell"
	}
	return "reference " + strconv.Itoa(k)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// tail keeps the total size and the last bytes written.
type tail struct {
	limit int
	n     int64
	buf   []byte
}

func newTail(limit int) *tail { return &tail{limit: limit} }

func (t *tail) Write(p []byte) (int, error) {
	t.n += int64(len(p))
	t.buf = append(t.buf, p...)
	// Trim only at twice the limit, so each byte is moved at most a few times.
	if len(t.buf) > 2*t.limit {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.limit:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	if len(t.buf) > t.limit {
		return string(t.buf[len(t.buf)-t.limit:])
	}
	return string(t.buf)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}

// install copies spear-shell, spear-shell-schema and spear-mcp from -bin into the scratch directory, side
// by side, and measures those copies: a deployment installs the binaries by copying them, and a
// binary as the Go linker leaves it (written through a memory map) starts measurably slower
// from the page cache than a copy with the same bytes (spear-shell -c true: about 0.1 ms, a
// ratio of 1.17-1.19 against 1.11-1.12 for its copy, measured side by side on this machine).
func (w *world) install() error {
	dir := filepath.Join(w.root, "bin")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	for _, name := range binaries {
		if err := copyExecutable(filepath.Join(w.o.bin, name), filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("install: %w", err)
		}
	}
	w.spear, w.face = filepath.Join(dir, "spear-shell"), filepath.Join(dir, "spear-mcp")
	return nil
}

func copyExecutable(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
