package broker

import "time"

// flaps is an upstream's recent stops, for flapping: held down once exits stops lie within a
// sliding window of within (a stop exactly within before the latest lies outside it).
type flaps struct{ at []time.Time }

// add records a stop at now and reports whether the upstream is now flapping: exits stops,
// this one included, in the window (now-within, now].
func (f *flaps) add(now time.Time, exits int, within time.Duration) bool {
	keep := f.at[:0]
	for _, t := range f.at {
		if now.Sub(t) < within {
			keep = append(keep, t)
		}
	}
	f.at = append(keep, now)
	return len(f.at) >= exits
}

// reset forgets every stop (--broker-release, new launch keys).
func (f *flaps) reset() { f.at = nil }
