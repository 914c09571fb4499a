package sandbox

// Files an envelope writes for its terminal to read (SPEC 9): Claude Code's cwd file, Gemini's
// bgpids file. The boundary's /tmp is the turn's own, so such a file in the host's /tmp would be
// written where the terminal never looks: each is made outside first and bound in at its host
// path, alone.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/spear-shell/spear-shell/policy/paths"
)

// BindFiles makes each absolute path in files (0600, ours, never through a symlink) and binds it
// in read-write at its own path for the shells started after it. A file inside a writable root
// is visible already and is left alone; one inside a mask, the state parent or the turn's
// temporary directory, or whose directory is not a real directory, is refused with an error
// naming it (the others are still bound). Unconfined (b nil), it does nothing. tidy removes the files
// it made that are still empty: the envelope stopped before writing them, and the terminal
// finds none, as it would outside.
func (b *Boundary) BindFiles(files []string) (tidy func(), err error) {
	var made []string
	tidy = func() {
		for _, f := range made {
			if fi, err := os.Lstat(f); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
				os.Remove(f)
			}
		}
	}
	if b == nil {
		return tidy, nil
	}
	var errs []error
	for _, f := range files {
		if slices.ContainsFunc(b.Writable, func(w string) bool { return paths.Within(f, w) }) {
			continue
		}
		if err := b.bindableFile(f); err != nil {
			errs = append(errs, err)
			continue
		}
		created, err := makeOwnFile(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if created {
			made = append(made, f)
		}
		b.Files = append(b.Files, f)
	}
	if len(errs) > 0 {
		return tidy, fmt.Errorf("boundary: envelope file not bound: %w", errs[0])
	}
	return tidy, nil
}

// bindableFile refuses a path the boundary hides or keeps for itself.
func (b *Boundary) bindableFile(f string) error {
	if !filepath.IsAbs(f) || filepath.Clean(f) != f {
		return fmt.Errorf("%s: not an absolute clean path", f)
	}
	hidden := slices.Concat(b.Masks, []string{b.Tmp, b.StubDir, filepath.Dir(b.StubDir)})
	for _, d := range hidden {
		if d != "" && d != "/" && paths.Within(f, d) {
			return fmt.Errorf("%s: inside %s, which the boundary hides", f, d)
		}
	}
	dir := filepath.Dir(f)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", f, err)
	}
	if real != dir {
		return fmt.Errorf("%s: its directory passes through a symlink (to %s)", f, real)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", f, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok {
		return fmt.Errorf("%s: its parent is not a directory", f)
	}
	// The directory is ours, or shared but sticky (the host's /tmp): there nobody else can
	// replace the file once it is ours.
	if int(st.Uid) != os.Getuid() && fi.Mode()&os.ModeSticky == 0 {
		return fmt.Errorf("%s: its directory is neither ours nor sticky", f)
	}
	return nil
}

// makeOwnFile creates f, or opens it if it is there, never following a symlink, and checks that
// it is a regular file of ours with no other name; created: it was not there.
func makeOwnFile(f string) (created bool, err error) {
	fd, err := syscall.Open(f, syscall.O_RDONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	created = err == nil
	if errors.Is(err, syscall.EEXIST) {
		fd, err = syscall.Open(f, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	}
	if err != nil {
		return false, fmt.Errorf("%s: %w", f, err)
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return false, fmt.Errorf("%s: %w", f, err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG || int(st.Uid) != os.Getuid() || st.Nlink != 1 {
		return false, fmt.Errorf("%s: not a regular file of ours with one name", f)
	}
	return created, nil
}
