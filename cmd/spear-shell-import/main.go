// Command spear-shell-import is `spear-shell --import` (SPEC 15, docs/import.md), a binary of
// its own so that the TOML library it links is never initialised by spear-shell's -c fast
// path; spear-shell runs it from its own directory.
package main

import (
	"context"
	"os"

	"github.com/spear-shell/spear-shell/capability/importer"
	"github.com/spear-shell/spear-shell/policy"
)

func main() {
	os.Exit(importer.Run(context.Background(), os.Args[1:], os.Getenv, manifestRoots(), os.Stdout, os.Stderr))
}

// manifestRoots are the writable roots of the turn manifest named in the environment, if any.
func manifestRoots() []string {
	path := os.Getenv("SPEAR_TURN_MANIFEST")
	if path == "" {
		return nil
	}
	cwd, _ := os.Getwd()
	m, err := policy.LoadManifest(path, cwd)
	if err != nil {
		return nil
	}
	return append([]string{m.Workspace}, m.Writable...)
}
