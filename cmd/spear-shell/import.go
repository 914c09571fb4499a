package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/spear-shell/spear-shell/interp/sandbox"
)

// importName is the binary beside spear-shell that does --import: it links a TOML library,
// which spear-shell must not initialise on its -c fast path (docs/layout.md).
const importName = "spear-shell-import"

// runImport becomes spear-shell-import with args (docs/import.md). It is the operator's: inside
// the boundary there is nothing to import into.
func runImport(argv0 string, args []string, stderr *os.File) int {
	if sandbox.InsideBoundary(os.Getenv) {
		fmt.Fprintln(stderr, "spear-shell: --import is the operator's, run outside the isolation boundary")
		return 2
	}
	self, err := os.Executable()
	if err != nil {
		self = argv0
	}
	helper := filepath.Join(filepath.Dir(self), importName)
	err = syscall.Exec(helper, append([]string{helper}, args...), os.Environ())
	fmt.Fprintf(stderr, "spear-shell: --import: %s: %v (it is built and installed beside spear-shell)\n", helper, err)
	return 2
}
