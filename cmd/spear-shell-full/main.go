// Command spear-shell-full is the part of spear-shell that answers spear-capability invocations:
// sessions on stdin, -c strings that hold an invocation, --check and --context. The spear-shell
// front binary beside it execs it for those; it never needs to be run by hand.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spear-shell/spear-shell/capability"
	"github.com/spear-shell/spear-shell/interp"
	"github.com/spear-shell/spear-shell/interp/realshell"
)

// FrontName is the front binary beside this one; the stub in the real shell points to it.
const FrontName = "spear-shell"

func main() {
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}

func run(argv []string, stdin, stdout, stderr *os.File) int {
	realshell.SetNonDumpable()
	if realshell.IsStub(argv[0]) {
		return realshell.RefuseStub(stderr)
	}
	a := realshell.ParseArgs(argv[1:])
	if a.Problem != "" {
		fmt.Fprintf(stderr, "spear-shell: %s\n", a.Problem)
		return 2
	}
	self, err := realshell.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "spear-shell: %v\n", err)
		return 126
	}
	front := filepath.Join(filepath.Dir(self), FrontName)
	manifest := a.Manifest
	if manifest == "" {
		manifest = os.Getenv("SPEAR_TURN_MANIFEST")
	}
	rs, rsErr := realshell.NewRealShell(os.Getenv, os.Environ(), front, manifest)
	cwd, _ := os.Getwd()
	settings := capability.Settings{
		Getenv:       os.Getenv,
		Cwd:          cwd,
		ManifestPath: manifest,
		Session:      a.Own == "" && a.Mode == realshell.ModeSession,
		Inside:       realshell.InsideBoundary(os.Getenv),
		SchemaHelper: filepath.Join(filepath.Dir(self), capability.SchemaHelperName),
	}
	if rsErr != nil {
		settings.Isolation = "unavailable: " + rsErr.Error()
	} else {
		settings.Isolation, settings.Isolated = rs.Note, rs.Isolated()
	}
	ctx := context.Background()
	switch a.Own {
	case "spear-version":
		fmt.Fprintln(stdout, "spear-shell", "(full)")
		return 0
	case "check":
		return capability.Check(ctx, settings, stdout, stderr)
	case "context":
		turn := capability.NewTurn(settings)
		defer turn.Close("")
		return turn.Context(ctx, stdout, stderr)
	}
	if rsErr != nil {
		fmt.Fprintf(stderr, "spear-shell: %v\n", rsErr)
		return 126
	}
	switch a.Mode {
	case realshell.ModeString:
		an := interp.Analyze(a.String)
		if a.NoExec || an.Verdict == interp.Forward {
			break
		}
		turn := capability.NewTurn(settings)
		defer turn.Close("")
		if an.Verdict == interp.Refuse {
			return turn.Refuse(an.Code, an.Reason, stderr)
		}
		return runString(a, an, rs, turn, stdin, stdout, stderr)
	case realshell.ModeSession:
		return runSession(a, rs, capability.NewTurn(settings), stdin, stdout, stderr)
	}
	err = rs.Exec(argv[0], a.Bash)
	fmt.Fprintf(stderr, "spear-shell: %v\n", err)
	if errors.Is(err, realshell.ErrNoShell) {
		return 127
	}
	return 126
}

// runString answers a -c string that holds invocations. A string of answers alone starts no
// shell; otherwise its forwarded parts run in one real shell, in order around the answers.
func runString(a realshell.Args, an interp.Analysis, rs *realshell.RealShell, turn *capability.Turn, stdin, stdout, stderr *os.File) int {
	g := newGuard(nil)
	defer g.stop()
	answer := func(inv *interp.Invocation) int {
		return g.answer(func(ctx context.Context) int {
			return turn.Answer(ctx, request(inv), stdout, stderr)
		})
	}
	if onlyAnswers(an) {
		code := 0
		for _, seg := range an.Segments {
			code = answer(seg.Invocation)
			if code != 0 && errexit(a.Options) {
				break
			}
		}
		if n := g.terminatedBy(); n != 0 {
			return 128 + n
		}
		return code
	}
	sh, err := startShell(a, rs, stdout, stderr, false)
	if err != nil {
		fmt.Fprintf(stderr, "spear-shell: %v\n", err)
		return 126
	}
	g.setShell(sh)
	return interp.RunSegments(an, sh, interp.Handlers{
		Answer: answer,
		Refuse: func(code, reason string) int { return turn.Refuse(code, reason, stderr) },
	})
}

