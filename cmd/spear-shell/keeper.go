package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spear-shell/spear-shell/capability/keeper"
	"github.com/spear-shell/spear-shell/interp/realshell"
)

// runKeeper runs the hidden keeper mode (SPEC 12) that a -c answer starts: it needs no real
// shell, and the turn was started (turn_started recorded) by the answer that started it.
func runKeeper(a realshell.Args, stderr *os.File) int {
	self, err := realshell.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "spear-shell: %v\n", err)
		return 126
	}
	return keeper.Serve(settings(a, self, a.ManifestPath(os.Getenv), nil, errors.New("a keeper runs no real shell")).Settings)
}
