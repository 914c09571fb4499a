package realshell

// The isolation boundary (SPEC 9): the real shell runs inside bubblewrap with what
// spear-shell guards masked. This file computes the masks and the bwrap argv; it starts
// nothing itself (forward.go and session.go do). docs/isolation.md explains the decisions.

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// BoundaryMarker is the variable Args sets inside the boundary (value "bwrap", with bwrap's
// --setenv, so an unconfined shell never has it). Its name avoids "SPEAR" because no SPEAR_*
// variable may exist inside. It is a convenience for InsideBoundary; the masks are what protect.
const BoundaryMarker = "AGENT_SHELL_BOUNDARY"

// DefaultEmptyFD is the descriptor Args names for file masks when Boundary.EmptyFD is 0:
// the first of exec.Cmd.ExtraFiles.
const DefaultEmptyFD = 3

// manifestLimit bounds the cheap manifest read (policy refuses larger manifests anyway).
const manifestLimit = 1 << 20

// Masks are the paths the real shell must not see. Dirs and Files exist and are absolute,
// clean and free of symlinks; none lies inside a masked directory and "/" is never one.
//
// A mask that does not exist yet cannot be left out: something created there later (a
// state_dir, the audit file, a capabilities file the shell plants) would be visible inside,
// and bwrap would create a missing mount point on the host itself. So CheapMasks creates it
// beforehand, outside the boundary: a directory 0700, a file empty 0600, missing parents
// 0700. AbsentDirs and AbsentFiles list the ones this user may not create (EACCES, EROFS):
// the shell, running as the same user, cannot create them either. Args ignores them.
type Masks struct {
	Dirs, Files             []string
	AbsentDirs, AbsentFiles []string
	// Empty is an empty read-only regular file of ours in the state parent (which is itself
	// masked), bound read-only over every masked file. "" when there are no file masks or
	// it could not be made; Args then uses Boundary.EmptyFD.
	Empty string
}

// EmptyName is the name of Masks.Empty in the state parent.
const EmptyName = "empty"

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

// StateParent is the parent of the default state directories: $XDG_RUNTIME_DIR/spear, else
// the temp dir's spear ($TMPDIR, else /tmp, as os.TempDir). The stub, the empty file and the
// probe cache live there too; the boundary masks all of it.
func StateParent(getenv func(string) string) string {
	if r := getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(r) {
		return filepath.Join(r, "spear")
	}
	t := getenv("TMPDIR")
	if t == "" {
		t = "/tmp"
	}
	return filepath.Join(t, "spear")
}

// StubName is the stub's file name in the stub directory (StateParent/bin).
const StubName = Name

// CheapMasks computes the masks from cheap sources only (SPEC 9): SPEAR_HOME,
// SPEAR_CAPABILITIES_FILE, the manifest file (manifestPath, else SPEAR_TURN_MANIFEST),
// SPEAR_AUDIT_FILE, the whole state parent, and the manifest's "audit" and "state_dir" read
// with a plain JSON decode (errors ignored; relative values ignored, as policy refuses them).
// No other file is read. Relative environment values are taken against the working directory.
// Absent masks and the empty file are created (see Masks): a write happens only when one
// is missing, so the usual cost is a few stat calls.
func CheapMasks(getenv func(string) string, manifestPath string) Masks {
	dirs, files := maskPaths(getenv, manifestPath)
	m := classify(dirs, files)
	if len(m.AbsentDirs)+len(m.AbsentFiles) > 0 {
		m = create(m)
	}
	if len(m.Files) > 0 {
		m.Empty = ensureEmpty(filepath.Join(StateParent(getenv), EmptyName))
	}
	return m
}

// maskPaths lists what CheapMasks masks, before resolution.
func maskPaths(getenv func(string) string, manifestPath string) (dirs, files []string) {
	if manifestPath == "" {
		manifestPath = getenv("SPEAR_TURN_MANIFEST")
	}
	add := func(list *[]string, p string) {
		if p == "" {
			return
		}
		if abs, err := filepath.Abs(p); err == nil {
			*list = append(*list, abs)
		}
	}
	add(&dirs, SpearHome(getenv))
	add(&dirs, StateParent(getenv))
	add(&files, getenv("SPEAR_CAPABILITIES_FILE"))
	add(&files, getenv("SPEAR_AUDIT_FILE"))
	if manifestPath == "" {
		return dirs, files
	}
	add(&files, manifestPath)
	var m struct {
		Audit    string `json:"audit"`
		StateDir string `json:"state_dir"`
	}
	if f, err := os.Open(manifestPath); err == nil {
		_ = json.NewDecoder(io.LimitReader(f, manifestLimit)).Decode(&m)
		f.Close()
	}
	if filepath.IsAbs(m.Audit) {
		files = append(files, filepath.Clean(m.Audit))
	}
	if filepath.IsAbs(m.StateDir) {
		dirs = append(dirs, filepath.Clean(m.StateDir))
	}
	return dirs, files
}

