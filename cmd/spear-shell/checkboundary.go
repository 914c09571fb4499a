package main

import (
	"fmt"
	"io"
	"strings"

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
