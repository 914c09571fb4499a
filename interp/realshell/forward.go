package realshell

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"syscall"

	"github.com/spear-shell/spear-shell/interp/sandbox"
	"github.com/spear-shell/spear-shell/policy/paths"
)

// RealShell is how forwarded commands reach the real shell: which program, in which
// environment, inside which boundary.
type RealShell struct {
	Path     string            // the real shell (SPEAR_REAL_SHELL, default /bin/bash)
	Env      []string          // its environment: no SPEAR_*, the stub first on PATH
	Dir      string            // working directory ("": this process's)
	Boundary *sandbox.Boundary // nil: unconfined
	Note     string            // how it is confined, for --check, --context and turn_started
	// Verdicts are the trusted paths checked at start and Writable the writable roots, for
	// --check; both empty when the boundary is off.
	Verdicts []sandbox.Verdict
	Writable []string
}

// IsolationRequiredFix is what a user must do when SPEAR_ISOLATION=bwrap cannot be honoured.
const IsolationRequiredFix = "install bubblewrap (Debian package bubblewrap) and make sure unprivileged user namespaces are allowed, or set SPEAR_ISOLATION=none"

// NewRealShell decides how the real shell runs, from cheap sources only (SPEC 9 and 10).
// self is the spear-shell binary the stub points to; manifest is --manifest or
// SPEAR_TURN_MANIFEST. An error is a *paths.StateError or a *sandbox.BoundaryError (exit 126) or a wrong
// SPEAR_ISOLATION; with a *sandbox.BoundaryError rs still says what was checked (for --check).
func NewRealShell(getenv func(string) string, environ []string, self, manifest string) (*RealShell, error) {
	rs := &RealShell{Path: getenv("SPEAR_REAL_SHELL")}
	if rs.Path == "" {
		rs.Path = "/bin/bash"
	}
	if sandbox.InsideBoundary(getenv) {
		// One of ours outside made this environment (stub, handler, no SPEAR_*): a spear-shell
		// the agent starts here runs the shell as it is and makes nothing.
		rs.Env, rs.Note = environ, "inside a boundary already"
		return rs, nil
	}
	mode := getenv("SPEAR_ISOLATION")
	if mode != "" && mode != "none" && mode != "bwrap" {
		return nil, fmt.Errorf("SPEAR_ISOLATION=%q: use bwrap or none", mode)
	}
	parent, err := paths.EnsureStateParent(getenv)
	if err != nil {
		return nil, err
	}
	stubDir, err := sandbox.EnsureStub(parent, self)
	if err != nil {
		return nil, err
	}
	unconfined := func(note string) (*RealShell, error) {
		// The marker is all that tells a spear-shell started by the agent that it runs inside
		// one of ours (so it offers nothing); the boundary sets it itself.
		rs.Note = note
		rs.Env = append(sandbox.ShellEnv(environ, stubDir, false), sandbox.BoundaryMarker+"=none")
		return rs, nil
	}
	if mode == "none" {
		return unconfined("none (SPEAR_ISOLATION=none)")
	}
	bwrap, fi, err := sandbox.FindBwrap(getenv)
	if err != nil {
		if mode == "bwrap" {
			return nil, fmt.Errorf("SPEAR_ISOLATION=bwrap: the boundary cannot be made here (%v): %s", err, IsolationRequiredFix)
		}
		return unconfined("unconfined: " + err.Error())
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("boundary: working directory: %w", err)
	}
	p := sandbox.PlanBoundary(getenv, manifest, parent, cwd, []string{bwrap, rs.Path, self}, []string{"bwrap", "real shell", "spear-shell"})
	rs.Verdicts, rs.Writable = p.Verdicts, p.Roots
	if err := p.Verdicts[0].Err; err != nil {
		// bwrap is not run, not even probed, before it is trusted
		return rs, &sandbox.BoundaryError{Path: bwrap, Why: err.Error()}
	}
	if ok, reason := sandbox.Probe(bwrap, fi, parent); !ok {
		if mode == "bwrap" {
			return nil, fmt.Errorf("SPEAR_ISOLATION=bwrap: the boundary cannot be made here (%s): %s", reason, IsolationRequiredFix)
		}
		rs.Verdicts, rs.Writable = nil, nil
		return unconfined("unconfined: " + reason)
	}
	if p.Err != nil {
		return rs, p.Err
	}
	rs.Boundary = &sandbox.Boundary{
		Bwrap:      bwrap,
		Masks:      p.Masks,
		Writable:   p.Writable,
		Tmp:        p.Tmp,
		StubDir:    stubDir,
		StubTarget: self,
		Dir:        cwd,
	}
	rs.Env = sandbox.ShellEnv(environ, stubDir, true)
	rs.Note = "bwrap"
	return rs, nil
}