// classify resolves each wanted path, sorts it by what it really is (a directory, anything
// else, or absent with its intended kind), and drops duplicates and paths inside a masked
// directory.
func classify(wantDirs, wantFiles []string) Masks {
	var m Masks
	see := func(p string, dir bool) {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			// What we cannot reach (EACCES, ENOTDIR) the shell, same user, cannot reach
			// either; only a path that does not exist is remembered, to be created.
			if !errors.Is(err, fs.ErrNotExist) {
				return
			}
			if dir {
				m.AbsentDirs = append(m.AbsentDirs, p)
			} else {
				m.AbsentFiles = append(m.AbsentFiles, p)
			}
			return
		}
		fi, err := os.Stat(real)
		switch {
		case err != nil:
			return
		case fi.IsDir():
			m.Dirs = append(m.Dirs, real)
		default:
			m.Files = append(m.Files, real)
		}
	}
	for _, p := range wantDirs {
		see(p, true)
	}
	for _, p := range wantFiles {
		see(p, false)
	}
	covering := append(slices.Clone(m.Dirs), m.AbsentDirs...)
	m.Dirs = prune(m.Dirs, covering)
	m.AbsentDirs = prune(m.AbsentDirs, covering)
	m.Files = prune(m.Files, covering)
	m.AbsentFiles = prune(m.AbsentFiles, covering)
	return m
}

// prune sorts and deduplicates list and drops "/" and every path strictly inside one of dirs.
func prune(list, dirs []string) []string {
	slices.Sort(list)
	list = slices.Compact(list)
	out := list[:0]
	for _, p := range list {
		if p == "/" {
			continue // masking the root would hide everything; policy never puts state there
		}
		inside := false
		for _, d := range dirs {
			if d != "/" && strings.HasPrefix(p, d+"/") {
				inside = true
				break
			}
		}
		if !inside {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// create makes the absent masks (see Masks) and resolves again.
func create(m Masks) Masks {
	for _, d := range m.AbsentDirs {
		_ = os.MkdirAll(d, 0o700)
	}
	for _, f := range m.AbsentFiles {
		_ = createEmpty(f)
	}
	return classify(slices.Concat(m.Dirs, m.AbsentDirs), slices.Concat(m.Files, m.AbsentFiles))
}

func createEmpty(f string) error {
	if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
		return err
	}
	fd, err := os.OpenFile(f, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil // created meanwhile, by spear-shell itself
	}
	if err != nil {
		return err
	}
	return fd.Close()
}

// ensureEmpty returns path after making sure it is an empty regular file of ours with one
// link and no write permission; a file that is not (an unconfined shell may have replaced it,
// say by a hard link to a secret) is replaced. It returns "" when that fails.
func ensureEmpty(path string) string {
	if emptyOK(path) {
		return path
	}
	tmp := path + ".tmp" + strconv.Itoa(os.Getpid())
	_ = os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o444)
	if err != nil {
		return ""
	}
	f.Close()
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return ""
	}
	if !emptyOK(path) {
		return ""
	}
	return path
}

