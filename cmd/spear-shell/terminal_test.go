package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"

	"github.com/spear-shell/spear-shell/testdata/testkit"
)

// The `terminal` transcript command drives a program on a real pseudo-terminal, as tmux and
// pexpect drive a shell:
//
//	terminal [-noecho] [-setsid] [-settle] DIALOGUE PROGRAM [ARG...]
//
// -noecho turns the terminal's echo off before the program starts (pexpect's echo=False);
// -setsid starts it in a new session with the terminal as its streams but not as its
// controlling terminal (OpenHands' subprocess backend); otherwise the terminal is its
// controlling terminal, as under tmux. -settle waits, before each Ctrl-C or Ctrl-Z, until
// every thread of the program sleeps: bash 5.2's readline takes a SIGINT that comes between
// its redisplay and its next read only with the next key (it echoes ^C, then waits in poll
// without a prompt), which a loaded machine hits now and then, so bash as the oracle is
// run with -settle; spear-shell never is, since a key may come at any moment. DIALOGUE is a file of steps, one a line:
//
//	send "TEXT"       type TEXT (a Go string literal)
//	expect "REGEXP"   wait until the output after the last match matches
//	intr | eof | susp type Ctrl-C, Ctrl-D, Ctrl-Z
//	signal NAME       send the signal to the program's process group (OpenHands' Ctrl-C)
//	winsize ROWS COLS resize the terminal (the program gets SIGWINCH)
//	file PATH         wait until PATH exists (relative to $WORK)
//	exit N            wait for the program to end with status N
//
// The whole output, with carriage returns removed, is the command's stdout. A step waits at
// most termWait, which only keeps a broken program from hanging the test: it is never a measure.
func init() {
	registerCommands(map[string]func(*testscript.TestScript, bool, []string){"terminal": runTerminal})
}

const termWait = 60 * time.Second

// termEnv is what a program on the terminal gets of the transcript's environment.
var termEnv = []string{"PATH", "HOME", "TMPDIR", "WORK", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME",
	"SPEAR_ISOLATION", "SPEAR_HOME", "SPEAR_CAPABILITIES_FILE", "SPEAR_TURN_MANIFEST", "PS1", "PS2", "PS0", "PROMPT_COMMAND", "INPUTRC", "HISTFILE", "HISTSIZE", "LANG"}

func runTerminal(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("terminal: no negation")
	}
	noecho, setsid, settle := false, false, false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "-noecho":
			noecho = true
		case "-setsid":
			setsid = true
		case "-settle":
			settle = true
		default:
			ts.Fatalf("terminal: unknown option %s", args[0])
		}
		args = args[1:]
	}
	if len(args) < 2 {
		ts.Fatalf("usage: terminal [-noecho] [-setsid] [-settle] DIALOGUE PROGRAM [ARG...]")
	}
	steps := strings.Split(ts.ReadFile(args[0]), "\n")
	t := startTerm(ts, args[1:], noecho, setsid)
	t.settle = settle
	defer func() {
		ts.Stdout().Write([]byte(strings.ReplaceAll(t.output(), "\r", "")))
	}()
	for i, step := range steps {
		if step = strings.TrimSpace(step); step == "" || step[0] == '#' {
			continue
		}
		if err := t.step(step); err != nil {
			procs := t.processes()
			t.stop()
			ts.Fatalf("terminal: %s:%d: %s: %v\noutput so far:\n%s\nafter the last match: %q\nall: %q\nthe program's processes then:\n%s", args[0], i+1, step, err, t.output(), t.output()[t.mark:], t.output(), procs)
		}
	}
	t.stop()
}

type term struct {
	cmd    *exec.Cmd
	master *os.File
	mu     sync.Mutex
	out    bytes.Buffer
	more   chan struct{} // signalled when output arrives
	mark   int           // where the next expect starts
	done   chan struct{}
	settle bool // wait for the program to sleep before Ctrl-C and Ctrl-Z
}

func startTerm(ts *testscript.TestScript, argv []string, noecho, setsid bool) *term {
	master, tty, err := pty.Open()
	ts.Check(err)
	defer tty.Close()
	ts.Check(pty.Setsize(master, &pty.Winsize{Rows: 24, Cols: 80}))
	if noecho {
		tio, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
		ts.Check(err)
		tio.Lflag &^= unix.ECHO
		ts.Check(unix.IoctlSetTermios(int(tty.Fd()), unix.TCSETS, tio))
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		// The transcript's PATH, not the test process's, finds spear-shell.
		path = argv[0]
		for _, dir := range strings.Split(ts.Getenv("PATH"), ":") {
			if _, err := os.Stat(dir + "/" + argv[0]); err == nil {
				path = dir + "/" + argv[0]
				break
			}
		}
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Dir = ts.Getenv("WORK")
	cmd.Env = []string{"TERM=xterm"}
	for _, name := range termEnv {
		if v := ts.Getenv(name); v != "" {
			cmd.Env = append(cmd.Env, name+"="+v)
		}
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: !setsid}
	ts.Check(cmd.Start())
	t := &term{cmd: cmd, master: master, more: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			t.mu.Lock()
			t.out.Write(buf[:n])
			t.mu.Unlock()
			select {
			case t.more <- struct{}{}:
			default:
			}
			if err != nil {
				close(t.done)
				return
			}
		}
	}()
	return t
}

