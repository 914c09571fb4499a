package providers

import (
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
// this turn's family. Capability ids hold no blank, so a line splits at its blank.
func (t *Turn) PinOf(id string) (hash string, ok bool) {
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
	}
	hash, ok = t.pins[id]
	return hash, ok
}
