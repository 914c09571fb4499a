package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spear-shell/spear-shell/capability"
	"github.com/spear-shell/spear-shell/capability/keeper"
	"github.com/spear-shell/spear-shell/cmd/spear-shell/internal/fastpath"
	"github.com/spear-shell/spear-shell/interp"
	"github.com/spear-shell/spear-shell/interp/envelope"
	"github.com/spear-shell/spear-shell/interp/invocation"
	"github.com/spear-shell/spear-shell/interp/realshell"
	"github.com/spear-shell/spear-shell/interp/sandbox"
	"github.com/spear-shell/spear-shell/interp/session"
	"github.com/spear-shell/spear-shell/report"
)

// run decides a command line whole: spear-shell's own options, -c strings (answered, mixed or
// forwarded) and sessions.
func run(argv []string, stdin, stdout, stderr *os.File) int {
	realshell.SetNonDumpable()
	if sandbox.IsStub(argv[0]) {
		return sandbox.RefuseStub(stderr)
	}
	if len(argv) > 1 && argv[1] == "--report" { // the turn report has flags of its own (SPEC 16)
		return report.Main(argv[2:], stdout, stderr, isTerminal(stdout), os.Getenv)
	}
	a := realshell.ParseArgs(argv[1:])
	if a.Problem != "" {
		fmt.Fprintf(stderr, "spear-shell: %s\n", a.Problem)
		return 2
	}
	switch a.Own {
	case "keeper":
		return runKeeper(a, stderr)
	case "broker", "broker-stop", "broker-release", "broker-serve":
		return runBroker(a, stdout, stderr)
	}
	if a.Own == "import" {
		return runImport(argv[0], a.OwnArgs, stderr)
	}
	self, manifest, rs, rsErr := fastpath.RealShell(a)
	if self == "" {
		fmt.Fprintf(stderr, "spear-shell: %v\n", rsErr)
		return 126
	}
	// Before any signal is caught: what was ignored at start stays ignored, for this process
	// and the real shell, as under bash (--check says when that cannot be known).
	_ = realshell.KeepIgnored()
	ts := settings(a, self, manifest, rs, rsErr)
	ctx := context.Background()
	switch a.Own {
	case "spear-version":
		fmt.Fprintln(stdout, "spear-shell", Version)
		return 0
	case "check":
		code := capability.Check(ctx, ts, stdout, stderr)
		checkIgnored(stdout, rs)
		refused := checkBoundary(stdout, rs)
		if !refused {
			checkLogin(stdout, rs)
		}
		if refused && code == 0 {
			fmt.Fprintln(stderr, "spear-shell: --check found problems")
			code = 1
		}
		fmt.Fprint(stdout, dynamicWarning())
		return code
	case "lock":
		return capability.Lock(ctx, ts, a.IDs, a.Diff, stdout, stderr)
	case "end-turn":
		code := keeper.EndTurn(ts.Settings, stderr)
		if code == 0 && rs != nil && rs.Boundary != nil {
			// The turn's /tmp is kept for the whole turn (SPEC 9); the turn is over now.
			if err := rs.Boundary.RemoveTmp(); err != nil {
				fmt.Fprintf(stderr, "spear-shell: --end-turn: %v\n", err)
			}
		}
		return code
	case "context":
		turn := capability.NewTurn(ts)
		defer turn.Close("")
		return turn.Context(ctx, stdout, stderr)
	}
	if rsErr != nil {
		fmt.Fprintf(stderr, "spear-shell: %v\n", rsErr)
		return 126
	}
	switch a.Mode {
	case realshell.ModeString:
		if a.NoExec {
			break
		}
		turn := capability.NewTurn(ts)
		defer turn.Close("")
		// An envelope of the turn's terminal has its command judged alone (SPEC 3).
		var m *envelope.Match
		var an interp.Analysis
		if invocation.MayInvoke(a.String) {
			m, an = decideEnvelope(turn, turn.Terminal(), a.String, login(a.Options), self)
		}
		if m == nil {
			an = interp.Analyze(a.String)
		}
		if m != nil && an.Verdict != interp.Refuse {
			// The files the envelope writes for the terminal are bound in at their host paths.
			tidy, err := rs.Boundary.BindFiles(m.Files())
			defer tidy()
			if err != nil {
				fmt.Fprintf(stderr, "spear-shell: %v\n", err)
			}
		}
		switch an.Verdict {
		case interp.Forward:
			break
		case interp.Refuse:
			code := turn.Refuse(an.Code, an.Reason, stderr)
			if m != nil {
				code = m.Refused(code, runOutside)
			}
			return code
		default:
			return runString(a, an, m, rs, turn, stdin, stdout, stderr)
		}
	case realshell.ModeSession:
		if a.NoExec {
			// bash -n only reads: nothing is answered or recorded, and the real shell reads
			// (and checks) the input itself.
			break
		}
		return runSession(a, self, rs, capability.NewTurn(ts), stdin, stdout, stderr)
	}
	return fastpath.Exec(argv[0], a, rs)
}

