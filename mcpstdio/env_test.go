package mcpstdio

import (
	"slices"
	"testing"
)

// A repeated variable keeps its last value, in the place of that last one, as exec.Cmd does.
func TestLastWins(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want []string }{
		{nil, nil},
		{[]string{"A=1", "B=2"}, []string{"A=1", "B=2"}},
		{[]string{"A=1", "B=2", "A=3"}, []string{"B=2", "A=3"}},
		{[]string{"A=", "A=x=y", "C=1"}, []string{"A=x=y", "C=1"}},
	}
	for _, tt := range tests {
		if got := lastWins(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("lastWins(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
