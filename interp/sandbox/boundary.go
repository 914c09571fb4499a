package sandbox

// The isolation boundary (SPEC 9): the real shell runs inside bubblewrap with a read-only
// root, the writable roots writable and what spear-shell guards masked. This file makes the
// bwrap argv and the shell's environment; plan.go decides what goes in them, and package
// realshell starts it (forward.go, session.go). docs/isolation.md explains the decisions.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/spear-shell/spear-shell/interp/invocation"
	"github.com/spear-shell/spear-shell/policy/paths"
)

// BoundaryMarker is the variable Args sets inside the boundary (value "bwrap", with bwrap's
// --setenv, so an unconfined shell never has it). Its name avoids "SPEAR" because no SPEAR_*
// variable may exist inside. It is a convenience for InsideBoundary; the masks are what protect.
const BoundaryMarker = "AGENT_SHELL_BOUNDARY"

// SpearHome is SPEAR_HOME, else $XDG_CONFIG_HOME/spear, else $HOME/.config/spear ("" when
// none of them is set).
func SpearHome(getenv func(string) string) string {
	if h := getenv("SPEAR_HOME"); h != "" {
		return h
	}
	if x := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "spear")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "spear")
	}
	return ""
}

// StubName is the stub's file name in the stub directory (StateParent/bin).
const StubName = invocation.Name

// Boundary describes one bwrap invocation (SPEC 9): the root read-only, the writable roots
// writable, the masks hidden, a minimal /dev, a PID namespace, a new session.
type Boundary struct {
	Bwrap string // absolute path of bwrap
	// Masks are directories hidden under an empty read-only tmpfs: absolute, clean, resolved,
	// existing, none inside another. Those under /tmp or /var/tmp are hidden by Tmp already.
	Masks []string
	// Writable are the directories writable at their own paths (the workspace, the manifest's
	// writable list): absolute, clean, resolved, existing.
	Writable []string
	// Tmp is the turn's temporary directory on the host, bound at /tmp and /var/tmp ("": none).
	Tmp string
	// Files are files an envelope writes for its terminal (BindFiles), bound read-write at
	// their own paths over the turn's /tmp.
	Files      []string
	StubDir    string // the directory holding the stub inside (the caller puts it first on PATH)
	StubTarget string // absolute path of the spear-shell binary the stub symlink points to
	Dir        string // working directory inside (unchanged from outside); "" keeps bwrap's
}

// baseOptions are the options every boundary has, in order, after the bwrap path.
var baseOptions = []string{
	"--cap-drop", "ALL", // as root, a kept CAP_SYS_ADMIN could simply unmount the masks
	"--ro-bind", "/", "/",
	"--dev", "/dev", // null zero full random urandom tty, a private pts and ptmx, shm
	"--proc", "/proc",
	"--unshare-pid",
	"--new-session",
	"--die-with-parent",
	"--setenv", BoundaryMarker, "bwrap",
}

// tmpDirs are where the turn's temporary directory is bound: the host's are never seen.
var tmpDirs = []string{"/tmp", "/var/tmp"}

// Args returns the full argv: [bwrap, options..., "--", argv...].
func (b *Boundary) Args(argv []string) []string {
	a := append([]string{b.Bwrap}, b.Options()...)
	a = append(a, "--")
	return append(a, argv...)
}

