package realshell

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// The real shell of a session (or of a -c string mixing forwarded commands and answers) is one
// `bash -s` process. Its stdin is the script pipe we write; every forwarded unit is sent as
//
//	{ UNIT
//	} 0</dev/null 62>&-
//
// so that the command reads /dev/null (or the terminal) instead of the script, and cannot see the
// reply pipe: bash keeps the saved copies of redirected descriptors close-on-exec. Before an
// answer is printed, a reply line is requested on fd 62 so that everything forwarded before it
// has finished; after an answer, `$?` is set with `. /dev/stdin <<<'return N'`, which forks
// nothing and makes `set -e` end the shell when the answer failed.
// bi runs the plumbing's commands as builtins: a function or alias the session defines under the
// same name (read, eval, printf, ...) must not take them over.
const bi = `\builtin `

const (
	replyFD    = 62
	terminalFD = 61
)

// ShellConfig says how to start the real shell.
type ShellConfig struct {
	Argv  []string // the whole command line, e.g. [/bin/bash -s -- args...] or a bwrap wrapper
	Argv0 string   // $0 for the script ("" keeps the shell's own)
	// Arg0 is the shell process's argv[0] when unconfined: spear-shell's own, so that $0, a
	// login shell's leading "-" and bash's message prefix are what bash run by that name gives.
	Arg0     string
	Env      []string // exact environment
	Dir      string
	Stdout   *os.File
	Stderr   *os.File
	Terminal *os.File // non-nil: forwarded commands read this terminal; nil: /dev/null
	// OwnGroup puts the shell in its own process group, so that signals for it are forwarded
	// rather than delivered by the terminal.
	OwnGroup bool
	// TrapInterrupt keeps the shell alive when SIGINT stops a command (a session goes on).
	TrapInterrupt bool
	// Tracing says the shell starts with xtrace or verbose on (-x, -v).
	Tracing bool
	// Boundary says Argv is a bwrap command line: signals then go to the sandboxed group, whose
	// pid bwrap reports on an info pipe.
	Boundary bool
}

// Shell is a running real shell fed by a script pipe.
type Shell struct {
	cmd     *exec.Cmd
	script  *os.File
	replies chan string
	exited  chan struct{}
	waitErr error
	seq     int
	dirty   bool // something was sent since the last reply
	status  int  // a status to set before the next forwarded unit; -1 none
	// restore marks status as one the shell already had (a reply reset it): setting it again
	// must not trigger set -e a second time.
	restore bool
	broken  bool // the script pipe is gone: the shell is exiting
	// groupTail closes the group a unit is sent in (see the package comment above).
	groupTail string
	batch     strings.Builder // queued units, not yet sent
	tracing   bool            // xtrace or verbose is on, as far as we know: send units as script text
	terminal  bool            // forwarded commands read the terminal the session is read from
	info      *os.File        // bwrap's info pipe, nil when unconfined
	child     int             // the sandboxed group's leader, once read from info
	readers   sync.WaitGroup
}

