// Command bwraprec stands in for bwrap in one run of spear-shell, to learn the exact options it
// passes, which no longer all show in bwrap's command line: spear-shell hands most of them over
// on a descriptor (--args FD). It writes its argv, with the options read from that descriptor
// put in place of --args FD, and its environment, to the file "record" beside itself (two
// NUL-separated lists, a blank line between them), then execs the real bwrap (whose path is in
// the file "real" beside itself) with that argv. Files, not variables: spear-shell's probe runs
// bwrap with a bare environment.
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

func main() {
	self, err := os.Executable()
	if err != nil {
		fail(err.Error())
	}
	dir := filepath.Dir(self)
	b, err := os.ReadFile(filepath.Join(dir, "real"))
	if err != nil {
		fail(err.Error())
	}
	real, out := strings.TrimSpace(string(b)), filepath.Join(dir, "record")
	argv := []string{real}
	for i := 1; i < len(os.Args); i++ {
		a := os.Args[i]
		if a == "--" {
			argv = append(argv, os.Args[i:]...)
			break
		}
		if a != "--args" || i+1 >= len(os.Args) {
			argv = append(argv, a)
			continue
		}
		fd, err := strconv.Atoi(os.Args[i+1])
		if err != nil {
			fail("--args " + os.Args[i+1])
		}
		opts, err := readAll(fd)
		if err != nil {
			fail(fmt.Sprintf("reading --args %d: %v", fd, err))
		}
		argv = append(argv, strings.Split(strings.TrimSuffix(string(opts), "\x00"), "\x00")...)
		i++
	}
	env := os.Environ()
	rec := strings.Join(argv, "\x00") + "\n\n" + strings.Join(env, "\x00")
	if err := os.WriteFile(out, []byte(rec), 0o600); err != nil {
		fail(err.Error())
	}
	err = syscall.Exec(real, argv, env)
	fail(fmt.Sprintf("exec %s: %v", real, err))
}

func readAll(fd int) ([]byte, error) {
	var b bytes.Buffer
	buf := make([]byte, 4096)
	for {
		n, err := syscall.Read(fd, buf)
		if n > 0 {
			b.Write(buf[:n])
		}
		if n == 0 && err == nil {
			syscall.Close(fd)
			return b.Bytes(), nil
		}
		if err != nil && err != syscall.EINTR {
			return nil, err
		}
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "bwraprec:", msg)
	os.Exit(126)
}
