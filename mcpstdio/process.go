package mcpstdio

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

const (
	killWait  = 5 * time.Second        // for the leader to exit after SIGKILL (only a stuck kernel takes long)
	groupWait = time.Second            // for killed group members to finish dying
	tailWait  = 200 * time.Millisecond // for stderr to reach end of file so the tail is complete
)

// launch starts the program in a new session (its own process group, no controlling
// terminal) with pipes this package owns. The
// leader's exit is learnt from the process itself (awaitExit), whatever a grandchild still
// holds of the pipes.
func launch(cmd Command, opts Options) (*Client, error) {
	if err := checkCommand(cmd); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStart, err)
	}
	env := cmd.Env.vars
	if env == nil {
		env = []string{} // non-nil: exec would otherwise pass our own environment
	}
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err := pipe()
	if err != nil {
		return nil, fmt.Errorf("%w: stdin pipe: %w", ErrStart, err)
	}
	outR, outW, err := pipe()
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("%w: stdout pipe: %w", ErrStart, err)
	}
	errR, errW, err := pipe()
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("%w: stderr pipe: %w", ErrStart, err)
	}
	// A bare fork and exec, not exec.Cmd: os/exec's first start in a process probes pidfd
	// support by starting a process of its own, which costs a cold invoke a whole process
	// start; the exit is learnt from a pidfd here anyway (awaitExit).
	argv := append([]string{cmd.Path}, cmd.Args...)
	spawn := syscall.ForkExec
	if opts.Spawn != nil {
		spawn = opts.Spawn
	}
	pid, err := spawn(cmd.Path, argv, &syscall.ProcAttr{
		Dir:   cmd.Dir,
		Env:   lastWins(env),
		Files: []uintptr{inR.Fd(), outW.Fd(), errW.Fd()},
		// A session of its own, not just a process group: with no controlling terminal the
		// server can neither open /dev/tty nor type into the agent's terminal (TIOCSTI). Its
		// session leader is its group leader, so the group is still signalled as pgid.
		Sys: &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		closeAll()
		if cmd.Dir != "" && errors.Is(err, syscall.ENOENT) {
			if _, serr := os.Stat(cmd.Dir); serr != nil {
				return nil, fmt.Errorf("%w: chdir %s: %w", ErrStart, cmd.Dir, serr)
			}
		}
		return nil, fmt.Errorf("%w: fork/exec %s: %w", ErrStart, cmd.Path, err)
	}
	// The child holds its own copies; ours would keep the pipes open after it exits.
	inR.Close()
	outW.Close()
	errW.Close()

	c := &Client{
		opts:       opts,
		pgid:       pid,
		stdin:      inW,
		stdout:     outR,
		in:         Quiet(inW),
		out:        Quiet(outR),
		stderr:     errR,
		tail:       newTailBuffer(opts.StderrTail),
		wsem:       make(chan struct{}, 1),
		pending:    make(map[int64]waiter),
		cancelled:  make(map[int64]bool),
		dead:       make(chan struct{}),
		exited:     make(chan struct{}),
		reapOK:     make(chan struct{}),
		reaped:     make(chan struct{}),
		stderrDone: make(chan struct{}),
		closing:    make(chan struct{}),
	}
	go c.waitLeader()
	go c.drainStderr()
	go c.readLoop()
	return c, nil
}

func checkCommand(cmd Command) error {
	if !cmd.Env.set {
		return errors.New("no environment given (zero Env)")
	}
	for i, kv := range cmd.Env.vars {
		// The entry is not quoted: it may hold a secret.
		if strings.IndexByte(kv, '=') <= 0 {
			return fmt.Errorf("environment entry %d is not KEY=value", i)
		}
	}
	if cmd.Path == "" {
		return errors.New("no program path")
	}
	if !filepath.IsAbs(cmd.Path) {
		return fmt.Errorf("program path %q is not absolute", cmd.Path)
	}
	return nil
}

// waitLeader learns that the leader exited without reaping it, so that its pid, which
// names the group, cannot be reused before Close has signalled the group.
func (c *Client) waitLeader() {
	defer close(c.reaped)
	awaitExit(c.pgid)
	close(c.exited)
	<-c.reapOK
	reap(c.pgid) // releases the process; its status is moot once the group was killed
}