// runSession runs commands from stdin in one real shell until EOF, exit, or a signal, and
// then ends the turn.
func runSession(a realshell.Args, rs *realshell.RealShell, turn *capability.Turn, stdin, stdout, stderr *os.File) int {
	g := newGuard(turn)
	defer g.stop()
	var terminal *os.File
	if a.Terminal || isTerminal(stdin) {
		terminal = stdin
	}
	sh, err := startShell(a, rs, stdout, stderr, true, terminal)
	if err != nil {
		fmt.Fprintf(stderr, "spear-shell: %v\n", err)
		g.closeTurn("the real shell could not start")
		return 126
	}
	g.setShell(sh)
	code := interp.RunSession(stdin, sh, interp.Handlers{
		Answer: func(inv *interp.Invocation) int {
			return g.answer(func(ctx context.Context) int {
				return turn.Answer(ctx, request(inv), stdout, stderr)
			})
		},
		Refuse: func(code, reason string) int {
			return g.answer(func(context.Context) int { return turn.Refuse(code, reason, stderr) })
		},
	})
	if n := g.terminatedBy(); n != 0 {
		g.closeTurn(terminatedReason(n))
		return 128 + n
	}
	g.closeTurn("the session ended")
	return code
}

func terminatedReason(sig int) string { return "terminated by " + syscall.Signal(sig).String() }

func startShell(a realshell.Args, rs *realshell.RealShell, stdout, stderr *os.File, session bool, terminal ...*os.File) (*realshell.Shell, error) {
	argv := append([]string{rs.Path}, a.Options...)
	argv = append(argv, "-s", "--")
	argv = append(argv, a.Params...)
	cfg := realshell.ShellConfig{
		Argv:          rs.Argv(argv),
		Env:           rs.Env,
		Dir:           rs.Dir,
		Stdout:        stdout,
		Stderr:        stderr,
		TrapInterrupt: session,
		Tracing:       bashOption(a.Options, 'x', "xtrace") || bashOption(a.Options, 'v', "verbose"),
		Boundary:      rs.Isolated(),
	}
	if a.HasName {
		cfg.Argv0 = a.Name
	} else {
		cfg.Arg0 = os.Args[0]
	}
	if len(terminal) > 0 && terminal[0] != nil {
		cfg.Terminal = terminal[0]
	} else {
		// Without a terminal, the shell gets signals from us, not from a terminal's Ctrl-C.
		cfg.OwnGroup = true
	}
	return realshell.StartShell(cfg)
}

func request(inv *interp.Invocation) capability.Request {
	return capability.Request{Verb: inv.Verb, Targets: inv.Targets, Arguments: inv.Arguments, Source: inv.Source}
}

func onlyAnswers(an interp.Analysis) bool {
	for _, seg := range an.Segments {
		if seg.Invocation == nil && strings.TrimSpace(seg.Forward) != "" {
			return false
		}
	}
	return true
}

// errexit tells whether bash's options include -e (or -o errexit).
func errexit(opts []string) bool { return bashOption(opts, 'e', "errexit") }

