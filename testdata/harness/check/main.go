// Command check drives the real agent terminals (Claude Code, Codex CLI, Gemini CLI, as pinned in
// terminals.go and installed by `make harness-check`) and mini-swe-agent's protocol through one
// scripted turn each, with spear-shell set up as their shell the way docs/harnesses.md says, and
// checks what each terminal handed back to the model and what the audit trail recorded, in each
// isolation mode. It prints one line per terminal and mode, and every step not as expected.
// Then the MCP rows (mcp.go): Claude Code, Codex and Gemini with spear-mcp (-mcp, default the one
// in -bin) registered too, the fake model calling the face's tools; -mcp-only runs just those.
//
// With -capture DIR it runs each terminal with a recorder shell instead and writes every shell
// call the terminal made to DIR/<terminal>-<version>.txt: the envelope texts of testdata/harness/captured.
// With -try CMD it runs only CMD, through each terminal with spear-shell, and prints what came back.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	os.Exit(mainCode(os.Args[1:]))
}

type options struct {
	bin, cli, work string
	terminals      []*terminal
	isolation      []string
	capture        string
	try            string
	tryShell       string
	verbose        bool
	mcp            string // spear-mcp, registered in each terminal's MCP row
	mcpOnly        bool
}

func mainCode(args []string) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	bin := fs.String("bin", "bin", "directory holding spear-shell and spear-demo-notes")
	cli := fs.String("cli", "", "npm prefix holding the pinned terminals (node_modules/...)")
	work := fs.String("work", "", "directory for the runs (emptied first); default a new one under CLI/runs")
	only := fs.String("terminals", "", "comma-separated terminal names (default: all)")
	iso := fs.String("isolation", "none,bwrap", "comma-separated SPEAR_ISOLATION modes")
	capture := fs.String("capture", "", "write the captured shell calls to this directory instead of checking")
	verbose := fs.Bool("v", false, "print every step")
	tryShell := fs.String("try-shell", "", "with -try: Codex's exec_command shell argument")
	try := fs.String("try", "", "run this one command through each terminal and print what it handed back")
	mcp := fs.String("mcp", "", "spear-mcp to register in the MCP rows (default: spear-mcp in -bin)")
	mcpOnly := fs.Bool("mcp-only", false, "run only the MCP rows")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	o := options{capture: *capture, try: *try, tryShell: *tryShell, verbose: *verbose, isolation: strings.Split(*iso, ","),
		mcpOnly: *mcpOnly}
	var err error
	for _, p := range []struct {
		dst *string
		val string
	}{{&o.bin, *bin}, {&o.cli, *cli}} {
		if *p.dst, err = filepath.Abs(p.val); err != nil || p.val == "" {
			fmt.Fprintln(os.Stderr, "check: -bin and -cli must name directories")
			return 2
		}
	}
	if o.work, err = filepath.Abs(*work); err != nil || *work == "" {
		o.work, err = newWorkDir(filepath.Join(o.cli, "runs"))
	} else {
		err = os.RemoveAll(o.work)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "check: %v\n", err)
		return 1
	}
	// Run the binaries from a copy under the run directory, as a deployment installs them: a
	// checkout under the host's /tmp (a CI clone) is not visible inside the boundary, whose /tmp
	// is the turn's own, and the stub would point at nothing there (docs/isolation.md).
	if o.bin, err = installBinaries(o.bin, filepath.Join(o.work, "bin")); err != nil {
		fmt.Fprintf(os.Stderr, "check: %v\n", err)
		return 1
	}
	o.mcp = filepath.Join(o.bin, "spear-mcp")
	if *mcp != "" {
		if err := copyFile(*mcp, o.mcp); err != nil {
			fmt.Fprintf(os.Stderr, "check: -mcp: %v\n", err)
			return 2
		}
	}
	for _, t := range terminals {
		if *only == "" || contains(strings.Split(*only, ","), t.name) {
			o.terminals = append(o.terminals, t)
		}
	}
	if len(o.terminals) == 0 {
		fmt.Fprintf(os.Stderr, "check: no terminal named in %q\n", *only)
		return 2
	}
	if err := installedVersions(o.cli, o.terminals); err != nil {
		fmt.Fprintf(os.Stderr, "check: %v\n", err)
		return 1
	}
	fmt.Printf("runs in %s\n", o.work)
	if o.capture != "" {
		return captureAll(o)
	}
	if o.try != "" {
		return tryAll(o)
	}
	return checkAll(o)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if strings.TrimSpace(x) == s {
			return true
		}
	}
	return false
}

// newWorkDir makes a directory of this check's own under parent, so that checks run at the same
// time (several checkouts, one cache) do not share runs, and removes those a day old.
func newWorkDir(parent string) (string, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	old, _ := os.ReadDir(parent)
	for _, e := range old {
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > 24*time.Hour {
			os.RemoveAll(filepath.Join(parent, e.Name()))
		}
	}
	return os.MkdirTemp(parent, time.Now().UTC().Format("20060102-150405-"))
}

// installBinaries copies the regular files of dir into dst (created) and returns dst.
func installBinaries(dir, dst string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return "", err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o755); err != nil {
			return "", err
		}
	}
	return dst, nil
}

func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o755)
}
