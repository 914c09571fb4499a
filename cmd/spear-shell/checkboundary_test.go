package main

import (
	"strings"
	"testing"

	"github.com/spear-shell/spear-shell/interp/realshell"
	"github.com/spear-shell/spear-shell/interp/sandbox"
)

// A spear-shell or real shell in the host's /tmp is warned of: inside the boundary /tmp is the
// turn's own, so the stub (a link to spear-shell) would point at nothing there.
func TestCheckBoundaryWarnsOfHostTmp(t *testing.T) {
	rs := &realshell.RealShell{Writable: []string{"/w"}, Verdicts: []sandbox.Verdict{
		{What: "bwrap", Path: "/usr/bin/bwrap"},
		{What: "real shell", Path: "/bin/bash"},
		{What: "spear-shell", Path: "/tmp/ci/bin/spear-shell"},
		{What: "manifest", Path: "/tmp/turn.json"},
	}}
	var out strings.Builder
	if checkBoundary(&out, rs) {
		t.Error("checkBoundary reported a refusal; none was given")
	}
	got := out.String()
	want := "warning: spear-shell /tmp/ci/bin/spear-shell lies in /tmp, which the boundary replaces with the turn's own: inside it is not there (install it elsewhere)\n"
	if !strings.Contains(got, want) {
		t.Errorf("output lacks the warning:\n%s", got)
	}
	if strings.Count(got, "warning:") != 1 {
		t.Errorf("want one warning (a manifest in /tmp is hidden anyway, not run):\n%s", got)
	}
	for _, c := range []struct{ path, want string }{
		{"/tmp/x", "/tmp"}, {"/var/tmp/x/y", "/var/tmp"}, {"/tmpx/y", ""}, {"/tmp", ""}, {"/usr/bin/x", ""},
	} {
		if got := hostTmp(c.path); got != c.want {
			t.Errorf("hostTmp(%q) = %q, want %q", c.path, got, c.want)
		}
	}
}
