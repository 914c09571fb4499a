package sandbox

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/spear-shell/spear-shell/policy/paths"
)

// tmpdirInTurn makes, in the turn's temporary directory, the directory TMPDIR names when it
// lies in the host's /tmp or /var/tmp outside every writable root. Inside the boundary those
// two are the turn's own directory, so a TMPDIR the terminal set (a directory of its own under
// /tmp) would not exist there and mktemp, sort and compilers would fail; the command gets an
// empty one of the turn's instead, as it would find one outside. Made one component at a time,
// never through a link the turn's code left in its directory. Best effort: on any doubt the
// command sees a missing TMPDIR, as before.
func tmpdirInTurn(turnTmp, tmpdir string, writable []string) {
	if turnTmp == "" || !filepath.IsAbs(tmpdir) {
		return
	}
	tmpdir = filepath.Clean(tmpdir)
	var rel string // its path in /tmp or /var/tmp: "" when it lies in neither, or is one of them
	for _, d := range tmpDirs {
		if paths.Within(tmpdir, d) {
			rel = strings.TrimPrefix(tmpdir[len(d):], "/")
			break
		}
	}
	if rel == "" || slices.ContainsFunc(writable, func(w string) bool { return paths.Within(tmpdir, w) }) {
		return
	}
	dir, err := unix.Open(turnTmp, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	for _, name := range strings.Split(rel, "/") {
		if err := unix.Mkdirat(dir, name, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
			break
		}
		next, err := unix.Openat(dir, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(dir)
		if err != nil {
			return
		}
		dir = next
	}
	unix.Close(dir)
}