// Argv wraps a real-shell command line in the boundary when there is one.
func (rs *RealShell) Argv(argv []string) []string {
	if rs.Boundary == nil {
		return argv
	}
	return rs.Boundary.Args(argv)
}

// Isolated tells whether the real shell runs inside the boundary.
func (rs *RealShell) Isolated() bool { return rs.Boundary != nil }

// Executable is the absolute path of the running binary. On Linux it comes from /proc/self/exe,
// which the kernel keeps resolved through symlinks.
func Executable() (string, error) {
	return os.Executable()
}

// ErrNoShell: the real shell does not exist (exit 127, as a shell reports a missing command).
var ErrNoShell = errors.New("real shell: not found")

// checkShell gives a clear error when the real shell is missing, as a shell user would want.
func (rs *RealShell) checkShell() error {
	if fi, err := os.Stat(rs.Path); err != nil || fi.IsDir() {
		return fmt.Errorf("%w: %s (set SPEAR_REAL_SHELL)", ErrNoShell, rs.Path)
	}
	return nil
}

// Exec runs the real shell for command line a as the whole of this command: unconfined it
// replaces this process (so the shell is exactly what bash would have been); inside the
// boundary it runs bwrap, passes SIGINT, SIGTERM and SIGHUP on to the command inside, and exits
// with its status. Either way the shell starts with the signals ignored that were ignored when
// this process started (KeepIgnored, startIgnoring). argv0 is this process's argv[0], which the shell gets as bash would have
// (Args.Argv0Args). It returns only on error.
func (rs *RealShell) Exec(argv0 string, a Args) error {
	if rs.Boundary == nil {
		argv := append([]string{argv0}, a.Bash...)
		err := startIgnoring(false, func() error { return syscall.Exec(rs.Path, argv, rs.Env) })
		if cerr := rs.checkShell(); cerr != nil {
			return cerr
		}
		return fmt.Errorf("real shell: %w", err)
	}
	if err := rs.checkShell(); err != nil {
		return err
	}
	inherited := inheritedFDs()
	infoFD := 3
	if n := len(inherited); n > 0 {
		infoFD = inherited[n-1] + 1
	}
	argv := rs.Boundary.Args(append([]string{rs.Path}, a.Argv0Args(argv0)...))
	argv = slices.Insert(argv, 1, "--info-fd", strconv.Itoa(infoFD), "--block-fd", strconv.Itoa(infoFD+1))
	var pid int
	var info *os.File
	var release func()
	err := startIgnoring(true, func() (err error) {
		pid, info, release, err = forkBwrap(argv, rs, inherited, infoFD)
		return err
	})
	if err != nil {
		return err
	}
	// Signals are caught from here on, after the fork (catching SIGINT would reset an ignored
	// one to the default in bwrap), and only then may bwrap start the command (--block-fd):
	// the command cannot have set its traps before signals are passed on to it. One that comes
	// before ends this process, and bwrap with it (Pdeathsig), as it would have ended a shell
	// that had not yet set its traps. A signal ignored at start stays ignored (Caught).
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, Caught()...)
	release()
	// This process only waits now: one processor is enough, and fewer runtime threads leave
	// the cores to bwrap and bash.
	runtime.GOMAXPROCS(1)
	os.Exit(waitForwarding(pid, info, sigs))
	return nil
}

