package realshell

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The real shell of a session (or of a -c string mixing forwarded commands and answers) is one
// `bash -s` process. Its stdin is the script pipe we write; every forwarded unit is sent as
//
//	{ UNIT
//	} 0</dev/null 65>&-
//
// so that the command reads /dev/null (or the terminal) instead of the script, and cannot see the
// reply pipe: bash keeps the saved copies of redirected descriptors close-on-exec. Before an
// answer is printed, a reply line is requested on fd 65 so that everything forwarded before it
// has finished; after an answer, `$?` is set by a function that returns N (setStatus), which
// forks nothing and makes `set -e` end the shell when the answer failed.
// bi runs the plumbing's commands as builtins: a function or alias the session defines under the
// same name (read, eval, printf, ...) must not take them over.
const bi = `\builtin `

// shellQuote quotes s as one word of the real shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

const (
	replyFD    = 65
	terminalFD = 66
)

// ShellConfig says how to start the real shell.
type ShellConfig struct {
	Argv  []string // the whole command line, e.g. [/bin/bash -s -- args...] or a bwrap wrapper
	Argv0 string   // $0 for the script ("" keeps the shell's own)
	// Arg0 is the shell process's argv[0] when unconfined: spear-shell's own, so that $0, a
	// login shell's leading "-" and bash's message prefix are what bash run by that name gives.
	Arg0   string
	Env    []string // exact environment
	Dir    string
	Stdout *os.File
	Stderr *os.File
	// Terminal non-nil: forwarded commands read this terminal; nil: /dev/null. An unconfined
	// shell then runs in a session of its own, as bwrap's --new-session puts a confined one, so
	// that reading the terminal from outside its foreground group does not stop it (SIGTTIN)
	// and a typed Ctrl-C reaches spear-shell, which passes it on.
	Terminal *os.File
	// OwnGroup puts the shell in its own process group, so that signals for it are forwarded
	// rather than delivered by the terminal.
	OwnGroup bool
	// Prompts says the session is a terminal session: the shell gets bash -i's PS1 and PS2.
	Prompts bool
	// TrapInterrupt keeps the shell alive when SIGINT stops a command (a session goes on); in a
	// terminal session (Prompts) SIGINT also gives up the rest of the unit, as in bash -i.
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
	dirty   bool // something was sent since the last reply
	status  int  // a status to set before the next forwarded unit; -1 none
	// restore marks status as one the shell already had (a reply reset it): setting it again
	// must not trigger set -e a second time.
	restore bool
	broken  bool // the script pipe is gone: the shell is exiting
	// groupHead and groupTail make the group a unit is sent in (session_fds.go).
	groupHead, groupTail string
	stdin                string          // the redirections that give a unit's commands their stdin
	batch                strings.Builder // queued units, not yet sent
	tracing              bool            // xtrace or verbose is on, as far as we know: send units as script text
	// dupsStdin: a unit duplicated stdin (<&0); from then on units go as script text (dupstdin.go).
	dupsStdin bool
	// pipes: a unit named PIPESTATUS; from then on batch boundaries keep it (session_pipes.go).
	// pipestatus is a reply's "s,p0,p1,...," to give back; pipesRestore the text that does.
	pipes                    bool
	pipestatus, pipesRestore string
	// history: a unit named history; from then on batches keep the plumbing out of it
	// (session_history.go).
	history bool
	// errexit: set -e may be on; traps: a DEBUG or RETURN trap may be set; ending: the units
	// still to come are the last; tailPending: the last batch's tail kept its status
	// (session_pipes.go).
	errexit, traps, ending, tailPending bool
	// aliases: the session may expand aliases; aliasesOff: the top level has expansion off and
	// __spear_e holds the session's setting (session_aliases.go). cutShort: the last unit is a
	// command the end of input cut short (CutShort).
	aliases, aliasesOff, cutShort bool
	// commandFunc: a unit may have defined a function named command (session_envelope.go).
	commandFunc bool
	// alone: a function was defined that may hold an error on which bash abandons its whole
	// command; from then on each unit is a batch of its own (discard.go).
	alone bool
	// arithmetic: a unit gave a variable the integer attribute or subscripted an array; from
	// then on every unit that may assign or evaluate arithmetic ends its batch (discard.go).
	// namerefs: a unit may have made a nameref; from then on every unit that expands anything
	// does. evalDefs: a function or trap that may assign or evaluate arithmetic was defined.
	arithmetic, namerefs, evalDefs bool
	terminal                       bool         // forwarded commands read the terminal the session is read from
	termDev                        uint64       // that terminal's device number (Rdev), to know a read of it (Interrupt)
	replied                        atomic.Int64 // replies the shell has written, for Interrupt to know its unit ended
	info                           *os.File     // bwrap's info pipe, nil when unconfined
	child                          int          // the sandboxed group's leader, once read from info
	childOnce                      sync.Once
	// plumbingTaken: the shell's commands took the plumbing's requests; the session ended.
	plumbingTaken bool
	// fdsCut: the shell ended with a descriptor limit below the plumbing's (session_fds.go).
	fdsCut bool
	stderr *os.File
	replyR *os.File // read by the reply reader; looked at by starved
	// promptCommands are the indices of PROMPT_COMMAND's elements, as the last reply gave them.
	promptCommands []string
	ps0            bool // PS0 is set and not empty, as the last prompt found it
	readers        sync.WaitGroup
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
		argv = append([]string{argv[0], "--info-fd", strconv.Itoa(infoFD)}, argv[1:]...)
	}
	if cfg.Arg0 != "" && !cfg.Boundary {
		argv = append([]string{cfg.Arg0}, argv[1:]...)
	}
	cmd := &exec.Cmd{
		Path:       path,
		Args:       argv,
		Env:        cfg.Env,
		Dir:        cfg.Dir,
		Stdin:      scriptR,
		Stdout:     cfg.Stdout,
		Stderr:     cfg.Stderr,
		ExtraFiles: sessionFiles(replyW, cfg.Terminal, infoW),
		// The shell ends with this process, even by SIGKILL, and does not run on what it has read.
		SysProcAttr: &syscall.SysProcAttr{Setpgid: cfg.OwnGroup, Pdeathsig: syscall.SIGKILL},
	}
	if cfg.Terminal != nil && !cfg.Boundary {
		cmd.SysProcAttr.Setpgid, cmd.SysProcAttr.Setsid = false, true
	}
	if infoW != nil {
		defer infoW.Close()
	}
	if err := startIgnoring(cfg.Boundary, cmd.Start); err != nil {
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
	s := &Shell{aliases: startsWithAliases(cfg), history: startsWithHistory(cfg), errexit: startsWithErrexit(cfg), cmd: cmd, script: scriptW, replies: make(chan string, 1), exited: make(chan struct{}), status: -1, info: infoR, stderr: cfg.Stderr, replyR: replyR, tracing: startsTracing(cfg), terminal: cfg.Terminal != nil}
	if cfg.Terminal != nil {
		var st unix.Stat_t
		if unix.Fstat(int(cfg.Terminal.Fd()), &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFCHR {
			s.termDev = st.Rdev
		}
	}
	s.readers.Add(2)
	go func() {
		defer s.readers.Done()
		s.fdsCut = s.info == nil && fdLimitCut(cmd.Process.Pid)
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	go func() {
		defer s.readers.Done()
		defer close(s.replies)
		defer replyR.Close()
		// A reply ends in a NUL byte, which no shell string holds: a prompt may span lines.
		br := bufio.NewReader(replyR)
		for {
			line, err := br.ReadString(0)
			if err != nil {
				return
			}
			s.replied.Add(1)
			s.replies <- strings.TrimSuffix(line, "\x00")
		}
	}()
	if s.aliases {
		// Expansion off before the first line of the plumbing's is read (session_aliases.go).
		if s.tracing {
			s.write(quiet(strings.TrimSuffix(aliasesKeep, "; ")))
		} else {
			s.write(strings.TrimSuffix(aliasesKeep, "; ") + "\n")
		}
		s.aliasesOff = true
	}
	var init []string
	if cfg.Argv0 != "" {
		init = append(init, "BASH_ARGV0="+shellQuote(cfg.Argv0))
	}
	switch {
	case cfg.TrapInterrupt && cfg.Prompts:
		init = append(init, bi+"trap -- "+shellQuote(interruptTrap())+" INT")
	case cfg.TrapInterrupt:
		init = append(init, bi+"trap '"+bi+":' INT")
	}
	if cfg.Prompts {
		init = append(init, promptDefaults(cfg.Env))
	}
	// The plumbing's /dev/null (session_fds.go).
	init = append(init, `\exec `+strconv.Itoa(nullFD)+"</dev/null")
	if s.history {
		// Started with history on: off until the first batch (session_history.go).
		init = append(init, strings.TrimSuffix(historyTail, "\n"))
	}
	s.write(quiet(strings.Join(init, "; ")))
	s.stdinRedirect(cfg.Terminal != nil)
	// The first prompt asks for PROMPT_COMMAND, which the environment may have set.
	s.dirty = cfg.Prompts
	return s, nil
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
	if s.cutShort {
		s.forwardCutShort(unit)
		return
	}
	s.aliases = s.aliases || mentionsAliases(unit)
	s.pipes = s.pipes || mentionsPipestatus(unit)
	s.errexit = s.errexit || mentionsErrexit(unit)
	s.traps = s.traps || mentionsTraps(unit)
	s.history = s.history || mentionsHistory(unit)
	s.flushStatus()
	if !s.dupsStdin && dupsStdin(unit) {
		s.Flush()
		s.dupsStdin = true
	}
	if !s.tracing && mentionsTracing(unit) {
		// Inside a batch's eval, xtrace would trace with ++ and verbose show nothing: the units
		// from this one on go as script text, until a reply says tracing is off.
		s.Flush()
		s.tracing = true
	}
	// discard.go: what may lose the rest of a batch ends it.
	discards, defines, nameref := mayDiscard(unit)
	s.namerefs = s.namerefs || nameref
	evaluates := (defines || s.arithmetic) && mayEvaluate(unit)
	s.evalDefs = s.evalDefs || defines && (discards || evaluates)
	discards = discards || s.arithmetic && evaluates || s.namerefs && strings.IndexByte(unit, '$') >= 0
	s.arithmetic = s.arithmetic || discards
	s.alone = s.alone || s.arithmetic && s.evalDefs
	s.batch.WriteString(strings.TrimSuffix(unit, "\n"))
	s.batch.WriteByte('\n')
	s.dirty = true
	if s.alone || discards {
		s.Flush()
	}
}

// batchPrelude starts every batch read as data: it removes the two variables the batch line
// used and gives the batch the $? the shell had before it (and PIPESTATUS: session_pipes.go),
// without tripping set -e.
func (s *Shell) batchPrelude() string {
	if s.history {
		return bi + "unset __spear_b; " + s.aliasesOn() + historyOn + s.restoreStatus() + "\n"
	}
	return bi + "unset __spear_b; " + s.aliasesOn() + s.restoreStatus() + "\n"
}

// setStatus, followed by a status, sets $? to it as a command of the session would: a function
// that removes itself (and __spear_s, the batch line's saved status) and returns the status. It
// forks nothing, and leaves no trace where `. /dev/stdin <<<'return N'` did: a `.` at the top
// level fills BASH_ARGC. Followed by `&& :` it never trips set -e.
const setStatus = statusDef + "\\__spear_r "

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
	if s.tracing || s.dupsStdin || strings.IndexByte(body, 0) >= 0 {
		if s.aliasesOff {
			// Script text is read with the session's setting (session_aliases.go).
			s.write(quiet("__spear_s=$?; " + s.aliasesOn() + s.restoreStatus()))
		}
		s.write("{ " + s.groupHeadKeep() + body + s.batchTail(true) + s.groupTail)
		return
	}
	s.sendBatch(body, bi+"eval", "")
}

// sendBatch sends body as a batch read as data and run by eval (how it is called); after follows
// the eval (" && \builtin :" for a command on the left of &&).
func (s *Shell) sendBatch(body, eval, after string) {
	payload := s.batchPrelude() + body + s.batchTail(false)
	// read -N counts characters: in bytes under LC_ALL=C, which only text that is not ASCII
	// needs (restoring a LC_ALL that names no installed locale leaves bash in C, not in the
	// locale it had).
	lc := ""
	if !ascii(payload) {
		lc = "LC_ALL=C "
	}
	s.write("__spear_s=$?; " + lc + bi + "read -r -N " + strconv.Itoa(len(payload)) +
		" __spear_b; { " + s.groupHead + eval + " \"$__spear_b\"" + after + s.groupTail + payload)
}

// SetStatus makes $? equal code before the next forwarded command, as if the answer had been a
// command of the shell. A failing status under `set -e` ends the shell there.
func (s *Shell) SetStatus(code int) {
	s.status, s.restore, s.pipestatus = code, false, ""
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
	case s.pipes && s.pipestatus != "":
		// A reply's PIPESTATUS, for the next batch's prelude to give back (session_pipes.go).
		s.write(quiet("__spear_p=" + s.pipestatus))
	case s.status == 0:
		s.write(quiet(bi + ":"))
	case s.restore:
		// A failure on the left of && never triggers set -e.
		s.write(quiet(setStatus + strconv.Itoa(s.status) + " && " + bi + ":"))
	default:
		s.write(quiet(setStatus + strconv.Itoa(s.status)))
	}
	s.status, s.pipestatus = -1, ""
}