// lastWins drops earlier duplicates of a variable, as exec.Cmd does: the last value counts.
func lastWins(env []string) []string {
	last := make(map[string]int, len(env))
	for i, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		last[name] = i
	}
	if len(last) == len(env) {
		return env
	}
	out := make([]string, 0, len(last))
	for i, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if last[name] == i {
			out = append(out, kv)
		}
	}
	return out
}

func (c *Client) drainStderr() {
	defer close(c.stderrDone)
	buf := make([]byte, 4<<10) // stderr is mostly quiet; a turn starts many servers
	for {
		n, err := c.stderr.Read(buf)
		c.tail.Write(buf[:n])
		if err != nil {
			return
		}
	}
}

// StderrTail returns the last bytes of the server's stderr (at most Options.StderrTail).
func (c *Client) StderrTail() string { return c.tail.String() }

// Close stops the server: close its stdin, wait, SIGTERM its process group, wait,
// then SIGKILL the group in any case (grandchildren included), and reap it.
// It is idempotent and safe to call concurrently with requests, which then fail with
// ErrClosed. It returns an error only when the group could not be killed.
func (c *Client) Close() error {
	c.closeOnce.Do(func() { c.closeErr = c.shutdown() })
	return c.closeErr
}

func (c *Client) shutdown() error {
	c.mu.Lock()
	fault := c.broken != nil
	if c.broken == nil {
		c.broken = ErrClosed
	}
	c.mu.Unlock()
	close(c.closing)

	stdinWait, termWait := c.opts.StdinWait, c.opts.TermWait
	if fault {
		stdinWait, termWait = min(stdinWait, FaultWait), min(termWait, FaultWait)
	}
	c.stdin.Close() // also unblocks a write in progress
	if !c.waitExited(stdinWait) {
		signalGroup(c.pgid, syscall.SIGTERM)
		c.waitExited(termWait)
	}
	// The leader is not reaped yet, so the group id still names our group.
	signalGroup(c.pgid, syscall.SIGKILL)
	var err error
	if c.waitExited(killWait) {
		close(c.reapOK)
		<-c.reaped
		if !waitGroupGone(c.pgid, groupWait) {
			err = fmt.Errorf("close: process group %d still has live members after SIGKILL", c.pgid)
		}
	} else {
		err = fmt.Errorf("close: process %d did not exit after SIGKILL", c.pgid)
	}

	// Every writer of stderr is gone unless one escaped the group: let the drain
	// reach end of file so the tail is complete, then stop it regardless.
	select {
	case <-c.stderrDone:
	case <-time.After(tailWait):
	}
	c.stderr.Close()
	<-c.stderrDone
	c.stdout.Close() // unblocks the reader
	<-c.dead
	return err
}

// waitExited reports whether the leader exited within d.
func (c *Client) waitExited(d time.Duration) bool {
	select {
	case <-c.exited:
		return true
	default:
	}
	if d <= 0 {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.exited:
		return true
	case <-t.C:
		return false
	}
}

func signalGroup(pgid int, sig syscall.Signal) {
	// ESRCH (nobody left) is the expected outcome and not worth reporting.
	_ = syscall.Kill(-pgid, sig)
}

// waitGroupGone polls until no live process is left in the group, or d passes.
// Killed members may stay zombies until init reaps them; they hold nothing.
func waitGroupGone(pgid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if !groupAlive(pgid) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Pid is the server's process id, which is also its process group and session.
func (c *Client) Pid() int { return c.pgid }

// Ended is closed once the reader of the server's stdout stopped: the server closed it (it
// exited, as a rule) or broke the protocol. A caller that keeps the server (the broker) watches
// it, with LeaderExited, to learn that the server is gone between requests.
func (c *Client) Ended() <-chan struct{} { return c.dead }

// LeaderExited is closed once the server's process exited (a grandchild may still hold its pipes).
func (c *Client) LeaderExited() <-chan struct{} { return c.exited }
