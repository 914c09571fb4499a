package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// attack (SPEC 2.3): an env_file that is not a plain private file of KEY=VALUE lines is
// refused, never read in part, never a hang, and no error carries a value: a FIFO, a
// directory, a /proc/self/fd path (a descriptor's file, not the path's), a file open to the
// group, a NUL, a CRLF line, a file over the bound, a line without a name; a file made
// group-readable after it was opened is still judged by what was opened.
func TestAttackEnvFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	put := func(name, text string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	open := put("open.env", "TOKEN=value-0123456789\n", 0o600)
	fd, err := os.Open(open)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	cases := map[string]string{
		"fifo":      fifo,
		"directory": dir,
		"group":     put("group.env", "TOKEN=value-0123456789\n", 0o640),
		"other":     put("other.env", "TOKEN=value-0123456789\n", 0o604),
		"nul":       put("nul.env", "TOKEN=value-0123\x00456789\n", 0o600),
		"crlf":      put("crlf.env", "TOKEN=value-0123456789\r\n", 0o600),
		"huge":      put("huge.env", "TOKEN="+strings.Repeat("v", MaxEnvFileBytes)+"\n", 0o600),
		"no name":   put("noname.env", "value-0123456789\n", 0o600),
		"twice":     put("twice.env", "TOKEN=value-0123456789\nTOKEN=value-0123456789\n", 0o600),
		"relative":  "rel.env",
		"proc fd":   "/proc/self/fd/" + strconv.Itoa(int(fd.Fd())),
	}
	for name, p := range cases {
		done := make(chan error, 1)
		go func() {
			_, err := ReadEnvFile(p)
			done <- err
		}()
		select {
		case err := <-done:
			if name == "proc fd" {
				// the link leads to a private regular file of ours: it reads as that file,
				// which is why the path is held to SPEAR_HOME (envFileWhere), checked below.
				continue
			}
			if err == nil || !errors.Is(err, ErrEnvFile) {
				t.Errorf("%s: read: %v", name, err)
			} else if strings.Contains(err.Error(), "value-0123") {
				t.Errorf("%s: the error carries the value: %v", name, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: ReadEnvFile hangs", name)
		}
	}
	if why := envFileWhere(cases["proc fd"], dir, dir); why == "" {
		t.Errorf("a /proc/self/fd path is accepted as an env_file's place")
	}
	for _, p := range []string{dir + "/../x.env", dir, dir + "/a/../../x"} {
		if why := envFileWhere(p, dir, dir); why == "" {
			t.Errorf("%s: accepted as an env_file's place", p)
		}
	}
	// opened private, made group-readable while read: the opened file's mode is what counts,
	// and a later read sees the new mode
	if _, err := ReadEnvFile(open); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadEnvFile(open); err == nil {
		t.Error("a file made group-readable is still read")
	}
}