func emptyOK(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != 0 || fi.Mode().Perm()&0o222 != 0 {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink == 1 && int(st.Uid) == os.Geteuid()
}

// Boundary describes one bwrap invocation.
type Boundary struct {
	Bwrap      string // absolute path of bwrap
	Masks      Masks
	StubDir    string // the directory holding the stub inside (the caller puts it first on PATH)
	StubTarget string // absolute path of the spear-shell binary the stub symlink points to
	Dir        string // working directory inside (unchanged from outside); "" keeps bwrap's
	// EmptyFD is a descriptor, open in bwrap, that reads as empty (/dev/null): bwrap copies it
	// into the read-only files that mask Masks.Files. 0 means DefaultEmptyFD, that is
	// exec.Cmd.ExtraFiles = []*os.File{devNull}. A missing descriptor makes bwrap fail, so a
	// caller that forgets it fails closed.
	EmptyFD int
}

// baseOptions are the options every boundary has, in order, after the bwrap path.
var baseOptions = []string{
	"--cap-drop", "ALL", // as root, a kept CAP_SYS_ADMIN could simply unmount the masks
	"--bind", "/", "/",
	"--dev-bind", "/dev", "/dev",
	"--proc", "/proc",
	"--unshare-pid",
	"--new-session",
	"--die-with-parent",
	"--setenv", BoundaryMarker, "bwrap",
}

// Args returns the full argv: [bwrap, options..., "--", argv...]. After the base options
// come: every ancestor of a mask bound onto itself (a mount point cannot be renamed, so the
// shell cannot move a parent away and plant a config or manifest at the guarded path), a
// read-only empty tmpfs on every masked directory, the stub created inside the tmpfs holding
// StubDir (StubDir gets a tmpfs of its own when no masked directory holds it; it must then
// exist on the host), a read-only empty regular file (Masks.Empty, else a copy of EmptyFD) on
// every masked file, and --chdir Dir. Absent masks are ignored (CheapMasks creates what it can).
// Nothing is created on the host: every mount point exists.
func (b *Boundary) Args(argv []string) []string {
	a := append([]string{b.Bwrap}, b.Options()...)
	a = append(a, "--")
	return append(a, argv...)
}

// Options are Args without the bwrap path and without "--" and the command.
func (b *Boundary) Options() []string {
	m := b.Masks
	a := make([]string, 0, len(baseOptions)+8*(len(m.Dirs)+len(m.Files))+8)
	a = append(a, baseOptions...)
	for _, p := range pins(m) {
		a = append(a, "--bind", p, p)
	}
	tmpfs := slices.Clone(m.Dirs)
	stub := b.StubDir != "" && b.StubTarget != ""
	if stub && !slices.ContainsFunc(m.Dirs, func(d string) bool { return within(b.StubDir, d) }) {
		tmpfs = append(tmpfs, b.StubDir)
	}
	for _, d := range tmpfs {
		a = append(a, "--tmpfs", d)
	}
	if stub {
		a = append(a, "--dir", b.StubDir, "--symlink", b.StubTarget, filepath.Join(b.StubDir, StubName))
	}
	for _, d := range tmpfs {
		a = append(a, "--remount-ro", d)
	}
	fd := strconv.Itoa(b.emptyFD())
	for _, f := range m.Files {
		if m.Empty != "" {
			a = append(a, "--ro-bind", m.Empty, f)
		} else {
			a = append(a, "--perms", "0444", "--ro-bind-data", fd, f)
		}
	}
	if b.Dir != "" {
		a = append(a, "--chdir", b.Dir)
	}
	return a
}

func (b *Boundary) emptyFD() int {
	if b.EmptyFD > 0 {
		return b.EmptyFD
	}
	return DefaultEmptyFD
}

// within reports whether p is d or inside d.
func within(p, d string) bool {
	return p == d || d == "/" || strings.HasPrefix(p, d+"/")
}

// pins lists, sorted (outer first), every ancestor of an existing mask except "/".
func pins(m Masks) []string {
	var out []string
	for _, p := range slices.Concat(m.Dirs, m.Files) {
		for d := filepath.Dir(p); d != "/" && d != "."; d = filepath.Dir(d) {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ShellEnv is the environment for the real shell (and bwrap around it): environ without any
// SPEAR_* variable or inherited BoundaryMarker, and stubDir first on PATH (once). Later
// duplicates of a name win, as in exec.Cmd.
func ShellEnv(environ []string, stubDir string) []string {
	out := make([]string, 0, len(environ)+2)
	path, havePath := "", false
	seen := make(map[string]int, len(environ))
	for _, kv := range environ {
		name, val, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "SPEAR_"), name == BoundaryMarker:
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
	}
	return append(out, "PATH="+path)
}

// InsideBoundary reports whether this process runs inside a boundary: the marker is set,
// or PID 1 of this PID namespace is bwrap. A spear-shell inside offers nothing.
func InsideBoundary(getenv func(string) string) bool {
	if getenv(BoundaryMarker) != "" {
		return true
	}
	comm, err := os.ReadFile("/proc/1/comm")
	return err == nil && strings.TrimSpace(string(comm)) == "bwrap"
}
