package policy

// An entry's env_file (SPEC 2.3): variables kept out of capabilities.json, read by whichever
// process starts the server, at each start, and never copied anywhere. What is wrong with one
// is said by file and line, never with a value.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spear-shell/spear-shell/policy/paths"
)

// MaxEnvFileBytes bounds an env_file.
const MaxEnvFileBytes = 1 << 20

// ErrEnvFile marks every env_file that cannot be used.
var ErrEnvFile = errors.New("env_file")

// EnvFileError says why an env_file cannot be used: its path, the line (0: the file as a
// whole) and what is wrong. It never carries a value.
type EnvFileError struct {
	File string
	Line int
	Msg  string
}

func (e *EnvFileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("env_file %s: line %d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("env_file %s: %s", e.File, e.Msg)
}

func (e *EnvFileError) Unwrap() error { return ErrEnvFile }

// ReadEnvFile reads an env_file: an absolute path of a regular file owned by this user or
// root that neither group nor others may access, of at most MaxEnvFileBytes, holding
// KEY=VALUE lines (blank lines and lines starting with # ignored; nothing expanded, no quotes
// removed; a key at most once). Whether the path is out of the agent's reach (a trusted path,
// SPEC 9) is the caller's check, as for programs. The checks are made on the opened file, so
// a swap between check and read cannot pass.
func ReadEnvFile(path string) (map[string]string, error) {
	bad := func(line int, format string, a ...any) error {
		return &EnvFileError{File: path, Line: line, Msg: fmt.Sprintf(format, a...)}
	}
	if !filepath.IsAbs(path) {
		return nil, bad(0, "not an absolute path")
	}
	// O_NONBLOCK: opening a FIFO planted in place of the file must not hang.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, bad(0, "cannot be opened: %v", paths.UnwrapPath(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, bad(0, "cannot be inspected: %v", paths.UnwrapPath(err))
	}
	if !fi.Mode().IsRegular() {
		return nil, bad(0, "is not a regular file")
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != 0 && int(st.Uid) != os.Geteuid() {
		return nil, bad(0, "is owned by uid %d, neither this user nor root", st.Uid)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, bad(0, "mode %04o lets group or others at it (chmod 600)", perm)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxEnvFileBytes+1))
	if err != nil {
		return nil, bad(0, "cannot be read: %v", paths.UnwrapPath(err))
	}
	if len(data) > MaxEnvFileBytes {
		return nil, bad(0, "is larger than %d bytes", MaxEnvFileBytes)
	}
	return parseEnvFile(path, data)
}

// parseEnvFile reads the lines of an env_file. Messages name variables whose names are
// valid, and never show a line's text: a malformed line may be a pasted secret.
func parseEnvFile(path string, data []byte) (map[string]string, error) {
	vars := map[string]string{}
	first := map[string]int{}
	for i, line := range bytes.Split(data, []byte("\n")) {
		n := i + 1
		s := string(line)
		if t := strings.TrimLeft(s, " \t"); t == "" || t[0] == '#' {
			continue
		}
		key, val, ok := strings.Cut(s, "=")
		switch {
		case !ok:
			return nil, &EnvFileError{File: path, Line: n, Msg: "not KEY=VALUE"}
		case !envNameRe.MatchString(key):
			return nil, &EnvFileError{File: path, Line: n, Msg: "the name before = must match [A-Za-z_][A-Za-z0-9_]*"}
		case first[key] > 0:
			return nil, &EnvFileError{File: path, Line: n, Msg: fmt.Sprintf("variable %s given twice (first on line %d)", key, first[key])}
		case strings.IndexByte(val, 0) >= 0:
			return nil, &EnvFileError{File: path, Line: n, Msg: fmt.Sprintf("the value of %s contains NUL", key)}
		case strings.HasSuffix(val, "\r"):
			return nil, &EnvFileError{File: path, Line: n, Msg: fmt.Sprintf("the value of %s ends in a carriage return (CRLF line endings: use LF)", key)}
		}
		first[key] = n
		vars[key] = val
	}
	return vars, nil
}

// envFileWhere says why an env_file path is refused ("" when it may be used): it must be
// absolute and clean, and lie under home or dir (the capabilities file's directory), both
// hidden inside the boundary (SPEC 9).
func envFileWhere(p, home, dir string) string {
	switch {
	case !filepath.IsAbs(p) || filepath.Clean(p) != p:
		return "must be an absolute, clean path"
	case hasNUL(p):
		return "must not contain NUL"
	case under(p, home), under(p, dir):
		return ""
	}
	return fmt.Sprintf("must lie under SPEAR_HOME (%s) or the capabilities file's directory (%s)", home, dir)
}

// under reports whether p lies strictly inside the directory d.
func under(p, d string) bool {
	return d != "" && p != d && paths.Within(p, filepath.Clean(d))
}
