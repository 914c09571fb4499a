package realshell

import (
	"slices"
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test in the package leaves a goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestArgv0Args(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args  []string
		argv0 string
		want  []string
	}{
		{[]string{"-c", "echo $0"}, "/usr/bin/spear-shell", []string{"-c", "echo $0", "/usr/bin/spear-shell"}},
		{[]string{"-c", "echo $0", "name", "a"}, "/usr/bin/spear-shell", []string{"-c", "echo $0", "name", "a"}},
		{[]string{"-c", "shopt login_shell"}, "-mylogin", []string{"-l", "-c", "shopt login_shell", "-mylogin"}},
		{[]string{"script.sh", "a"}, "-sh", []string{"-l", "script.sh", "a"}},
		{[]string{"--noprofile", "--norc", "-c", "x"}, "-bash", []string{"--noprofile", "--norc", "-l", "-c", "x", "-bash"}},
		{[]string{"--version"}, "-sh", []string{"--version"}},
	}
	for _, tt := range tests {
		if got := ParseArgs(tt.args).Argv0Args(tt.argv0); !slices.Equal(got, tt.want) {
			t.Errorf("%q as %q: got %q, want %q", tt.args, tt.argv0, got, tt.want)
		}
	}
}