// Options are Args without the bwrap path and without "--" and the command. In order: the base
// options; an empty tmpfs on every mask; the turn's /tmp and /var/tmp and a private /dev/shm;
// the writable roots (a mount point inside a mask or /tmp is made in that tmpfs or the turn's
// directory, never on the host's read-only tree); the stub, inside the mask holding StubDir or
// on a tmpfs of its own; every tmpfs remounted read-only; --chdir. Nothing is created on the
// host's tree outside the turn's temporary directory.
func (b *Boundary) Options() []string {
	a := make([]string, 0, len(baseOptions)+4*len(b.Masks)+3*len(b.Writable)+24)
	a = append(a, baseOptions...)
	var ro []string
	for _, d := range b.Masks {
		if !underTmp(d) || b.Tmp == "" {
			a = append(a, "--tmpfs", d)
			ro = append(ro, d)
		}
	}
	if b.Tmp != "" {
		for _, d := range tmpDirs {
			a = append(a, "--bind", b.Tmp, d)
		}
	}
	for _, f := range b.Files {
		a = append(a, "--bind", f, f)
	}
	a = append(a, "--perms", "1777", "--tmpfs", "/dev/shm")
	for _, w := range b.Writable {
		a = append(a, "--bind", w, w)
	}
	if b.StubDir != "" && b.StubTarget != "" {
		if !slices.ContainsFunc(ro, func(d string) bool { return paths.Within(b.StubDir, d) }) {
			a = append(a, "--tmpfs", b.StubDir)
			ro = append(ro, b.StubDir)
		}
		a = append(a, "--dir", b.StubDir, "--symlink", b.StubTarget, filepath.Join(b.StubDir, StubName))
	}
	for _, d := range ro {
		a = append(a, "--remount-ro", d)
	}
	if b.Dir != "" {
		a = append(a, "--chdir", b.Dir)
	}
	return a
}

// underTmp tells whether p lies in /tmp or /var/tmp, which the turn's own directory replaces.
func underTmp(p string) bool {
	return slices.ContainsFunc(tmpDirs, func(d string) bool { return paths.Within(p, d) })
}

// serviceVars name the user's services outside the boundary (SPEC 9); inside they are removed.
var serviceVars = []string{"DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "TMUX", "TMUX_PANE"}

// ShellEnv is the environment for the real shell (and bwrap around it): environ without any
// SPEAR_* variable or inherited BoundaryMarker (and, confined, without serviceVars), stubDir
// first on PATH (once), and the not-found handler that finds the stub whatever PATH becomes
// (StubFunc). Later duplicates of a name win, as in exec.Cmd.
func ShellEnv(environ []string, stubDir string, confined bool) []string {
	out := make([]string, 0, len(environ)+2)
	path, havePath := "", false
	seen := make(map[string]int, len(environ))
	for _, kv := range environ {
		name, val, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "SPEAR_"), name == BoundaryMarker, name == stubFuncVar:
			continue
		case confined && slices.Contains(serviceVars, name):
			continue
		case name == "PATH":
			path, havePath = val, true
			continue
		}
		if i, ok := seen[name]; ok {
			out[i] = kv
			continue
		}
		seen[name] = len(out)
		out = append(out, kv)
	}
	if !havePath {
		path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" // bash's default, without "."
	}
	if stubDir != "" {
		entries := []string{stubDir}
		for _, e := range filepath.SplitList(path) {
			if e != stubDir {
				entries = append(entries, e)
			}
		}
		path = strings.Join(entries, string(filepath.ListSeparator))
		out = append(out, stubFuncVar+"="+StubFunc(filepath.Join(stubDir, StubName)))
	}
	return append(out, "PATH="+path)
}

// InsideBoundary reports whether this process runs inside a boundary: the marker is set,
// or PID 1 of this PID namespace is bwrap. A spear-shell inside offers nothing.
func InsideBoundary(getenv func(string) string) bool {
	if getenv(BoundaryMarker) != "" {
		return true
	}
	return pid1IsBwrap()
}

// pid1IsBwrap reads /proc/1/comm with bare system calls: every -c command asks (SPEC 9), and
// os.Open would register the file with the runtime's poller, which its first use starts
// (epoll_create1, eventfd2, epoll_ctl) for nothing but one read.
func pid1IsBwrap() bool {
	fd, err := syscall.Open("/proc/1/comm", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	var buf [32]byte // a comm is at most 16 bytes with its newline
	n, err := syscall.Read(fd, buf[:])
	syscall.Close(fd)
	return err == nil && n > 0 && strings.TrimSpace(string(buf[:n])) == "bwrap"
}

// RemoveTmp removes the turn's temporary directory, at the turn's end (--end-turn). What the
// turn's code left there cannot lead it astray: the removal never follows a symbolic link.
func (b *Boundary) RemoveTmp() error {
	if b.Tmp == "" {
		return nil
	}
	if err := os.RemoveAll(b.Tmp); err != nil {
		return fmt.Errorf("boundary: the turn's temporary directory: %w", err)
	}
	return nil
}
