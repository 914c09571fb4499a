// Command spear-shell is the shell an agent's terminal runs: it forwards every command line to a
// real bash, except spear-capability invocations, which the full binary beside it answers.
//
// This front binary is the -c fast path: it decides from the command line alone and, for input
// that cannot spell spear-capability, becomes the real shell without loading any configuration
// or even a shell parser (package fastpath does that before main, from initialisation). A -c string that is one plain invocation (the line agents type) it
// answers itself, so that a cold invoke is one Go process, not two.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/spear-shell/spear-shell/capability"
	"github.com/spear-shell/spear-shell/cmd/internal/turnrun"
	"github.com/spear-shell/spear-shell/cmd/spear-shell/internal/fastpath"
	"github.com/spear-shell/spear-shell/interp/invocation"
	"github.com/spear-shell/spear-shell/interp/realshell"
)

// FullName is the binary that answers invocations; it sits beside this one.
const FullName = "spear-shell-full"

// Version is spear-shell's own version (--spear-version); --version is bash's.
var Version = "0.1.0"

func main() {
	os.Exit(run(os.Args))
}

func run(argv []string) int {
	// Keep same-user processes out of our memory and /proc entries (SPEC 9).
	realshell.SetNonDumpable()
	if realshell.IsStub(argv[0]) {
		return realshell.RefuseStub(os.Stderr)
	}
	a := realshell.ParseArgs(argv[1:])
	switch {
	case a.Own == "spear-version":
		fmt.Println("spear-shell", Version)
		return 0
	case a.Own != "" || a.Problem != "":
		return execFull(argv)
	}
	switch a.Mode {
	case realshell.ModeString:
		// Text that cannot spell the name is forwarded without a parse. The plain line agents
		// almost always type is answered here; anything else goes to the full binary, which
		// parses it and forwards it too when it holds no invocation.
		if !a.NoExec && realshell.MayInvoke(a.String) {
			if inv, malformed, ok := invocation.Plain(a.String); ok {
				return answer(a, inv, malformed)
			}
			return execFull(argv)
		}
	case realshell.ModeSession:
		return execFull(argv)
	}
	return fastpath.Forward(argv[0], a)
}

// answer answers a -c string that is one plain invocation (or refuses it as malformed),
// as the full binary would, without starting a shell.
func answer(a realshell.Args, inv *invocation.Invocation, malformed string) int {
	self, manifest, rs, err := fastpath.RealShell(a)
	if err != nil {
		fmt.Fprintf(os.Stderr, "spear-shell: %v\n", err)
		return 126
	}
	turn := capability.NewTurn(turnrun.Settings(a, self, manifest, rs, nil))
	defer turn.Close("")
	if inv == nil {
		return turn.Refuse(invocation.CodeMalformed, malformed, os.Stderr)
	}
	g := turnrun.NewGuard(nil)
	defer g.Stop()
	code := g.Answer(func(ctx context.Context) int {
		return turn.Answer(ctx, turnrun.Request(inv), os.Stdout, os.Stderr)
	})
	if n := g.TerminatedBy(); n != 0 {
		return 128 + n
	}
	return code
}

// execFull replaces this process with the full binary, same arguments.
func execFull(argv []string) int {
	self, err := realshell.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "spear-shell: %v\n", err)
		return 126
	}
	full := filepath.Join(filepath.Dir(self), FullName)
	err = syscall.Exec(full, append([]string{argv[0]}, argv[1:]...), os.Environ())
	fmt.Fprintf(os.Stderr, "spear-shell: %s: %v (build both binaries: go build -o DIR/ ./cmd/...)\n", full, err)
	return 126
}
