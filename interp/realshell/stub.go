package realshell

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// EnsureStub makes DIR/spear-capability a symlink to target (the spear-shell binary) in
// DIR = parent/bin and returns DIR, for the real shell's PATH. It costs a readlink when the stub
// is already in place. The directories are created 0700 and must belong to us.
func EnsureStub(parent, target string) (string, error) {
	dir := filepath.Join(parent, "bin")
	link := filepath.Join(dir, StubName)
	if got, err := os.Readlink(link); err == nil && got == target {
		return dir, nil
	}
	for _, d := range []string{parent, dir} {
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("stub: %w", err)
		}
		fi, err := os.Lstat(d)
		if err != nil {
			return "", fmt.Errorf("stub: %w", err)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !fi.IsDir() || !ok || int(st.Uid) != os.Getuid() || fi.Mode().Perm()&0o022 != 0 {
			return "", fmt.Errorf("stub: %s is not a private directory of this user", d)
		}
	}
	// Replace atomically so that a concurrent shell never finds the stub missing.
	tmp := fmt.Sprintf("%s.%d", link, os.Getpid())
	_ = os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		return "", fmt.Errorf("stub: %w", err)
	}
	if err := os.Rename(tmp, link); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("stub: %w", err)
	}
	return dir, nil
}