// Sync waits until everything sent so far has run. It reports false when the shell has ended
// (exit, set -e, a signal) instead.
func (s *Shell) Sync() bool {
	if !s.dirty {
		return !s.ended()
	}
	s.Flush()
	token := newToken()
	// printf is a builtin: the reply fd is never seen by a child process. The reply carries $?,
	// which printf itself resets, so that it can be restored before the next command, and the
	// indices of PROMPT_COMMAND's elements, which a terminal session runs before its prompt.
	// $? comes with PIPESTATUS, "s,p0,p1,...,", or from the last batch's tail (session_pipes.go).
	// The indices are joined by printf, not by "${!a[*]}", which would join them with IFS.
	s.write(quiet(bi + "printf -v __spear_y '%s,' \"$?\" \"${PIPESTATUS[@]}\"; " + bi + "printf -v __spear_i '%s ' \"${!PROMPT_COMMAND[@]}\"; " +
		bi + "printf '%s %s %s %s\\0' " + token + ` "${__spear_p-$__spear_y}" "$-" "$__spear_i" >&` + strconv.Itoa(replyFD) + "; " +
		bi + "unset -v __spear_p __spear_y __spear_i"))
	rest, ok := s.reply(token)
	if !ok {
		return false
	}
	s.dirty = false
	fields := strings.Split(rest, " ")
	statuses := strings.Split(strings.TrimSuffix(fields[0], ","), ",")
	if n, err := strconv.Atoi(statuses[0]); err == nil && n != 0 {
		s.status, s.restore = n, true
	}
	// Only digits go back into the script: __spear_p is a variable the session could set.
	if (len(statuses) > 2 || len(statuses) == 2 && statuses[0] != statuses[1]) && statusList(fields[0]) {
		s.status, s.restore, s.pipestatus = max(s.status, 0), true, fields[0]
	}
	s.tracing = len(fields) > 1 && strings.ContainsAny(fields[1], "xv")
	s.errexit = s.errexit || len(fields) > 1 && strings.IndexByte(fields[1], 'e') >= 0
	s.tailPending = false
	s.promptCommands = nil
	if len(fields) > 2 {
		s.promptCommands = indices(fields[2:])
	}
	return true
}

