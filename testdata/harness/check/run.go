package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// systemPath is the PATH every terminal starts with: the fixed system one.
const systemPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// A run is one terminal's turn in its own directory: a home, the demo's projects with the
// workspace inside one of them, a SPEAR_HOME registering the demo provider, the manifest, and
// shell/bash, the shell the terminal is given.
type run struct {
	dir       string
	cli       string // npm prefix holding the pinned terminals
	home      string
	work      string // the workspace and the terminal's working directory
	shell     string // <dir>/shell/bash
	spearHome string
	manifest  string
	audit     string
	isolation string // SPEAR_ISOLATION
	runtime   string // XDG_RUNTIME_DIR, short: the state parent (sockets) lives under it
	term      *terminal
	// onlySpear: the deployment's closing of Codex's shell argument (docs/harnesses.md): in
	// Codex's mount namespace /bin/sh is spear-shell too.
	onlySpear bool
	// mcp, when set, is spear-mcp: the terminal registers it as its MCP server "spear"
	// (docs/mcp.md, Setup per terminal), in a file of the operator's outside the workspace.
	mcp string
}

// newRun lays out dir for term. target is what shell/bash links to (spear-shell, /bin/bash
// or a recorder); bin holds spear-shell and the demo provider.
func newRun(dir, cli, bin, target, isolation string, term *terminal) (*run, error) {
	r := &run{dir: dir, cli: cli, home: filepath.Join(dir, "home"), work: filepath.Join(dir, "webapp"),
		shell: filepath.Join(dir, "shell", "bash"), spearHome: filepath.Join(dir, "spear"),
		manifest: filepath.Join(dir, "turn", "turn.json"), audit: filepath.Join(dir, "turn", "audit.jsonl"), isolation: isolation, term: term}
	// As a login session's /run/user/UID: short, since the keeper's socket path must fit 107
	// bytes, which a state parent under this run's home may not; and not under /tmp, which the
	// boundary replaces with the turn's own.
	rt := filepath.Join(cli, "rt")
	if err := os.MkdirAll(rt, 0o700); err != nil {
		return nil, err
	}
	var err error
	if r.runtime, err = os.MkdirTemp(rt, ""); err != nil {
		return nil, err
	}
	// The manifest and the audit file have a directory of their own, as /run/harness would be: the
	// boundary hides the directory of each (SPEC 9), which must not hold the home or CODEX_HOME.
	for _, d := range []string{r.home, filepath.Join(r.work, "sub"), filepath.Dir(r.shell), r.spearHome, filepath.Dir(r.manifest)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	if err := os.Symlink(target, r.shell); err != nil {
		return nil, err
	}
	files := map[string]string{
		filepath.Join(r.work, "README.md"): "# webapp\n",
		filepath.Join(r.spearHome, "projects.json"): fmt.Sprintf(
			`{"projects": [{"name": "webapp", "root": %q, "families": ["docs"]}]}`, r.work),
		filepath.Join(r.spearHome, "capabilities.json"): fmt.Sprintf(`{"providers": [
  {"id": "notes", "command": [%q, "notes"], "scope": "family docs",
   "read": ["search_notes", "get_note"], "write": "refuse", "timeout": 10}
]}`, filepath.Join(bin, "spear-demo-notes")),
	}
	// A turn id of its own each time, as a harness gives: the turn's state (what was said once)
	// is keyed by it and would carry over from an earlier check of the same directory.
	turn := fmt.Sprintf("harness-%s-%s-%d", term.name, isolation, time.Now().UnixNano())
	manifest := map[string]any{"turn": turn, "session": "harness",
		"task": "implementation", "workspace": r.work, "audit": r.audit}
	if term.pkg != "" {
		manifest["terminal"] = term.name
	}
	var writable []string
	for _, w := range term.writable {
		dir := filepath.Join(r.home, w)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		writable = append(writable, dir)
	}
	if writable != nil {
		manifest["writable"] = writable
	}
	data, _ := json.Marshal(manifest)
	files[r.manifest] = string(data)
	for name, text := range files {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// env is the terminal's environment: a clean one, as a deployment would start it.
func (r *run) env() []string {
	return []string{
		"PATH=" + systemPath,
		"HOME=" + r.home,
		"USER=root", "LOGNAME=root",
		"LANG=C.UTF-8",
		"TERM=dumb",
		"SPEAR_HOME=" + r.spearHome,
		"SPEAR_TURN_MANIFEST=" + r.manifest,
		"SPEAR_ISOLATION=" + r.isolation,
		"XDG_RUNTIME_DIR=" + r.runtime,
	}
}

// mcpEnv is the environment the terminal's MCP configuration gives spear-mcp: the turn's, as
// spear-shell has it, so that the face and the shell answer the same turn and share its keeper
// (whose socket is under XDG_RUNTIME_DIR).
func (r *run) mcpEnv() map[string]string {
	return map[string]string{
		"SPEAR_HOME":          r.spearHome,
		"SPEAR_TURN_MANIFEST": r.manifest,
		"SPEAR_ISOLATION":     r.isolation,
		"XDG_RUNTIME_DIR":     r.runtime,
	}
}

// close removes what the run keeps outside its directory.
func (r *run) close() { os.RemoveAll(r.runtime) }

// withPath puts dir first on env's PATH.
func withPath(env []string, dir string) []string {
	for i, kv := range env {
		if rest, ok := strings.CutPrefix(kv, "PATH="); ok {
			env[i] = "PATH=" + dir + ":" + rest
		}
	}
	return env
}
