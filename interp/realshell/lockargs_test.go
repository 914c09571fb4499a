package realshell

import (
	"slices"
	"testing"
)

// TestLockArgs: --lock takes provider ids as its operands (never a script to run), --diff goes
// with it, and --diff alone is a misuse.
func TestLockArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args    []string
		diff    bool
		ids     []string
		problem bool
	}{
		{[]string{"--lock"}, false, nil, false},
		{[]string{"--lock", "mem", "p"}, false, []string{"mem", "p"}, false},
		{[]string{"--lock", "--diff"}, true, nil, false},
		{[]string{"--diff", "--lock", "mem"}, true, []string{"mem"}, false},
		{[]string{"--diff"}, true, nil, true},
		{[]string{"--diff", "script.sh"}, true, nil, true},
	}
	for _, tt := range tests {
		a := ParseArgs(tt.args)
		if a.Diff != tt.diff || !slices.Equal(a.IDs, tt.ids) || (a.Problem != "") != tt.problem {
			t.Errorf("%q: Own %q Diff %v IDs %q Problem %q", tt.args, a.Own, a.Diff, a.IDs, a.Problem)
		}
		if !tt.problem && a.Own != "lock" {
			t.Errorf("%q: Own %q, want lock", tt.args, a.Own)
		}
	}
}
