// Command spear-mcp is the MCP face (SPEC 13): a stdio MCP server that gives an agent
// terminal the turn's capability plane, as spear-shell's answers give it to the shell. It
// is configured as spear-shell is (SPEAR_HOME, SPEAR_TURN_MANIFEST or --manifest FILE, the
// same isolation settings) and lives beside spear-shell, which runs the turn's keeper.
//
//	spear-mcp [--manifest FILE] [--version]
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spear-shell/spear-shell/capability"
	"github.com/spear-shell/spear-shell/capability/mcpface"
	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/cmd/internal/wire"
	"github.com/spear-shell/spear-shell/interp/realshell"
	"github.com/spear-shell/spear-shell/policy"
)

// Version is the face's version, as initialize reports it.
const Version = "0.4.0"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	manifest := ""
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--version":
			fmt.Fprintln(stdout, "spear-mcp", Version)
			return 0
		case a == "--manifest" && i+1 < len(args):
			manifest = args[i+1]
			i++
		default:
			fmt.Fprintf(stderr, "spear-mcp: unknown argument %q (usage: spear-mcp [--manifest FILE] [--version])\n", a)
			return 2
		}
	}
	if manifest == "" {
		manifest = os.Getenv("SPEAR_TURN_MANIFEST")
	}
	if manifest != "" && !filepath.IsAbs(manifest) {
		if abs, err := filepath.Abs(manifest); err == nil {
			manifest = abs
		}
	}
	self, err := shellBeside()
	if err != nil {
		fmt.Fprintf(stderr, "spear-mcp: %v\n", err)
		return 126
	}
	face := mcpface.New(mcpface.Options{
		Settings: func() capability.Settings {
			// As spear-shell derives them with the same environment, again for each turn state:
			// the writable roots follow the manifest.
			rs, rsErr := realshell.NewRealShell(os.Getenv, os.Environ(), self, manifest)
			return wire.Settings(false, self, manifest, rs, rsErr, "mcp")
		},
		Files:   func() []string { return turnFiles(manifest) },
		Stderr:  stderr,
		Version: Version,
	})
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer stop()
	err = face.Run(ctx, &mcpface.LineTransport{In: stdin, Out: stdout})
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "spear-mcp: %v\n", err)
		return 1
	}
	return 0
}

// shellBeside is the spear-shell binary in spear-mcp's directory: the keeper and the stub are
// its, as for the shell's own answers.
func shellBeside() (string, error) {
	me, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot tell its own path: %w", err)
	}
	if me, err = filepath.EvalSymlinks(me); err != nil {
		return "", fmt.Errorf("cannot resolve its own path: %w", err)
	}
	sh := filepath.Join(filepath.Dir(me), "spear-shell")
	if fi, err := os.Stat(sh); err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("spear-shell must be installed beside spear-mcp (%s)", sh)
	}
	return sh, nil
}

// turnFiles are the files whose content is the turn.
func turnFiles(manifest string) []string {
	home := policy.DefaultHome(os.Getenv)
	caps := os.Getenv("SPEAR_CAPABILITIES_FILE")
	if caps == "" {
		caps = filepath.Join(home, "capabilities.json")
	}
	files := []string{filepath.Join(home, "projects.json"), caps, providers.LockPath(os.Getenv)}
	if manifest != "" {
		files = append(files, manifest)
	}
	return files
}
