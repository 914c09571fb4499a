package realshell

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
)

// RealShell is how forwarded commands reach the real shell: which program, in which
// environment, inside which boundary.
type RealShell struct {
	Path     string    // the real shell (SPEAR_REAL_SHELL, default /bin/bash)
	Env      []string  // its environment: no SPEAR_*, the stub first on PATH
	Dir      string    // working directory ("": this process's)
	Boundary *Boundary // nil: unconfined
	Note     string    // how it is confined, for --check, --context and turn_started
	masks    func() Masks
}

// boundary returns the boundary with its masks computed, once.
func (rs *RealShell) boundary() *Boundary {
	if rs.masks != nil {
		rs.Boundary.Masks = rs.masks()
		rs.masks = nil
		if dir, err := os.Getwd(); err == nil {
			rs.Boundary.Dir = dir // the same working directory inside
		}
	}
	return rs.Boundary
}

// IsolationRequiredFix is what a user must do when SPEAR_ISOLATION=bwrap cannot be honoured.
const IsolationRequiredFix = "install bubblewrap (Debian package bubblewrap) and make sure unprivileged user namespaces are allowed, or set SPEAR_ISOLATION=none"

// NewRealShell decides how the real shell runs, from cheap sources only (SPEC 9 and 10).
// self is the spear-shell binary the stub points to; manifest is --manifest or
// SPEAR_TURN_MANIFEST.
func NewRealShell(getenv func(string) string, environ []string, self, manifest string) (*RealShell, error) {
	rs := &RealShell{Path: getenv("SPEAR_REAL_SHELL")}
	if rs.Path == "" {
		rs.Path = "/bin/bash"
	}
	parent := StateParent(getenv)
	stubDir, err := EnsureStub(parent, self)
	if err != nil {
		return nil, err
	}
	// Unconfined, the marker is all that tells a spear-shell started by the agent that it runs
	// inside one of ours (so it offers nothing); the boundary sets it itself.
	rs.Env = ShellEnv(environ, stubDir)
	mode := getenv("SPEAR_ISOLATION")
	switch mode {
	case "none":
		rs.Note = "none (SPEAR_ISOLATION=none)"
		rs.Env = append(rs.Env, BoundaryMarker+"=none")
		return rs, nil
	case "", "bwrap":
	default:
		return nil, fmt.Errorf("SPEAR_ISOLATION=%q: use bwrap or none", mode)
	}
	bwrap, ok, reason := Probe(getenv, parent)
	if !ok {
		if mode == "bwrap" {
			return nil, fmt.Errorf("SPEAR_ISOLATION=bwrap: the boundary cannot be made here (%s): %s", reason, IsolationRequiredFix)
		}
		rs.Note = "unconfined: " + reason
		rs.Env = append(rs.Env, BoundaryMarker+"=none")
		return rs, nil
	}
	rs.Boundary = &Boundary{
		Bwrap:      bwrap,
		StubDir:    stubDir,
		StubTarget: self,
	}
	// The masks are computed when a shell is about to start: an input of answers alone
	// starts none and need not read the manifest for them.
	rs.masks = func() Masks { return CheapMasks(getenv, manifest) }
	rs.Note = "bwrap"
	return rs, nil
}

// Argv wraps a real-shell command line in the boundary when there is one.
func (rs *RealShell) Argv(argv []string) []string {
	if rs.Boundary == nil {
		return argv
	}
	return rs.boundary().Args(argv)
}

// Isolated tells whether the real shell runs inside the boundary.
func (rs *RealShell) Isolated() bool { return rs.Boundary != nil }

// Executable is the absolute path of the running binary. On Linux it comes from /proc/self/exe,
// which the kernel keeps resolved through symlinks.
func Executable() (string, error) {
	return os.Executable()
}

// RefuseStub is the answer of the binary run under the name spear-capability: inside the real
// shell the name was produced at run time (eval, a script, xargs...), which carries no authority.
func RefuseStub(stderr *os.File) int {
	fmt.Fprintln(stderr, "spear-capability: not-recognised: spear-capability is answered only when typed as a command line of its own; it cannot be run from a script, eval, a variable or another program")
	return 126
}