// StartShell starts the real shell and sends its first lines.
func StartShell(cfg ShellConfig) (*Shell, error) {
	if len(cfg.Argv) == 0 {
		return nil, errors.New("real shell: empty command line")
	}
	scriptR, scriptW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("real shell: %w", err)
	}
	replyR, replyW, err := os.Pipe()
	if err != nil {
		scriptR.Close()
		scriptW.Close()
		return nil, fmt.Errorf("real shell: %w", err)
	}
	path := cfg.Argv[0]
	if !strings.Contains(path, "/") {
		if path, err = exec.LookPath(path); err != nil {
			return nil, fmt.Errorf("real shell: %w", err)
		}
	}
	argv := cfg.Argv
	var infoR, infoW *os.File
	if cfg.Boundary {
		if infoR, infoW, err = os.Pipe(); err != nil {
			return nil, fmt.Errorf("real shell: %w", err)
		}
		fd := 3 + 1
		if cfg.Terminal != nil {
			fd++
		}
		argv = append([]string{argv[0], "--info-fd", strconv.Itoa(fd)}, argv[1:]...)
	}
	if cfg.Arg0 != "" && !cfg.Boundary {
		argv = append([]string{cfg.Arg0}, argv[1:]...)
	}
	cmd := &exec.Cmd{
		Path:   path,
		Args:   argv,
		Env:    cfg.Env,
		Dir:    cfg.Dir,
		Stdin:  scriptR,
		Stdout: cfg.Stdout,
		Stderr: cfg.Stderr,
		// fd 3 is the reply pipe, fd 4 the terminal; the init line moves them out of the way.
		ExtraFiles:  []*os.File{replyW},
		SysProcAttr: &syscall.SysProcAttr{Setpgid: cfg.OwnGroup},
	}
	if cfg.Terminal != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, cfg.Terminal)
	}
	if infoW != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, infoW)
		defer infoW.Close()
	}
	if err := cmd.Start(); err != nil {
		if infoR != nil {
			infoR.Close()
		}
		scriptR.Close()
		scriptW.Close()
		replyR.Close()
		replyW.Close()
		return nil, fmt.Errorf("real shell: %w", err)
	}
	scriptR.Close()
	replyW.Close()
	s := &Shell{cmd: cmd, script: scriptW, replies: make(chan string, 1), exited: make(chan struct{}), status: -1, info: infoR, tracing: cfg.Tracing, terminal: cfg.Terminal != nil}
	s.readers.Add(2)
	go func() {
		defer s.readers.Done()
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	go func() {
		defer s.readers.Done()
		defer close(s.replies)
		defer replyR.Close()
		br := bufio.NewReader(replyR)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			s.replies <- strings.TrimSuffix(line, "\n")
		}
	}()
	// exec stays bare: only `exec` itself makes its redirections permanent (`builtin exec`
	// undoes them afterwards, as for any other command).
	init := fmt.Sprintf("exec %d>&3 3>&-", replyFD)
	if cfg.Terminal != nil {
		init += fmt.Sprintf("; exec %d<&4 4>&-", terminalFD)
	}
	if cfg.Argv0 != "" {
		init += "; BASH_ARGV0=" + shellQuote(cfg.Argv0)
	}
	if cfg.TrapInterrupt {
		init += "; " + bi + "trap '" + bi + ":' INT"
	}
	s.write(quiet(init))
	s.stdinRedirect(cfg.Terminal != nil)
	return s, nil
}

// stdinRedirect is chosen once: a unit's commands read the terminal or /dev/null.
func (s *Shell) stdinRedirect(terminal bool) {
	if terminal {
		s.groupTail = fmt.Sprintf("\n} 0<&%d %d<&- %d>&-\n", terminalFD, terminalFD, replyFD)
	} else {
		s.groupTail = fmt.Sprintf("\n} 0</dev/null %d>&-\n", replyFD)
	}
}

func (s *Shell) write(text string) {
	if s.broken {
		return
	}
	if _, err := io.WriteString(s.script, text); err != nil {
		// The shell has exited (exit N, set -e); what it did not read is not run, as in bash.
		s.broken = true
	}
}

// Forward queues one unit (whole commands) for the shell; Flush sends what is queued.
func (s *Shell) Forward(unit string) {
	s.flushStatus()
	s.batch.WriteString(strings.TrimSuffix(unit, "\n"))
	s.batch.WriteByte('\n')
	s.dirty = true
}

// batchPrelude starts every batch read as data: it removes the two variables the batch line
// used and gives the batch the $? the shell had before it, without tripping set -e.
const batchPrelude = bi + "unset __spear_b; " + bi + ". /dev/stdin <<__SPEAR_STATUS__ && " + bi + ":\n" +
	bi + "unset __spear_s; " + bi + "return $__spear_s\n__SPEAR_STATUS__\n"

// Flush sends the queued units without waiting for them to run. bash reads its script from a
// pipe one byte at a time, so a batch is sent as data: a short line makes bash read the batch
// with one `read -N` and run it with eval, in the group that gives it /dev/null as stdin. Under
// xtrace or verbose (whose output would show that plumbing), or for text holding a NUL byte (which
// no variable can hold), the units are sent as script text in the group instead.
func (s *Shell) Flush() {
	if s.batch.Len() == 0 {
		return
	}
	body := s.batch.String()
	s.batch.Reset()
	if s.tracing || strings.IndexByte(body, 0) >= 0 {
		s.write("{ " + body + s.groupTail[1:])
		return
	}
	payload := batchPrelude + body
	s.write("__spear_s=$?; IFS= LC_ALL=C " + bi + "read -r -N " + strconv.Itoa(len(payload)) +
		" __spear_b; { " + bi + "eval \"$__spear_b\"" + s.groupTail + payload)
}