// reply waits for the reply carrying token and returns what follows it. A reply with another
// token (written from inside by a builtin that reached the reply pipe) is dropped: tokens are
// random, so none can be made ahead of the request that names it.
func (s *Shell) reply(token string) (string, bool) {
	tick := time.NewTicker(starveCheck)
	defer tick.Stop()
	starved := 0
	for {
		select {
		case <-tick.C:
			// Twice in a row, so that a reply on its way is not taken for none.
			if !s.starved() {
				starved = 0
			} else if starved++; starved == 2 {
				s.abandon()
			}
		case line, ok := <-s.replies:
			if !ok {
				<-s.exited
				return "", false
			}
			if rest, found := strings.CutPrefix(line, token+" "); found {
				return rest, true
			}
		case <-s.exited:
			return "", false
		}
	}
}

// newToken returns a reply token no one can guess: 128 random bits.
func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "R" + hex.EncodeToString(b[:])
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
		if child := s.shellPid(); child > 0 {
			// --new-session made the sandboxed command the leader of its own group.
			pid = -child
		}
	case s.cmd.SysProcAttr.Setpgid || s.cmd.SysProcAttr.Setsid:
		pid = -pid
	}
	_ = syscall.Kill(pid, sig)
}

// CutShort says that the unit forwarded next is the last and a command the end of input cut
// short (`echo "a`): bash -s meets the end while reading it, and its status then depends on how
// (the status before it for an end inside a quote, `${` or `$((`, unless that was 0; 2 for a
// command cut short by its grammar). It is sent as script text, with nothing after it, so that
// bash meets the end of its script there as bash -s does; nothing of it runs.
func (s *Shell) CutShort() { s.cutShort = true }

