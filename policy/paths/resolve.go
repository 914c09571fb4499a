package paths

import (
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Resolve is filepath.EvalSymlinks, answered with one system call for an absolute path that
// holds no symlink (the usual workspace or project root): the kernel opens it refusing any
// symlink on the way (openat2 RESOLVE_NO_SYMLINKS, O_PATH), and then the path, made clean, is
// its own resolution, since without a symlink `..` goes where the lexical `..` goes. Any other
// path, or a kernel without openat2, gets EvalSymlinks itself (the same result and errors). An
// answer resolves the turn's workspace and every project root again (SPEC 9's pinned scope):
// EvalSymlinks takes one lstat per component.
func Resolve(path string) (string, error) {
	if filepath.IsAbs(path) {
		how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS}
		fd, err := unix.Openat2(unix.AT_FDCWD, path, &how)
		if err == unix.EINTR {
			fd, err = unix.Openat2(unix.AT_FDCWD, path, &how)
		}
		if err == nil {
			unix.Close(fd)
			return filepath.Clean(path), nil
		}
	}
	return filepath.EvalSymlinks(path)
}