// SetStatus makes $? equal code before the next forwarded command, as if the answer had been a
// command of the shell. A failing status under `set -e` ends the shell there.
func (s *Shell) SetStatus(code int) {
	s.status, s.restore = code, false
	if code != 0 {
		// Send it now so that `set -e` ends the shell before another answer is given.
		s.flushStatus()
		s.dirty = true
	}
}

func (s *Shell) flushStatus() {
	if s.status >= 0 {
		s.Flush()
	}
	switch {
	case s.status < 0:
	case s.status == 0:
		s.write(quiet(bi + ":"))
	case s.restore:
		// A failure on the left of && never triggers set -e.
		s.write(quiet(bi + ". /dev/stdin <<<'" + bi + "return " + strconv.Itoa(s.status) + "' && " + bi + ":"))
	default:
		s.write(quiet(bi + ". /dev/stdin <<<'" + bi + "return " + strconv.Itoa(s.status) + "'"))
	}
	s.status = -1
}

// Sync waits until everything sent so far has run. It reports false when the shell has ended
// (exit, set -e, a signal) instead.
func (s *Shell) Sync() bool {
	if !s.dirty {
		return !s.ended()
	}
	s.Flush()
	s.seq++
	token := "S" + strconv.Itoa(s.seq)
	// printf is a builtin: the reply fd is never seen by a child process. The reply carries $?,
	// which printf itself resets, so that it can be restored before the next command.
	s.write(quiet(bi + "printf '%s %d %s\\n' " + token + " \"$?\" \"$-\" >&" + strconv.Itoa(replyFD)))
	for {
		select {
		case line, ok := <-s.replies:
			if !ok {
				<-s.exited
				return false
			}
			if rest, found := strings.CutPrefix(line, token+" "); found {
				s.dirty = false
				status, flags, _ := strings.Cut(rest, " ")
				if n, err := strconv.Atoi(status); err == nil && n != 0 {
					s.status, s.restore = n, true
				}
				s.tracing = strings.ContainsAny(flags, "xv")
				return true
			}
		case <-s.exited:
			return false
		}
	}
}

func (s *Shell) ended() bool {
	select {
	case <-s.exited:
		return true
	default:
		return s.broken
	}
}

// Exited is closed when the shell process has ended.
func (s *Shell) Exited() <-chan struct{} { return s.exited }

// Signal sends sig to the shell's process group (OwnGroup) or to the shell.
func (s *Shell) Signal(sig syscall.Signal) {
	select {
	case <-s.exited:
		return
	default:
	}
	pid := s.cmd.Process.Pid
	switch {
	case s.info != nil:
		if s.child == 0 {
			s.child = readChildPid(s.info)
		}
		if s.child > 0 {
			// --new-session made the sandboxed command the leader of its own group.
			pid = -s.child
		}
	case s.cmd.SysProcAttr != nil && s.cmd.SysProcAttr.Setpgid:
		pid = -pid
	}
	_ = syscall.Kill(pid, sig)
}

// Close ends the script and waits for the shell; it returns the shell's exit status, as bash
// reports it to its parent (128+n for a signal).
func (s *Shell) Close() int {
	s.Flush()
	s.flushStatus()
	s.script.Close()
	<-s.exited
	s.readers.Wait()
	if s.info != nil {
		s.info.Close()
	}
	return exitStatus(s.cmd.ProcessState)
}

func exitStatus(ps *os.ProcessState) int {
	if ps == nil {
		return 1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// quiet makes a line of spear-shell's own plumbing: its xtrace output (set -x) goes nowhere.
// A group keeps exec's redirections and the status of what it runs, set -e included.
func quiet(commands string) string {
	return "{ " + commands + "; } 2>/dev/null\n"
}

// Terminal tells whether forwarded commands read the terminal the session is read from.
func (s *Shell) Terminal() bool { return s.terminal }

// Ended tells whether the shell has exited, or its script pipe is gone.
func (s *Shell) Ended() bool { return s.ended() }
