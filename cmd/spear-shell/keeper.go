package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spear-shell/spear-shell/capability/broker"
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

// runBroker runs the broker's modes (SPEC 14): the foreground broker (--broker), an on-demand
// one (started by a caller), --broker-stop and --broker-release. None needs a real shell.
func runBroker(a realshell.Args, stdout, stderr *os.File) int {
	switch a.Own {
	case "broker":
		return broker.RunForeground(stderr)
	case "broker-stop":
		return broker.Stop(os.Getenv, stderr)
	case "broker-release":
		return broker.Release(os.Getenv, a.Release, stdout, stderr)
	}
	return broker.Serve()
}
