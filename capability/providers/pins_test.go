package providers

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
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

// TestSearchPins: every pinned id is found by binary search in the file's bytes with its hash,
// ids that are prefixes of others included, and nothing else is (an id's prefix, an id with a
// hash's text, an empty file).
func TestSearchPins(t *testing.T) {
	names := []string{"a", "a.b", "a-b", "a_b", "a0", "A", "Z", "z", "echo", "echo2", "e", "t0001", "t0010", "-", "."}
	var pins []Pin
	for _, p := range []string{"p", "p1", "p-1", "p_", "q"} {
		for i, n := range names {
			pins = append(pins, Pin{ID: p + "/" + n, Hash: fmt.Sprintf("%064x", len(pins)*31+i)})
		}
	}
	for n := range len(pins) + 1 {
		file := pinLines(pins[:n])
		for i, p := range pins {
			h, ok := searchPins(file, p.ID)
			if want := i < n; ok != want || ok && h != p.Hash {
				t.Fatalf("%d pins: %s: got %q %v, want %v", n, p.ID, h, ok, want)
			}
		}
		for _, absent := range []string{"", "p", "p/", "p/a.", "p/echo3", "zz/a", "p/a " + pins[0].Hash, "0"} {
			if h, ok := searchPins(file, absent); ok {
				t.Fatalf("%d pins: %q found (%q)", n, absent, h)
			}
		}
	}
}

// TestSearchPinsAt: the search that reads the file a window at a time finds what the search in
// memory finds, over a family of 10,000 and over lines longer than its window.
func TestSearchPinsAt(t *testing.T) {
	var pins []Pin
	for p := range 20 {
		prov := fmt.Sprintf("p%02d", p)
		if p%7 == 3 {
			prov += strings.Repeat("x", 2*pinWindow) // a line longer than the window
		}
		for i := range 500 {
			pins = append(pins, Pin{ID: fmt.Sprintf("%s/t%04d", prov, i), Hash: fmt.Sprintf("%064x", p*1000+i)})
		}
	}
	for _, n := range []int{0, 1, 2, 9, 10, 33, 500, 1700, len(pins)} {
		file := pinLines(pins[:n])
		r := bytes.NewReader(file)
		for i, p := range pins {
			if i%97 > 3 && i != n-1 && i != n {
				continue // a sample, the family's first and last pins among them
			}
			h, ok, err := searchPinsAt(r, int64(len(file)), p.ID)
			if want := i < n; err != nil || ok != want || ok && h != p.Hash {
				t.Fatalf("%d pins: %s: got %q %v %v, want %v", n, p.ID, h, ok, err, want)
			}
		}
		for _, absent := range []string{"", "p00", "p00/", "p00/t04999", "p19/t0500", "zz/a", "0"} {
			if h, ok, err := searchPinsAt(r, int64(len(file)), absent); ok || err != nil {
				t.Fatalf("%d pins: %q found (%q, %v)", n, absent, h, err)
			}
		}
	}
}

// TestPinOfKeepsWhatItFound: a capability looked up again is answered from what its search
// found, without the file (which never changes once written) and without counting towards
// reading the file whole; a pin file that is absent is looked for again, since another process
// of the turn may write it.
func TestPinOfKeepsWhatItFound(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	st, err := openState(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	reader := &Turn{State: st}
	if _, ok := reader.PinOf("p/echo"); ok {
		t.Fatal("a pin found before the family was pinned")
	}
	var pins []Pin
	for i := range 3000 {
		pins = append(pins, Pin{ID: fmt.Sprintf("p/t%04d", i), Hash: fmt.Sprintf("%064x", i)})
	}
	pins = append(pins, Pin{ID: "p/echo", Hash: strings.Repeat("e", 64)})
	other, err := openState(dir, "") // another process of the turn pins it
	if err != nil {
		t.Fatal(err)
	}
	if created, err := (&Turn{State: other}).PinFamily(pins); !created || err != nil {
		t.Fatalf("PinFamily: %v %v", created, err)
	}
	if h, ok := reader.PinOf("p/echo"); !ok || h != strings.Repeat("e", 64) {
		t.Fatalf("p/echo after pinning: %q %v", h, ok)
	}
	if _, ok := reader.PinOf("p/none"); ok {
		t.Fatal("p/none found")
	}
	if err := os.Remove(filepath.Join(dir, pinsFact)); err != nil {
		t.Fatal(err)
	}
	for range 2 * pinSearchesMax {
		if h, ok := reader.PinOf("p/echo"); !ok || h != strings.Repeat("e", 64) {
			t.Fatalf("p/echo again: %q %v", h, ok)
		}
		if _, ok := reader.PinOf("p/none"); ok {
			t.Fatal("p/none found again")
		}
	}
	if reader.pinSearches != 3 || reader.pins != nil {
		t.Errorf("%d searches of the file, whole map %v; want 3 searches and no map", reader.pinSearches, reader.pins != nil)
	}
}