// inheritedFDs lists, sorted, the descriptors above stderr that this process was started with
// and that an exec keeps (no close-on-exec): a make jobserver's, a harness's. bash passes them
// on to its commands, so the boundary does too, at the same numbers. Every descriptor of
// spear-shell's own is close-on-exec.
func inheritedFDs() []int {
	dir, err := syscall.Open("/proc/self/fd", syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer syscall.Close(dir)
	var out []int
	buf := make([]byte, 4096)
	for {
		n, err := syscall.ReadDirent(dir, buf)
		if err != nil || n <= 0 {
			break
		}
		_, _, names := syscall.ParseDirent(buf[:n], -1, nil)
		for _, name := range names {
			fd, err := strconv.Atoi(name)
			if err != nil || fd <= 2 || fd == dir {
				continue
			}
			flags, _, errno := syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
			if errno == 0 && flags&syscall.FD_CLOEXEC == 0 {
				out = append(out, fd)
			}
		}
	}
	slices.Sort(out)
	return out
}

// forkBwrap starts bwrap with argv: descriptors 0-2 and inherited stay where they are, bwrap's
// info pipe goes to infoFD (above them all), and its reading end is returned; its --block-fd
// goes to infoFD+1, and the returned release lets it start the command. Nothing else of
// ours is open in bwrap. A bare fork and exec: os/exec would probe pidfd support with a
// process of its own first. Should this process die, bwrap dies too. (Pdeathsig follows the
// forking thread, but the runtime ends a thread only under a goroutine that locked it and
// exited, which no goroutine here does; locking one would cost a thread of its own.)
func forkBwrap(argv []string, rs *RealShell, inherited []int, infoFD int) (int, *os.File, func(), error) {
	infoR, infoW, err := pipe()
	if err != nil {
		return 0, nil, nil, fmt.Errorf("boundary: %w", err)
	}
	blockR, blockW, err := pipe()
	if err != nil {
		syscall.Close(infoR)
		syscall.Close(infoW)
		return 0, nil, nil, fmt.Errorf("boundary: %w", err)
	}
	files := make([]uintptr, infoFD+2)
	for i := range files {
		files[i] = ^uintptr(0) // closed in the child
	}
	files[0], files[1], files[2] = 0, 1, 2
	for _, fd := range inherited {
		files[fd] = uintptr(fd)
	}
	files[infoFD], files[infoFD+1] = uintptr(infoW), uintptr(blockR)
	pid, err := syscall.ForkExec(argv[0], argv, &syscall.ProcAttr{
		Dir: rs.Dir, Env: rs.Env, Files: files,
		Sys: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	})
	syscall.Close(infoW)
	syscall.Close(blockR)
	if err != nil {
		syscall.Close(infoR)
		syscall.Close(blockW)
		return 0, nil, nil, fmt.Errorf("boundary: %s: %w", argv[0], err)
	}
	release := func() {
		_, _ = syscall.Write(blockW, []byte{0}) // a bwrap already gone is reaped by the caller
		syscall.Close(blockW)
	}
	return pid, os.NewFile(uintptr(infoR), "bwrap-info"), release, nil
}

// reap waits for the child pid to end and returns its status.
func reap(pid int) syscall.WaitStatus {
	var ws syscall.WaitStatus
	for {
		if _, err := syscall.Wait4(pid, &ws, 0, nil); err != syscall.EINTR {
			return ws
		}
	}
}

func pipe() (r, w int, err error) {
	var p [2]int
	err = syscall.Pipe2(p[:], syscall.O_CLOEXEC)
	return p[0], p[1], err
}

// waitForwarding waits for the bwrap child pid, passing signals on to the sandboxed command's
// group, and returns its exit status as a shell reports it.
func waitForwarding(pid int, info *os.File, sigs chan os.Signal) int {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		child := 0
		for {
			select {
			case <-stop:
				return
			case sig := <-sigs:
				if child == 0 {
					child = readChildPid(info)
				}
				if child > 0 {
					// --new-session made the sandboxed command the leader of its own group.
					_ = syscall.Kill(-child, sig.(syscall.Signal))
				} else {
					_ = syscall.Kill(pid, sig.(syscall.Signal))
				}
			}
		}
	}()
	ws := reap(pid)
	close(stop)
	<-done
	info.Close()
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// readChildPid reads bwrap's {"child-pid": N} from its info pipe.
func readChildPid(info *os.File) int {
	var v struct {
		ChildPid int `json:"child-pid"`
	}
	if err := json.NewDecoder(info).Decode(&v); err != nil {
		return 0
	}
	return v.ChildPid
}

// SetNonDumpable keeps same-user processes from reading this process's memory, environ and file
// descriptors through /proc (SPEC 9). Children that exec get their own setting back.
func SetNonDumpable() {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0)
}
