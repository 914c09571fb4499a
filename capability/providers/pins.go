package providers

import (
	"bytes"
	"io"
	"slices"
	"strings"
)

// Pin is one capability's pinned definition (SPEC 2.6): its id and the hash of its definition.
type Pin struct{ ID, Hash string }

// PinFamily pins the family once per turn: one file for it, a line per capability (a family of
// 10,000 tools from 20 providers costs one file, not 10,000). created is false when another
// process of the turn pinned it first; pins this process wrote are known without reading
// them back.
func (t *Turn) PinFamily(pins []Pin) (created bool, err error) {
	created, err = t.State.Create(pinsFact, pinLines(pins))
	if err == nil && created && t.pins == nil {
		t.pins = make(map[string]string, len(pins))
		for _, p := range pins {
			t.pins[p.ID] = p.Hash
		}
	}
	return created, err
}

// pinLines is the family's pin file: one "<id>/<tool> hash" line per capability, sorted. Ids
// are unique and hold no byte below the blank that follows them, so sorting by id sorts the
// lines.
func pinLines(pins []Pin) []byte {
	sorted := slices.Clone(pins)
	slices.SortFunc(sorted, func(a, b Pin) int { return strings.Compare(a.ID, b.ID) })
	n := 0
	for _, p := range sorted {
		n += len(p.ID) + len(p.Hash) + 2
	}
	b := make([]byte, 0, n)
	for _, p := range sorted {
		b = append(b, p.ID...)
		b = append(b, ' ')
		b = append(b, p.Hash...)
		b = append(b, '\n')
	}
	return b
}

// PinOf returns the hash capability id was pinned with; ok is false when it is not part of
// this turn's family. The pin file is sorted by id (pinLines), so an answer about a few
// capabilities finds each by binary search in the file, reading a few hundred bytes per step
// (a family of 10,000 pins 730 KB); only a process that asks for many (a listing) reads the
// file whole into a map, once. Capability ids hold no blank, so a line splits at its blank.
//
// The pin file, once it exists, never changes (a fact of the turn's state), so what a search
// found, or did not find, is kept: a process that asks about the same capability again (an
// invoke checks its pin twice; the MCP face answers many calls of one turn state) reads the
// file once per capability, and only distinct capabilities count towards reading it whole.
func (t *Turn) PinOf(id string) (hash string, ok bool) {
	if t.pins == nil {
		if p, seen := t.pinSeen[id]; seen {
			return p.hash, p.ok
		}
	}
	if t.pins == nil && t.pinSearches < pinSearchesMax {
		t.pinSearches++
		var found bool
		exists, err := t.State.Search(pinsFact, func(r io.ReaderAt, size int64) error {
			var err error
			hash, found, err = searchPinsAt(r, size, id)
			return err
		})
		if err == nil {
			if exists {
				// Absent, the file may still be written by another process: nothing is kept.
				if t.pinSeen == nil {
					t.pinSeen = make(map[string]pinFound, pinSearchesMax)
				}
				t.pinSeen[id] = pinFound{hash, found}
			}
			return hash, exists && found
		}
	}
	if t.pins == nil {
		b, exists, err := t.State.Read(pinsFact)
		if err != nil || !exists {
			return "", false
		}
		t.pins = map[string]string{}
		for line := range strings.SplitSeq(string(b), "\n") {
			if id, h, cut := strings.Cut(line, " "); cut {
				t.pins[id] = h
			}
		}
		t.pinSeen = nil
	}
	hash, ok = t.pins[id]
	return hash, ok
}

// pinFound is what one search of the pin file found.
type pinFound struct {
	hash string
	ok   bool
}

// pinSearchesMax is how many capabilities a process looks up in the pin file before it reads
// the whole file into a map.
const pinSearchesMax = 64

// pinWindow is what a step of searchPinsAt reads on each side of its middle: a pin line (an id
// and a 64-digit hash) fits, and a longer one makes the search read the rest whole.
const pinWindow = 512

// searchPinsAt finds id's line in the pin file r of size n (sorted by id) by binary search,
// reading 2*pinWindow bytes per step until what is left is small, then searchPins.
func searchPinsAt(r io.ReaderAt, n int64, id string) (string, bool, error) {
	var buf [2 * pinWindow]byte
	lo, hi := int64(0), n // both at the start of a line (or hi at the end)
	for hi-lo > 2*pinWindow {
		mid := lo + (hi-lo)/2
		from := mid - pinWindow // > lo
		if _, err := r.ReadAt(buf[:], from); err != nil {
			return "", false, err
		}
		i := bytes.LastIndexByte(buf[:pinWindow], '\n') // the line holding mid starts after it
		j := bytes.IndexByte(buf[pinWindow:], '\n')     // and ends here
		if i < 0 || j < 0 {
			break // a line longer than the window
		}
		lineID, h, _ := bytes.Cut(buf[i+1:pinWindow+j], []byte{' '})
		switch c := strings.Compare(string(lineID), id); {
		case c == 0:
			return string(h), true, nil
		case c < 0:
			lo = mid + int64(j) + 1
		default:
			hi = from + int64(i) + 1
		}
	}
	rest := make([]byte, hi-lo)
	if _, err := r.ReadAt(rest, lo); err != nil && !(err == io.EOF && hi == n) {
		return "", false, err
	}
	h, ok := searchPins(rest, id)
	return h, ok, nil
}

// searchPins finds id's line in pin file b (sorted by id) by binary search over its bytes.
func searchPins(b []byte, id string) (string, bool) {
	lo, hi := 0, len(b) // lo is the start of a line; [lo, hi) holds whole lines
	for lo < hi {
		mid := lo + (hi-lo)/2
		start := bytes.LastIndexByte(b[lo:mid], '\n') + 1 + lo
		end := bytes.IndexByte(b[start:hi], '\n')
		if end < 0 {
			end = hi
		} else {
			end += start
		}
		lineID, h, _ := bytes.Cut(b[start:end], []byte{' '})
		switch c := strings.Compare(string(lineID), id); {
		case c == 0:
			return string(h), true
		case c < 0:
			lo = end + 1
		default:
			hi = start
		}
	}
	return "", false
}
