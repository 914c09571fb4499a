package paths

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// StateParent is where spear-shell keeps what is its own (SPEC 9): $XDG_RUNTIME_DIR/spear,
// else $HOME/.local/state/spear; "" when neither is set to an absolute path. It holds the
// probe cache, the stub, the turns' temporary directories and their state_dir. Never a shared
// directory such as /tmp, where another user could create it first.
func StateParent(getenv func(string) string) string {
	if r := getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(r) {
		return filepath.Join(r, "spear")
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "state", "spear")
	}
	return ""
}

// StateError is a state parent spear-shell cannot use; the command exits 126 with it.
type StateError struct {
	Path, Why, Fix string
}

func (e *StateError) Error() string {
	return fmt.Sprintf("state: %s: %s; %s", e.Path, e.Why, e.Fix)
}

// EnsureStateParent returns the state parent after making sure it is a directory this user
// owns with mode 0700: it is created so (missing ancestors 0700), and the last component is
// never followed if it is a symlink. Anything else is a *StateError.
func EnsureStateParent(getenv func(string) string) (string, error) {
	p := StateParent(getenv)
	if p == "" {
		return "", &StateError{Path: "$XDG_RUNTIME_DIR/spear", Why: "neither XDG_RUNTIME_DIR nor HOME is set to an absolute path",
			Fix: "set XDG_RUNTIME_DIR (or HOME) for spear-shell"}
	}
	if err := PrivateDir(p); err != nil {
		return "", err
	}
	return p, nil
}

// PrivateDir creates dir 0700 if missing (its ancestors too) and checks it without following
// a symlink at its end: a directory owned by this user, mode exactly 0700.
func PrivateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(filepath.Dir(dir), 0o700); err == nil {
			if err = os.Mkdir(dir, 0o700); errors.Is(err, fs.ErrExist) {
				err = nil // made meanwhile by another spear-shell; checked below
			}
		}
		if err != nil {
			return &StateError{Path: dir, Why: fmt.Sprintf("cannot be created: %v", UnwrapPath(err)),
				Fix: "create it as a directory of this user with mode 0700, or set XDG_RUNTIME_DIR to one"}
		}
		fi, err = os.Lstat(dir)
	}
	if err != nil {
		return &StateError{Path: dir, Why: UnwrapPath(err).Error(), Fix: "set XDG_RUNTIME_DIR to a private directory of this user"}
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return &StateError{Path: dir, Why: "is a symlink (never followed)", Fix: "remove it; spear-shell creates the directory itself"}
	case !fi.IsDir():
		return &StateError{Path: dir, Why: "is not a directory", Fix: "remove it; spear-shell creates the directory itself"}
	case st == nil || int(st.Uid) != os.Geteuid():
		return &StateError{Path: dir, Why: fmt.Sprintf("belongs to uid %d, not to this user (uid %d)", ownerOf(st), os.Geteuid()),
			Fix: "set XDG_RUNTIME_DIR to a private directory of this user"}
	case fi.Mode().Perm() != 0o700:
		return &StateError{Path: dir, Why: fmt.Sprintf("has mode %04o, not 0700", fi.Mode().Perm()), Fix: "run: chmod 700 " + dir}
	}
	return nil
}

func ownerOf(st *syscall.Stat_t) int64 {
	if st == nil {
		return -1
	}
	return int64(st.Uid)
}

// UnwrapPath drops an *fs.PathError's own path and operation: the message names the path once.
func UnwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
