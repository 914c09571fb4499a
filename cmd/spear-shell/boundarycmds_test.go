package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// Transcript commands for the isolation boundary.
func init() {
	registerCommands(map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"boundary-turn": cmdBoundaryTurn,
	})
}

// boundary-turn [MANIFEST]: moves the turn's configuration out of the workspace $WORK, as the
// boundary requires (it refuses to start when the agent could write what it trusts): SPEAR_HOME
// ($WORK/home) is copied to $OUTSIDE/home, the manifest (default turn.json) to
// $OUTSIDE/t/turn.json with its audit file and state_dir ($WORK/state...) moved under $OUTSIDE/t (their content
// kept), and $WORK/audit.jsonl becomes a link to the new audit file, for the audit command.
// SPEAR_HOME and SPEAR_TURN_MANIFEST name the copies.
func cmdBoundaryTurn(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) > 1 {
		ts.Fatalf("usage: boundary-turn [MANIFEST]")
	}
	manifest := "turn.json"
	if len(args) == 1 {
		manifest = args[0]
	}
	work, out := ts.Getenv("WORK"), ts.Getenv("OUTSIDE")
	t := filepath.Join(out, "t")
	ts.Check(os.MkdirAll(t, 0o700))
	copyTree := func(from, to string) {
		if _, err := os.Stat(from); err != nil {
			return
		}
		if b, err := exec.Command("cp", "-a", from, to).CombinedOutput(); err != nil {
			ts.Fatalf("cp %s %s: %v: %s", from, to, err, b)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "home")); err != nil {
		copyTree(filepath.Join(work, "home"), filepath.Join(out, "home"))
	}
	copyTree(filepath.Join(work, "state"), filepath.Join(t, "state"))
	audit := filepath.Join(work, "audit.jsonl")
	if fi, err := os.Lstat(audit); err == nil && fi.Mode().IsRegular() {
		copyTree(audit, filepath.Join(t, "audit.jsonl"))
		ts.Check(os.Remove(audit))
	}
	if _, err := os.Lstat(audit); err != nil {
		ts.Check(os.Symlink(filepath.Join(t, "audit.jsonl"), audit))
	}
	data, err := os.ReadFile(ts.MkAbs(manifest))
	ts.Check(err)
	m := strings.NewReplacer(`"`+work+`/audit.jsonl"`, `"`+t+`/audit.jsonl"`, `"`+work+`/state`, `"`+t+`/state`).Replace(string(data))
	ts.Check(os.WriteFile(filepath.Join(t, "turn.json"), []byte(m), 0o600))
	ts.Setenv("SPEAR_HOME", filepath.Join(out, "home"))
	ts.Setenv("SPEAR_TURN_MANIFEST", filepath.Join(t, "turn.json"))
}
