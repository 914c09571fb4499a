// Package wire gives spear-shell and spear-mcp one derivation of a turn's settings from the
// environment: the isolation facts, the writable roots (the turn's /tmp among them) and the
// trusted-path check, so that the MCP face judges exactly as the shell does (SPEC 13).
//
// It sits above both sides, layer 7 (it imports capability, capability/providers,
// capability/schema, interp/realshell, interp/sandbox and policy/paths); only commands import
// it, and it never imports the keeper, the broker, the MCP face or the importer.
package wire

import (
	"os"
	"path/filepath"

	"github.com/spear-shell/spear-shell/capability"
	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/capability/schema"
	"github.com/spear-shell/spear-shell/interp/realshell"
	"github.com/spear-shell/spear-shell/interp/sandbox"
	"github.com/spear-shell/spear-shell/policy/paths"
)

// Settings are the turn's settings: self is the spear-shell binary (the keeper and the stub
// run it), manifest the turn manifest's path, rs and rsErr how the real shell runs (or why it
// cannot), face "" for the shell or "mcp".
func Settings(session bool, self, manifest string, rs *realshell.RealShell, rsErr error, face string) capability.Settings {
	cwd, _ := os.Getwd()
	s := capability.Settings{
		Settings: providers.Settings{
			Getenv:       os.Getenv,
			Cwd:          cwd,
			ManifestPath: manifest,
			Session:      session,
			Inside:       sandbox.InsideBoundary(os.Getenv),
			Unconfined:   os.Getenv(sandbox.BoundaryMarker) == "none",
			CheckTrusted: CheckTrusted,
			Self:         self,
			Environ:      os.Environ(),
			StateParent:  paths.StateParent(os.Getenv),
			Face:         face,
		},
		SchemaHelper: filepath.Join(filepath.Dir(self), schema.HelperName),
	}
	if rs != nil {
		s.WritableRoots = rs.Writable // the turn's temporary directory among them
	}
	if rsErr != nil {
		s.Isolation = "unavailable: " + rsErr.Error()
	} else {
		s.Isolation, s.Isolated = rs.Note, rs.Isolated()
	}
	return s
}

// CheckTrusted is the boundary's verdict on a path the capability layer is about to use.
func CheckTrusted(path string, roots []string) error {
	return paths.CheckTrusted(path, paths.WritableRoots(roots...))
}
