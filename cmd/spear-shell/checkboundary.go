package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spear-shell/spear-shell/interp/realshell"
)

// checkBoundary prints, for --check, the boundary's writable roots and every trusted path it
// checked at start with its verdict (SPEC 9), so that an operator sees a weak deployment before
// an agent does. It reports whether any path was refused. Unconfined there is nothing to print.
func checkBoundary(w io.Writer, rs *realshell.RealShell) (refused bool) {
	if rs == nil || len(rs.Verdicts) == 0 {
		return false
	}
	fmt.Fprintf(w, "writable roots: %s\n", strings.Join(rs.Writable, " "))
	for _, v := range rs.Verdicts {
		verdict := "trusted"
		if v.Err != nil {
			verdict, refused = "refused: "+v.Err.Error(), true
		}
		fmt.Fprintf(w, "trusted path: %s %s: %s\n", v.What, v.Path, verdict)
		if dir := hostTmp(v.Path); dir != "" && programs[v.What] {
			fmt.Fprintf(w, "warning: %s %s lies in %s, which the boundary replaces with the turn's own: inside it is not there (install it elsewhere)\n", v.What, v.Path, dir)
		}
	}
	return refused
}

// programs are the verdicts' names of what runs inside the boundary or is linked from it (the
// stub points at spear-shell).
var programs = map[string]bool{"real shell": true, "spear-shell": true}

// hostTmp is the host's temporary directory path lies in, if any: inside the boundary /tmp and
// /var/tmp are the turn's own.
func hostTmp(path string) string {
	for _, d := range []string{"/tmp", "/var/tmp"} {
		if strings.HasPrefix(path, d+"/") {
			return d
		}
	}
	return ""
}

// checkIgnored prints, for --check, the signals ignored at start that the real shell will not
// get ignored (bash would pass them on): all but SIGHUP and SIGINT when this binary cannot
// read which they are (ignored.go), and those Go's runtime or bwrap need.
func checkIgnored(w io.Writer, rs *realshell.RealShell) {
	if _, err := realshell.IgnoredAtStart(); err != nil {
		fmt.Fprintf(w, "warning: signals ignored at start (but SIGHUP and SIGINT) reach the real shell with their default: %v\n", err)
	}
	if kept := realshell.NotPassed(rs != nil && rs.Isolated()); kept != 0 {
		fmt.Fprintf(w, "warning: %s ignored at start: the real shell gets the default (Go's runtime, or bwrap for SIGCHLD, cannot ignore them)\n", kept)
	}
}

// loginTimeout bounds the login shell --check runs inside the boundary: a profile that waits
// (for a terminal, the network) must not hang the check.
const loginTimeout = 20 * time.Second

// checkLogin runs, for --check, the agent user's login shell once inside the boundary (`bash -lc
// true`, with the environment and directory the real shell gets) and reports each line it
// printed about a file it could not write (a profile's `pyenv init` rehashing its shims, nvm or
// conda writing their caches), with the manifest's `writable` entry that would quiet it: every
// forwarded `-lc` command would otherwise print the same. Unconfined there is nothing to check.
func checkLogin(w io.Writer, rs *realshell.RealShell) {
	if rs == nil || rs.Boundary == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), loginTimeout)
	defer cancel()
	argv := rs.Argv([]string{rs.Path, "-lc", "true"})
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = rs.Env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil && out.Len() == 0 {
		fmt.Fprintf(w, "warning: the login shell (%s -lc true) could not run inside the boundary: %v\n", rs.Path, err)
		return
	}
	for _, n := range loginWrites(out.String()) {
		fmt.Fprintf(w, "warning: the login shell (%s -lc true) inside the boundary printed: %s\n", rs.Path, n.line)
		if n.writable != "" {
			fmt.Fprintf(w, "  to quiet it, add %q to the manifest's \"writable\" (docs/harnesses.md), or point the tool into the turn\n", n.writable)
		}
	}
}

// loginNote is a line a login shell printed about a file it could not write, and the writable
// root that would let it ("" when no path could be read from the line).
type loginNote struct{ line, writable string }

// readOnlySigns are what tools print when a file cannot be written on a read-only root.
var readOnlySigns = []string{"Read-only file system", "isn't writable", "is not writable", "not writable", "Permission denied", "cannot create", "cannot touch"}

// loginWrites picks out of a login shell's output the lines about files it could not write.
func loginWrites(output string) []loginNote {
	var notes []loginNote
	for line := range strings.SplitSeq(output, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || !slices.ContainsFunc(readOnlySigns, func(s string) bool { return strings.Contains(line, s) }) {
			continue
		}
		notes = append(notes, loginNote{line: line, writable: writableFor(firstPath(line))})
	}
	return notes
}

// firstPath is the first absolute path in line, without the quotes and punctuation around it.
func firstPath(line string) string {
	for _, word := range strings.Fields(line) {
		word = strings.Trim(word, "'\"`‘’“”,;:()[]")
		if strings.HasPrefix(word, "/") && len(word) > 1 {
			return filepath.Clean(word)
		}
	}
	return ""
}

// writableFor is the writable root to list for a path a tool could not write: the path when it
// is a directory, else the nearest directory above it that exists (a file is created in its
// directory).
func writableFor(path string) string {
	if path == "" {
		return ""
	}
	for p := path; p != "/" && p != "."; p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return p
		}
	}
	return ""
}
