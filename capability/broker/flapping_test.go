package broker

import (
	"testing"
	"time"
)

// The edges of flapping: exactly N stops within M seconds hold the upstream down; a stop exactly
// M seconds before the latest lies outside the window; older stops are forgotten.
func TestFlapping(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	s := time.Second
	cases := []struct {
		name  string
		exits int
		at    []time.Duration // offsets of the stops
		held  []bool          // after each
	}{
		{"exactly N in M", 5, []time.Duration{0, 10 * s, 20 * s, 30 * s, 59 * s}, []bool{false, false, false, false, true}},
		{"first at the window's edge", 5, []time.Duration{0, 10 * s, 20 * s, 30 * s, 60 * s}, []bool{false, false, false, false, false}},
		{"then one more", 5, []time.Duration{0, 10 * s, 20 * s, 30 * s, 60 * s, 61 * s}, []bool{false, false, false, false, false, true}},
		{"one exit", 1, []time.Duration{0}, []bool{true}},
		{"spread out", 2, []time.Duration{0, 60 * s, 120 * s}, []bool{false, false, false}},
		{"just inside", 2, []time.Duration{0, 60*s - time.Nanosecond}, []bool{false, true}},
	}
	for _, c := range cases {
		var f flaps
		for i, d := range c.at {
			if got := f.add(t0.Add(d), c.exits, time.Minute); got != c.held[i] {
				t.Errorf("%s: stop %d at %v: held %v, want %v", c.name, i, d, got, c.held[i])
			}
		}
	}
	var f flaps
	for range 4 {
		f.add(t0, 5, time.Minute)
	}
	f.reset()
	if f.add(t0, 5, time.Minute) {
		t.Error("held after reset")
	}
}
