package main

// What answering needs around a capability turn: the turn's settings as a command line gives
// them, and the signal guard.

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/spear-shell/spear-shell/capability"
	"github.com/spear-shell/spear-shell/cmd/internal/wire"
	"github.com/spear-shell/spear-shell/interp"
	"github.com/spear-shell/spear-shell/interp/realshell"
)

// settings are the turn's settings for command line a (cmd/internal/wire).
func settings(a realshell.Args, self, manifest string, rs *realshell.RealShell, rsErr error) capability.Settings {
	return wire.Settings(a.Own == "" && a.Mode == realshell.ModeSession, self, manifest, rs, rsErr, "")
}

// request is what the turn is asked for by an invocation.
func request(inv *interp.Invocation) capability.Request {
	return capability.Request{Verb: inv.Verb, Targets: inv.Targets, Arguments: inv.Arguments, Source: inv.Source,
		Words: inv.Words, Limit: inv.Limit, Cursor: inv.Cursor}
}

// terminatedReason is the turn_ended reason for a terminating signal.
func terminatedReason(sig int) string { return "terminated by " + syscall.Signal(sig).String() }

// guard turns signals into what SPEC 4 asks: SIGINT cancels the answer in progress (exit 130)
// and reaches the running command; SIGTERM and SIGHUP end the shell and, in a session, the turn
// and the process with 128+n, even while the session waits for input it may never get.
type guard struct {
	next       context.Context // the next answer's context, when prepare made it
	ready      chan struct{}   // closed once the signals are caught
	sigs       chan os.Signal
	done       chan struct{}
	wg         sync.WaitGroup
	mu         sync.Mutex
	sh         *realshell.Shell
	cancel     context.CancelFunc
	terminated int
	interrupts chan struct{} // a terminal session's, else nil
	// turn is the session's turn; answering holds turnMu, so that a terminating signal
	// ends the turn only between answers.
	turn      *capability.Turn
	turnMu    sync.Mutex
	closeOnce sync.Once
}

// newGuard catches SIGINT, SIGTERM and SIGHUP (realshell.Caught) until stop; turn is a session's turn (nil for -c).
// The signals are caught in the background: the runtime starts threads for that, and a cold
// invoke's turn (its provider's start above all) need not wait for them. A signal that comes
// before ends the process, as one that comes before newGuard does. Call caught before starting
// a real shell, which must inherit the dispositions as they then are.
func newGuard(turn *capability.Turn) *guard {
	g := &guard{sigs: make(chan os.Signal, 4), done: make(chan struct{}), ready: make(chan struct{}), turn: turn}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		signal.Notify(g.sigs, realshell.Caught()...)
		close(g.ready)
		g.loop()
	}()
	return g
}

// watchTerminal serves a terminal session: each SIGINT is also reported on the channel it
// returns (the session drops the typed line, or ends the line of an interrupted command), and a
// change of the window's size (SIGWINCH) is passed on to the real shell's group.
func (g *guard) watchTerminal() <-chan struct{} {
	g.mu.Lock()
	g.interrupts = make(chan struct{}, 1)
	g.mu.Unlock()
	if !signal.Ignored(syscall.SIGWINCH) { // ignored at start, the shell inherits that
		signal.Notify(g.sigs, syscall.SIGWINCH)
	}
	return g.interrupts
}

// prepare returns the context of the next answer ahead of it, so that work for that answer can
// start before it (capability.Turn.Prepare); the signals cancel it as they cancel an answer.
func (g *guard) prepare() context.Context {
	g.mu.Lock()
	defer g.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	g.next, g.cancel = ctx, cancel
	return ctx
}

// caught returns once the signals are caught.
func (g *guard) caught() { <-g.ready }

func (g *guard) loop() {
	for {
		select {
		case <-g.done:
			return
		case s := <-g.sigs:
			sig := s.(syscall.Signal)
			g.mu.Lock()
			if sig == syscall.SIGWINCH {
				sh := g.sh
				g.mu.Unlock()
				if sh != nil {
					sh.Signal(sig)
				}
				continue
			}
			if sig == syscall.SIGINT && g.interrupts != nil {
				select {
				case g.interrupts <- struct{}{}:
				default:
				}
			}
			first := sig != syscall.SIGINT && g.terminated == 0
			if first {
				g.terminated = int(sig)
			}
			if g.cancel != nil {
				g.cancel()
			}
			sh := g.sh
			g.mu.Unlock()
			switch {
			case sh == nil:
			case sig == syscall.SIGINT:
				sh.Interrupt() // a typed Ctrl-C, which bash may leave pending: realshell.Shell.Interrupt
			default:
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

// setShell names the real shell that signals are passed on to.
func (g *guard) setShell(sh *realshell.Shell) {
	g.mu.Lock()
	g.sh = sh
	g.mu.Unlock()
}

// terminatedBy is the terminating signal received (SIGTERM or SIGHUP), or 0.
func (g *guard) terminatedBy() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.terminated
}

// answer runs one answer with a context that SIGINT, SIGTERM and SIGHUP cancel.
func (g *guard) answer(f func(ctx context.Context) int) int {
	g.caught()
	g.turnMu.Lock()
	defer g.turnMu.Unlock()
	g.mu.Lock()
	ctx, cancel := g.next, g.cancel
	g.next = nil
	if ctx == nil {
		ctx, cancel = context.WithCancel(context.Background())
	}
	defer cancel()
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

// Stop stops catching signals.
func (g *guard) stop() {
	g.caught()
	signal.Stop(g.sigs)
	close(g.done)
	g.wg.Wait()
}
