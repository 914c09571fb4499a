package bwrapfd

import "testing"

// Only argv that open nothing or are refused: a test process must not have its own
// descriptors replaced.
func TestStandIns(t *testing.T) {
	tests := []struct {
		argv    []string
		max     int
		wantErr bool
	}{
		{[]string{"bwrap", "--bind", "/", "/", "--", "/bin/bash", "-c", "--info-fd 9"}, 2, false},
		{[]string{"bwrap"}, 2, false},
		{[]string{"bwrap", "--info-fd", "x", "--", "true"}, 0, true},
		{[]string{"bwrap", "--args", "1", "--", "true"}, 0, true},
	}
	for _, tt := range tests {
		got, err := StandIns(tt.argv)
		if (err != nil) != tt.wantErr || got != tt.max {
			t.Errorf("StandIns(%q) = %d, %v; want %d (error %v)", tt.argv, got, err, tt.max, tt.wantErr)
		}
	}
}