// runString answers a -c string that holds invocations. A string of answers alone starts no
// shell; otherwise its forwarded parts run in one real shell, in order around the answers. When
// the string is envelope m, an is its command's analysis and the envelope's parts run too.
func runString(a realshell.Args, an interp.Analysis, m *envelope.Match, rs *realshell.RealShell, turn *capability.Turn, stdin, stdout, stderr *os.File) int {
	g := newGuard(nil)
	defer g.stop()
	// The first answer's providers start now, while the signals are being caught.
	turn.Prepare(g.prepare())
	answer := func(inv *interp.Invocation) int {
		return g.answer(func(ctx context.Context) int {
			return turn.Answer(ctx, request(inv), stdout, stderr)
		})
	}
	if m == nil && onlyAnswers(an) {
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
	g.caught()
	sh, err := startShell(a, rs, stdout, stderr, nil)
	if err != nil {
		fmt.Fprintf(stderr, "spear-shell: %v\n", err)
		return 126
	}
	g.setShell(sh)
	h := session.Handlers{
		Answer:  answer,
		Refuse:  func(code, reason string) int { return turn.Refuse(code, reason, stderr) },
		Outside: runOutside,
		Shell:   rs.Path,
	}
	if m != nil {
		return session.RunEnvelope(m, an, sh, h)
	}
	return session.RunSegments(an, sh, h)
}

// runSession runs commands from stdin in one real shell until EOF, exit, or a signal, and
// then ends the turn.
func runSession(a realshell.Args, self string, rs *realshell.RealShell, turn *capability.Turn, stdin, stdout, stderr *os.File) int {
	g := newGuard(turn)
	defer g.stop()
	term := terminalSession(a, stdin, stderr, g)
	var terminal *os.File
	if term != nil || isTerminal(stdin) {
		terminal = stdin
	}
	// The turn's scope is pinned before the agent's first command can change the workspace: the
	// pin (the turn's first load) runs while the real shell starts, and nothing is sent to the
	// shell before it is done.
	pinned := make(chan struct{})
	go func() {
		defer close(pinned)
		turn.Pin()
	}()
	g.caught()
	sh, err := startShell(a, rs, stdout, stderr, &sessionOpts{terminal: terminal, prompts: term != nil})
	<-pinned
	if err != nil {
		fmt.Fprintf(stderr, "spear-shell: %v\n", err)
		g.closeTurn("the real shell could not start")
		return 126
	}
	g.setShell(sh)
	handlers := session.Handlers{
		Answer: func(inv *interp.Invocation) int {
			return g.answer(func(ctx context.Context) int {
				return turn.Answer(ctx, request(inv), stdout, stderr)
			})
		},
		Refuse: func(code, reason string) int {
			return g.answer(func(context.Context) int { return turn.Refuse(code, reason, stderr) })
		},
		Envelope: sessionEnvelopes(turn, login(a.Options), self),
		Outside:  runOutside,
		Shell:    rs.Path,
	}
	var code int
	if term != nil {
		// An envelope's outside part (tmux wait -S done) tells the harness the command ended:
		// what it types next is echoed after the prompt.
		handlers.Outside = func(argv []string) int {
			term.Quiet()
			return runOutside(argv)
		}
		sourceRC(sh, a.Options)
		code = session.RunTerminal(term, sh, handlers)
	} else {
		code = session.RunSession(stdin, sh, handlers)
	}
	if n := g.terminatedBy(); n != 0 {
		g.closeTurn(terminatedReason(n))
		return 128 + n
	}
	g.closeTurn("the session ended")
	return code
}

// sessionOpts says how a session's real shell serves it; nil for a -c string.
type sessionOpts struct {
	terminal *os.File // forwarded commands read this terminal (nil: /dev/null)
	prompts  bool     // a terminal session: bash -i's prompts
}

func startShell(a realshell.Args, rs *realshell.RealShell, stdout, stderr *os.File, sess *sessionOpts) (*realshell.Shell, error) {
	argv := append([]string{rs.Path}, a.Options...)
	argv = append(argv, "-s", "--")
	argv = append(argv, a.Params...)
	cfg := realshell.ShellConfig{
		Argv:          rs.Argv(argv),
		Env:           rs.Env,
		Dir:           rs.Dir,
		Stdout:        stdout,
		Stderr:        stderr,
		TrapInterrupt: sess != nil,
		// The shell gets signals from us, not from a terminal: a Ctrl-C must not end bwrap.
		OwnGroup: true,
		Tracing:  bashOption(a.Options, 'x', "xtrace") || bashOption(a.Options, 'v', "verbose"),
		Boundary: rs.Isolated(),
	}
	if a.HasName {
		cfg.Argv0 = a.Name
	} else {
		cfg.Arg0 = os.Args[0]
	}
	if sess != nil {
		cfg.Terminal, cfg.Prompts = sess.terminal, sess.prompts
	}
	return realshell.StartShell(cfg)
}

func onlyAnswers(an interp.Analysis) bool {
	for _, seg := range an.Segments {
		if seg.Invocation == nil && strings.TrimSpace(seg.Forward) != "" {
			return false
		}
	}
	return true
}

// login tells whether bash's options make a login shell (-l, --login).
func login(opts []string) bool {
	return bashOption(opts, 'l', "") || slices.Contains(opts, "--login")
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