func (t *term) output() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.out.String()
}

func (t *term) step(step string) error {
	verb, arg, _ := strings.Cut(step, " ")
	switch verb {
	case "send":
		s, err := strconv.Unquote(arg)
		if err != nil {
			return err
		}
		_, err = t.master.Write([]byte(s))
		return err
	case "intr", "eof", "susp":
		if t.settle && verb != "eof" {
			if err := t.waitAsleep(); err != nil {
				return err
			}
		}
		_, err := t.master.Write([]byte{map[string]byte{"intr": 3, "eof": 4, "susp": 26}[verb]})
		return err
	case "expect":
		s, err := strconv.Unquote(arg)
		if err != nil {
			return err
		}
		return t.expect(regexp.MustCompile(s))
	case "signal":
		return syscall.Kill(-t.cmd.Process.Pid, unix.SignalNum("SIG"+arg))
	case "winsize":
		var rows, cols uint16
		if _, err := fmt.Sscan(arg, &rows, &cols); err != nil {
			return err
		}
		return pty.Setsize(t.master, &pty.Winsize{Rows: rows, Cols: cols})
	case "file":
		if !testkit.Poll(func() bool { _, err := os.Stat(filepath.Join(t.cmd.Dir, arg)); return err == nil }) {
			return fmt.Errorf("no %s after a minute", arg)
		}
		return nil
	case "exit":
		want, err := strconv.Atoi(arg)
		if err != nil {
			return err
		}
		exited := make(chan error, 1)
		go func() { exited <- t.cmd.Wait() }()
		select {
		case <-exited:
		case <-time.After(termWait):
			return fmt.Errorf("still running")
		}
		if got := t.cmd.ProcessState.ExitCode(); got != want {
			return fmt.Errorf("exit status %d, want %d", got, want)
		}
		return nil
	}
	return fmt.Errorf("unknown step")
}

// processes describes the program and every process below it, a line each: pid, parent,
// process group, state, where in the kernel it waits, and its command line.
func (t *term) processes() string {
	type proc struct{ pid, ppid, pgrp, line string }
	var all []proc
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		f := testkit.ProcStat("/proc/" + d.Name() + "/stat") // state, ppid, pgrp, ...
		if len(f) < 3 {
			continue
		}
		wchan, _ := os.ReadFile("/proc/" + d.Name() + "/wchan")
		cmdline, _ := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		line := fmt.Sprintf("%s ppid=%s pgrp=%s %s %s %q", d.Name(), f[1], f[2], f[0], wchan, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
		all = append(all, proc{d.Name(), f[1], f[2], line})
	}
	var b strings.Builder
	var walk func(pid string)
	walk = func(pid string) {
		for _, p := range all {
			if p.pid == pid {
				b.WriteString(p.line + "\n")
			}
		}
		for _, p := range all {
			if p.ppid == pid {
				walk(p.pid)
			}
		}
	}
	walk(strconv.Itoa(t.cmd.Process.Pid))
	return b.String()
}

// waitAsleep waits until every thread of the program is asleep (state S in /proc), that is
// waiting in a system call such as its read of the terminal.
func (t *term) waitAsleep() error {
	dir := fmt.Sprintf("/proc/%d/task", t.cmd.Process.Pid)
	var err error
	asleep := func() bool {
		var tasks []os.DirEntry
		if tasks, err = os.ReadDir(dir); err != nil {
			return true // the program is gone: said at once
		}
		for _, task := range tasks {
			if f := testkit.ProcStat(filepath.Join(dir, task.Name(), "stat")); len(f) == 0 || f[0] != "S" {
				return false
			}
		}
		return len(tasks) > 0
	}
	if !testkit.Poll(asleep) {
		return errors.New("the program was not asleep within a minute")
	}
	return err
}

func (t *term) expect(re *regexp.Regexp) error {
	deadline := time.After(termWait)
	for {
		t.mu.Lock()
		rest := t.out.Bytes()[t.mark:]
		if loc := re.FindIndex(rest); loc != nil {
			t.mark += loc[1]
			t.mu.Unlock()
			return nil
		}
		t.mu.Unlock()
		select {
		case <-t.more:
		case <-t.done:
			// The last read may have come with the end.
			t.mu.Lock()
			found := re.Match(t.out.Bytes()[t.mark:])
			t.mu.Unlock()
			if found {
				return t.expect(re)
			}
			return fmt.Errorf("the terminal closed before %q", re)
		case <-deadline:
			return fmt.Errorf("no %q after %v", re, termWait)
		}
	}
}

// stop ends the program if the dialogue left it running, and closes the terminal.
func (t *term) stop() {
	if t.cmd.ProcessState == nil {
		_ = syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
		_ = t.cmd.Process.Kill()
		_ = t.cmd.Wait()
	}
	// Take the output up to the end (the terminal closes when the last holder of it exits).
	select {
	case <-t.done:
	case <-time.After(termWait):
	}
	t.master.Close()
}
