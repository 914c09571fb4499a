package providers

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
)

// TestPinLines holds the pin file to its earlier spelling: a "<id> <hash>" line per capability,
// the lines sorted as strings (ids that are prefixes of others included).
func TestPinLines(t *testing.T) {
	names := []string{"a", "a.b", "a-b", "a_b", "a0", "A", "Z", "z", "echo", "echo2", "e", "t0001", "t0010", "-", "."}
	var pins []Pin
	for _, p := range []string{"p", "p1", "p-1", "p_", "q"} {
		for _, n := range names {
			pins = append(pins, Pin{ID: p + "/" + n, Hash: strings.Repeat(string(rune('a'+len(pins)%26)), 64)})
		}
	}
	rand.Shuffle(len(pins), func(i, j int) { pins[i], pins[j] = pins[j], pins[i] })
	var lines []string
	for _, p := range pins {
		lines = append(lines, p.ID+" "+p.Hash+"\n")
	}
	sort.Strings(lines)
	if got, want := pinLines(pins), []byte(strings.Join(lines, "")); !bytes.Equal(got, want) {
		t.Errorf("pinLines:\n%s\nwant\n%s", got, want)
	}
}

// BenchmarkPinLines writes the pins of a 10,000-capability family (20 providers of 500 tools).
func BenchmarkPinLines(b *testing.B) {
	var pins []Pin
	for p := 1; p <= 20; p++ {
		for i := range 500 {
			pins = append(pins, Pin{ID: fmt.Sprintf("p%02d/t%04d", p, i), Hash: fmt.Sprintf("%064x", p*1000+i)})
		}
	}
	for b.Loop() {
		pinLines(pins)
	}
}
