package search

import (
	_ "embed"
	"strings"
)

// A word matches itself (its stem) and, weighted below, the words related to it (SPEC 2.6), so
// that an agent's word for a thing finds the tool's word for it. Both directions are bridged:
//   - at index time, each of a document's words adds its related words to the document as terms
//     of their own (relatedPrefix), weighted below the word: a tool that says "monitor" is found,
//     faintly, by "surveillance" and "eye" (WordNet defines monitor as "keep tabs on; keep an eye
//     on; keep under surveillance");
//   - at query time, a query's word matches its close words (synonyms, derived forms) at
//     weightSynonym: "picture" finds "image", "erase" "delete", "folder" "directory".
//
// The related words are WordNet 3.0's, reduced to related.txt (related_gen_test.go; docs/mcp.md
// says where they came from, how they were measured and the licence, WORDNET-LICENSE).

//go:generate go test -run TestRelatedTableGenerated -update-related .

// relatedTable is one line per stem, sorted: "stem close... | loose...", every word as Words
// gives it. Close words are the synonyms and derived forms of the stem's most frequent senses and
// of the hand-written software vocabulary; loose words are the words of those senses' definitions
// and phrases.
//
//go:embed related.txt
var relatedTable string

// The weights of a related word's match, against the word's own (1).
const (
	weightSynonym = 0.4  // a query word's close word, matched at query time
	weightClose   = 0.4  // a document word's close word, added at index time
	weightLoose   = 0.15 // a document word's loose word, added at index time
)

// relatedPrefix marks an index term as a word related to the document's words, not one it says:
// kept apart, it has a document frequency of its own and leaves the own word's as it was
// (measured: mixed into the own word's postings, the added words' frequency lowered every own
// word's idf and lost 11 of the agent's queries). A query's words never hold it.
const relatedPrefix = "~"

// related returns the stems the table links stem to, by binary search over the table's lines:
// nothing is read or built at start.
func related(stem string) (close, loose []string) {
	t := relatedTable
	lo, hi := 0, len(t)
	for lo < hi {
		mid := lo + (hi-lo)/2
		start := strings.LastIndexByte(t[:mid], '\n') + 1
		end := start + strings.IndexByte(t[start:], '\n')
		key, rest, _ := strings.Cut(t[start:end], " ")
		switch {
		case key == stem:
			c, l, _ := strings.Cut(rest, "|")
			return strings.Fields(c), strings.Fields(l)
		case key < stem:
			lo = end + 1
		default:
			hi = start
		}
	}
	return nil, nil
}

// synonyms returns stem's close words.
func synonyms(stem string) []string {
	close, _ := related(stem)
	return close
}

type relatedWords struct{ close, loose []string }

// expand adds to a document's weighted term frequencies tf (its own words) the words related to
// them, as relatedPrefix terms, each the sum over the document's words that lead to it of the
// word's frequency (at most a name's weight) times the relation's weight. rel remembers each
// word's related words across the family's documents; exp is scratch space.
func expand(tf, exp map[string]float32, rel map[string]relatedWords) {
	clear(exp)
	for w, f := range tf {
		r, ok := rel[w]
		if !ok {
			r.close, r.loose = related(w)
			rel[w] = r
		}
		f = min(f, weightName)
		for _, x := range r.close {
			if _, own := tf[x]; !own {
				exp[x] += f * weightClose
			}
		}
		for _, x := range r.loose {
			if _, own := tf[x]; !own {
				exp[x] += f * weightLoose
			}
		}
	}
	for x, v := range exp {
		tf[relatedPrefix+x] = v
	}
}