// bashOption tells whether bash's options turn on the option with this letter or -o name.
// Options are read in order, so a later +x or +o turns it off again.
func bashOption(opts []string, letter rune, name string) bool {
	on := false
	for i := 0; i < len(opts); i++ {
		o := opts[i]
		if len(o) < 2 || (o[0] != '-' && o[0] != '+') || o[1] == '-' {
			continue
		}
		for _, c := range o[1:] {
			switch c {
			case letter:
				on = o[0] == '-'
			case 'o', 'O':
				// -o takes the next argument; ParseArgs keeps it right after.
				if i+1 < len(opts) {
					i++
					if c == 'o' && opts[i] == name {
						on = o[0] == '-'
					}
				}
			}
		}
	}
	return on
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0 && fi.Mode()&os.ModeDevice != 0
}

// guard turns signals into what SPEC 4 asks: SIGINT cancels the answer in progress (exit 130)
// and reaches the running command; SIGTERM and SIGHUP end the shell and, in a session, the turn
// and the process with 128+n, even while the session waits for input it may never get.
type guard struct {
	sigs       chan os.Signal
	done       chan struct{}
	wg         sync.WaitGroup
	mu         sync.Mutex
	sh         *realshell.Shell
	cancel     context.CancelFunc
	terminated int
	// turn is the session's turn; answering holds turnMu, so that a terminating signal
	// ends the turn only between answers.
	turn      *capability.Turn
	turnMu    sync.Mutex
	closeOnce sync.Once
}

func newGuard(turn *capability.Turn) *guard {
	g := &guard{sigs: make(chan os.Signal, 4), done: make(chan struct{}), turn: turn}
	signal.Notify(g.sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	g.wg.Add(1)
	go g.loop()
	return g
}

func (g *guard) loop() {
	defer g.wg.Done()
	for {
		select {
		case <-g.done:
			return
		case s := <-g.sigs:
			sig := s.(syscall.Signal)
			g.mu.Lock()
			first := sig != syscall.SIGINT && g.terminated == 0
			if first {
				g.terminated = int(sig)
			}
			if g.cancel != nil {
				g.cancel()
			}
			sh := g.sh
			g.mu.Unlock()
			if sh != nil {
				sh.Signal(sig)
			}
			if first && g.turn != nil {
				g.wg.Add(1)
				go g.terminate(sh, int(sig))
			}
		}
	}
}

// terminate ends a session on SIGTERM or SIGHUP: once the shell has gone, the turn is closed
// (recorded, providers stopped) between answers and the process exits with 128+n.
func (g *guard) terminate(sh *realshell.Shell, sig int) {
	defer g.wg.Done()
	if sh != nil {
		select {
		case <-sh.Exited():
		case <-time.After(2 * time.Second):
			sh.Signal(syscall.SIGKILL)
			<-sh.Exited()
		case <-g.done:
			return
		}
	}
	select {
	case <-g.done: // the session ended on its own and closes the turn itself
		return
	default:
	}
	g.closeTurn(terminatedReason(sig))
	os.Exit(128 + sig)
}

// closeTurn ends the turn once, between answers.
func (g *guard) closeTurn(reason string) {
	g.closeOnce.Do(func() {
		g.turnMu.Lock()
		g.turn.Close(reason)
		// Keep the lock: no answer may start once the turn has ended.
	})
}

func (g *guard) setShell(sh *realshell.Shell) {
	g.mu.Lock()
	g.sh = sh
	g.mu.Unlock()
}

func (g *guard) terminatedBy() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.terminated
}

// answer runs one answer with a context that SIGINT, SIGTERM and SIGHUP cancel.
func (g *guard) answer(f func(ctx context.Context) int) int {
	g.turnMu.Lock()
	defer g.turnMu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g.mu.Lock()
	if g.terminated != 0 {
		g.mu.Unlock()
		return 128 + g.terminated
	}
	g.cancel = cancel
	g.mu.Unlock()
	code := f(ctx)
	g.mu.Lock()
	g.cancel = nil
	g.mu.Unlock()
	return code
}

func (g *guard) stop() {
	signal.Stop(g.sigs)
	close(g.done)
	g.wg.Wait()
}
