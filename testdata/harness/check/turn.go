package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spear-shell/spear-shell/testdata/harness/fakemodel"
)

// A turn is what one run of a terminal produced.
type turn struct {
	records  []fakemodel.Record
	loads    map[int]string // by step, what a tool search before it handed back (fakemodel.Loads)
	auditAt  []int64        // the audit file's size as each step was sent
	auditEnd int64
	elapsed  time.Duration
	err      error // the terminal did not run to its end
}

// turnTimeout bounds one terminal's whole turn; a hung terminal fails its run, not the check.
const turnTimeout = 5 * time.Minute

// drive runs term once through the fake model on script; onStep also hears each step as it is sent.
func drive(r *run, term *terminal, script []string, extra map[int]map[string]any, onStep func(int, string)) *turn {
	calls := make([]fakemodel.Call, len(script))
	for i, cmd := range script {
		calls[i] = fakemodel.Call{Command: cmd}
	}
	return driveCalls(r, term, calls, extra, onStep, nil)
}

// driveCalls is drive with a script of calls: shell commands, or calls of spear-mcp's tools.
// toolSearch: by step, the words the model gives Claude Code's ToolSearch (fakemodel.Model.ToolSearch).
func driveCalls(r *run, term *terminal, calls []fakemodel.Call, extra map[int]map[string]any, onStep func(int, string),
	toolSearch map[int]string) *turn {
	script := make([]string, len(calls))
	for i, c := range calls {
		script[i] = c.String()
	}
	t := &turn{auditAt: make([]int64, len(script))}
	start := time.Now()
	defer func() { t.elapsed = time.Since(start) }()
	step := func(n int, cmd string) {
		t.auditAt[n] = fileSize(r.audit)
		if onStep != nil {
			onStep(n, cmd)
		}
	}
	if term.command == nil {
		t.records, t.err = subprocessTurn(r, script, step)
		t.auditEnd = fileSize(r.audit)
		return t
	}
	model := fakemodel.NewCalls(calls)
	model.MCPServer = mcpServerName
	model.OnStep = step
	model.Extra = extra
	model.ToolSearch = toolSearch
	model.LogDir = filepath.Join(r.dir, "requests")
	if err := os.MkdirAll(model.LogDir, 0o755); err != nil {
		t.err = err
		return t
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.err = err
		return t
	}
	srv := &http.Server{Handler: model.Handler()}
	go srv.Serve(ln)
	defer srv.Close()

	cmd, err := term.command(r, "http://"+ln.Addr().String())
	if err != nil {
		t.err = err
		return t
	}
	ctx, cancel := context.WithTimeout(context.Background(), turnTimeout)
	defer cancel()
	t.err = runLogged(ctx, cmd, r)
	t.records = model.Records()
	t.loads = model.Loads()
	t.auditEnd = fileSize(r.audit)
	if t.err == nil && len(t.records) < len(script) {
		t.err = fmt.Errorf("%s ended after %d of %d steps (see %s)", term.name, len(t.records), len(script), r.dir)
	}
	return t
}

// runLogged runs cmd in the workspace with its output in the run's directory.
func runLogged(ctx context.Context, cmd *exec.Cmd, r *run) error {
	out, err := os.Create(filepath.Join(r.dir, "terminal.log"))
	if err != nil {
		return err
	}
	defer out.Close()
	c := exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	c.Env, c.Dir, c.Stdin, c.Stdout, c.Stderr = cmd.Env, r.work, nil, out, out
	// The terminals are wrappers (node starting Codex's binary, Gemini relaunching itself): on
	// timeout the whole process group goes, or the real terminal is left running alone.
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	c.WaitDelay = 5 * time.Second
	err = c.Run()
	if c.Process != nil {
		syscall.Kill(-c.Process.Pid, syscall.SIGKILL) // what the terminal left behind in its group
	}
	if err != nil {
		return fmt.Errorf("%s: %w (see %s)", filepath.Base(cmd.Path), err, out.Name())
	}
	return nil
}

// subprocessTurn replicates mini-swe-agent's LocalEnvironment: each command is
// subprocess.run(cmd, shell=True, executable=SHELL, cwd=..., stdout=PIPE, stderr=STDOUT), a fresh
// `SHELL -c CMD` in the working directory (python itself, since the package cannot be installed here).
func subprocessTurn(r *run, script []string, step func(int, string)) ([]fakemodel.Record, error) {
	const py = `import json, subprocess, sys
r = subprocess.run(sys.argv[2], shell=True, executable=sys.argv[1], text=True, encoding="utf-8",
    errors="replace", stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
print(json.dumps({"output": r.stdout, "returncode": r.returncode}))`
	var recs []fakemodel.Record
	for n, cmd := range script {
		step(n, cmd)
		c := exec.Command("python3", "-c", py, r.shell, cmd)
		c.Env, c.Dir = r.env(), r.work
		out, err := c.Output()
		if err != nil {
			return recs, fmt.Errorf("python3: step %d: %w", n, err)
		}
		recs = append(recs, fakemodel.Record{Step: n, Command: cmd, API: "subprocess", Output: string(out)})
	}
	return recs, nil
}

func subprocessResult(rec fakemodel.Record) (string, int) {
	var res struct {
		Output     string `json:"output"`
		Returncode int    `json:"returncode"`
	}
	if json.Unmarshal([]byte(rec.Output), &res) != nil {
		return rec.Output, -1
	}
	return res.Output, res.Returncode
}

func fileSize(name string) int64 {
	fi, err := os.Stat(name)
	if err != nil {
		return 0
	}
	return fi.Size()
}