func (s *Shell) forwardCutShort(unit string) {
	s.cutShort = false
	s.Flush()
	s.flushStatus()
	if s.tailPending || s.aliasesOff {
		s.write(quiet("__spear_s=$?; " + s.aliasesOn() + s.restoreStatus()))
	}
	s.tailPending = false
	s.write(unit)
	s.dirty = true
}

// Close ends the script and waits for the shell; it returns the shell's exit status, as bash
// reports it to its parent (128+n for a signal).
func (s *Shell) Close() int {
	s.Ending()
	s.Flush()
	s.flushStatus()
	if s.tailPending {
		// The last batch's tail left status 0: bash -s ends with the last command's. The last
		// batch has no tail, and its last unit may be cut short by the end of input (`echo "a`):
		// an eval that meets the end inside a quote or ${ leaves bash's parser taking the first
		// word of the next line out of command position, so that the `{` this line starts with
		// would be a syntax error (bash's posixexp.tests). An empty line first puts the parser
		// back; nothing runs after this line, so no $LINENO counts it.
		// The session's alias setting comes back too, for an EXIT trap.
		s.write("\n" + quiet("__spear_s=$?; "+s.aliasesOn()+s.restoreStatus()))
	}
	s.script.Close()
	<-s.exited
	s.readers.Wait()
	if s.info != nil {
		s.info.Close()
	}
	if s.plumbingTaken {
		return 2
	}
	code := ExitStatus(s.cmd.ProcessState)
	if s.fdsCut {
		if s.stderr != nil {
			s.stderr.WriteString(fdLimitMessage)
		}
		if code == 0 {
			code = 2
		}
	}
	return code
}

// ExitStatus is a finished process's status as a shell reports it: 128+n for a signal n.
func ExitStatus(ps *os.ProcessState) int {
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
	return "{ " + commands + "; } " + noStderr + "\n"
}

// noStderr is how the plumbing silences its own lines: stderr closed for them, not sent to
// /dev/null. A restricted shell (set -r) refuses every redirection of output to a file
// (`2>/dev/null`: "restricted: cannot redirect output", and the group does not run), but not the
// closing of a descriptor; what is traced or reported there is lost, as in /dev/null. Nothing in
// these lines opens a file while descriptor 2 is free but the init's exec, which moves what it
// opens to its own number.
const noStderr = "2>&-"

// Terminal tells whether forwarded commands read the terminal the session is read from.
func (s *Shell) Terminal() bool { return s.terminal }

// Ended tells whether the shell has exited, or its script pipe is gone.
func (s *Shell) Ended() bool { return s.ended() }
