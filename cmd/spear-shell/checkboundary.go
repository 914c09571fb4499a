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
	}
	return refused
}