// IsStub tells whether argv0 names the stub.
func IsStub(argv0 string) bool {
	return filepath.Base(argv0) == StubName
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

// Exec runs the real shell with args as the whole of this command: unconfined it replaces this
// process (so the shell is exactly what bash would have been); inside the boundary it runs bwrap,
// passes SIGINT, SIGTERM and SIGHUP on to the command inside, and exits with its status. It
// returns only on error.
func (rs *RealShell) Exec(argv0 string, args []string) error {
	if rs.Boundary == nil {
		argv := append([]string{argv0}, args...)
		err := syscall.Exec(rs.Path, argv, rs.Env)
		if cerr := rs.checkShell(); cerr != nil {
			return cerr
		}
		return fmt.Errorf("real shell: %w", err)
	}
	if err := rs.checkShell(); err != nil {
		return err
	}
	pid, infoR, err := rs.startBwrap(args)
	if err != nil {
		return err
	}
	// This process only waits now: one processor is enough, and fewer runtime threads leave
	// the cores to bwrap and bash. Signals are caught from here on, while bwrap loads; one that
	// comes before ends this process, and bwrap with it (Pdeathsig), as it would have ended a
	// shell that had not yet set its traps.
	runtime.GOMAXPROCS(1)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	os.Exit(waitForwarding(pid, infoR, sigs))
	return nil
}

// argsAtomic is the most bwrap's options may take to be written at once: a pipe write of at
// most PIPE_BUF bytes is never split, so bwrap reads all of them or, if this process died
// first, none (and then, with no root bound, finds no shell to run).
const argsAtomic = 4096

// startBwrap starts bwrap running the real shell with args, its options on fd 3 (--args):
// bwrap is started first, before the masks are computed, so that it loads meanwhile. Its info
// (the sandboxed command's pid) comes on the returned file.
func (rs *RealShell) startBwrap(args []string) (int, *os.File, error) {
	b := rs.Boundary
	optR, optW, err := pipe()
	if err != nil {
		return 0, nil, fmt.Errorf("boundary: %w", err)
	}
	pid, info, err := forkBwrap(append([]string{b.Bwrap, "--args", "3", "--info-fd", "4", "--", rs.Path}, args...), rs, optR)
	syscall.Close(optR)
	if err != nil {
		syscall.Close(optW)
		return 0, nil, err
	}
	b = rs.boundary()
	b.EmptyFD = bwrapNullFD
	opts := nulJoin(b.Options())
	if len(opts) > argsAtomic {
		// Too long to pass whole in one write: this bwrap, still waiting for them, is killed,
		// and one is started with its options on the command line.
		syscall.Close(optW)
		info.Close()
		kill(pid)
		full := b.Args(append([]string{rs.Path}, args...))
		return forkBwrap(append([]string{full[0], "--info-fd", "4"}, full[1:]...), rs, -1)
	}
	_, werr := syscall.Write(optW, opts)
	syscall.Close(optW)
	if werr != nil {
		info.Close()
		kill(pid)
		return 0, nil, fmt.Errorf("boundary: passing the options to bwrap: %w", werr)
	}
	return pid, info, nil
}

// bwrapNullFD is where forkBwrap leaves /dev/null open in bwrap, for file masks that need a copy.
const bwrapNullFD = 5

// forkBwrap starts bwrap with argv: fd 3 is opts (/dev/null when -1), fd 4 bwrap's info pipe,
// whose reading end it returns, fd 5 /dev/null. A bare fork and exec: os/exec would probe pidfd
// support with a process of its own first. Should this process die before bwrap has its
// options, bwrap dies too. (Pdeathsig follows the forking thread, but the runtime ends a thread
// only under a goroutine that locked it and exited, which no goroutine here does; locking one
// would cost a thread of its own.)
func forkBwrap(argv []string, rs *RealShell, opts int) (int, *os.File, error) {
	infoR, infoW, err := pipe()
	if err != nil {
		return 0, nil, fmt.Errorf("boundary: %w", err)
	}
	null, err := syscall.Open(os.DevNull, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		closeFDs(infoR, infoW)
		return 0, nil, fmt.Errorf("boundary: open %s: %w", os.DevNull, err)
	}
	if opts < 0 {
		opts = null
	}
	pid, err := syscall.ForkExec(argv[0], argv, &syscall.ProcAttr{
		Dir: rs.Dir, Env: rs.Env, Files: []uintptr{0, 1, 2, uintptr(opts), uintptr(infoW), uintptr(null)},
		Sys: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	})
	closeFDs(infoW, null)
	if err != nil {
		syscall.Close(infoR)
		return 0, nil, fmt.Errorf("boundary: %s: %w", argv[0], err)
	}
	return pid, os.NewFile(uintptr(infoR), "bwrap-info"), nil
}

// kill ends a bwrap that never got its options, and reaps it.
func kill(pid int) {
	_ = syscall.Kill(pid, syscall.SIGKILL)
	reap(pid)
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

func closeFDs(fds ...int) {
	for _, fd := range fds {
		syscall.Close(fd)
	}
}

// nulJoin is bwrap's --args format: each argument followed by a NUL byte.
func nulJoin(args []string) []byte {
	n := 0
	for _, a := range args {
		n += len(a) + 1
	}
	out := make([]byte, 0, n)
	for _, a := range args {
		out = append(append(out, a...), 0)
	}
	return out
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
