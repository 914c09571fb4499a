package search

import (
	_ "embed"
	"strings"
)

// A query's word matches itself (its stem) and, weighted below, its synonyms (SPEC 2.6), so
// that an agent's word for a thing finds the tool's word for it: "picture" finds "image",
// "erase" "delete", "folder" "directory". The synonyms are looked up at query time, not
// expanded into the index: the kept index, its size and its build time stay as they were.

//go:generate go test -run TestSynonymTableGenerated -update-synonyms .

// synonymTable is one line per stem, sorted: "stem syn syn ...", every word as Words gives it.
// It is WordNet 3.0's synonyms of each word's most frequent senses and a hand-written table of
// software vocabulary (synonyms_gen_test.go; docs/mcp.md says where they came from and the licence).
//
//go:embed synonyms.txt
var synonymTable string

// weightSynonym is what a synonym's match counts for against the word's own: below it, so that
// a tool that says the agent's word outranks one that says its synonym.
const weightSynonym = 0.4

// synonyms returns the stems the table links stem to, by binary search over the table's
// lines: nothing is read or built at start.
func synonyms(stem string) []string {
	t := synonymTable
	lo, hi := 0, len(t)
	for lo < hi {
		mid := lo + (hi-lo)/2
		start := strings.LastIndexByte(t[:mid], '\n') + 1
		end := start + strings.IndexByte(t[start:], '\n')
		key, rest, _ := strings.Cut(t[start:end], " ")
		switch {
		case key == stem:
			return strings.Fields(rest)
		case key < stem:
			lo = end + 1
		default:
			hi = start
		}
	}
	return nil
}
