package lineedit

import (
	"bytes"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// historyFile is bash's HISTFILE as a terminal session uses it: read when the session starts
// and each line entered appended at once (bash -i writes its list at its end; appending keeps
// what other shells wrote, and a session killed keeps its lines). spear-shell runs outside the
// isolation boundary while what is typed runs inside it, so the file is opened with no symlink
// anywhere in its path and used only as a regular file of this user with one link: a history
// file the sandboxed shell swapped for a link to ~/.bashrc is never written through. Anything
// else, or an error, leaves the history to the session alone, as bash does, silently.
type historyFile struct {
	path   string
	broken bool
}

// loadLimit bounds what is read of a history file: its last lines.
const loadLimit = 1 << 20

func (f *historyFile) load() []string {
	fd, err := f.open(unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	file := os.NewFile(uintptr(fd), f.path)
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return nil
	}
	skipped := st.Size() > loadLimit
	if skipped {
		if _, err := file.Seek(-loadLimit, io.SeekEnd); err != nil {
			return nil
		}
	}
	data, err := io.ReadAll(io.LimitReader(file, loadLimit))
	if err != nil {
		return nil
	}
	if skipped {
		// The first line read is a part of one.
		_, data, _ = bytes.Cut(data, []byte("\n"))
	}
	var lines []string
	for line := range strings.SplitSeq(strings.TrimSuffix(string(data), "\n"), "\n") {
		// bash writes "#<seconds>" before a line when HISTTIMEFORMAT is set.
		if len(line) > 1 && line[0] == '#' && strings.Trim(line[1:], "0123456789") == "" {
			continue
		}
		lines = append(lines, line)
	}
	return lines
}

func (f *historyFile) add(line string) {
	if f.broken {
		return
	}
	fd, err := f.open(unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT, 0o600)
	if err != nil {
		f.broken = true
		return
	}
	defer unix.Close(fd)
	if _, err := unix.Write(fd, []byte(line+"\n")); err != nil {
		f.broken = true
	}
}

// open opens the file with no symlink on its path and checks that it is a regular file of
// this user with one link.
func (f *historyFile) open(flags int, mode uint32) (int, error) {
	fd, err := unix.Openat2(unix.AT_FDCWD, f.path, &unix.OpenHow{
		Flags:   uint64(flags | unix.O_CLOEXEC | unix.O_NOFOLLOW),
		Mode:    uint64(mode),
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return -1, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink != 1 || int(st.Uid) != unix.Geteuid() {
		unix.Close(fd)
		return -1, os.ErrPermission
	}
	return fd, nil
}
