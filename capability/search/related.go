package search

import (
	_ "embed"
	"math"
	"slices"
	"strings"
)

// A word matches itself (its stem) and, weighted below, the words related to it (SPEC 2.6), so
// that an agent's word for a thing finds the tool's word for it. Both directions are bridged:
//   - a query's word matches its close words (synonyms, derived forms) at weightSynonym:
//     "picture" finds "image", "erase" "delete", "folder" "directory";
//   - a document's words stand, faintly, for the words related to them: a tool whose name says
//     "monitor" is found by "surveillance" and "eye" (WordNet defines monitor as "keep tabs on;
//     keep an eye on; keep under surveillance"), as if the document said them (its related
//     term, see relatedTerm), weighted weightClose and weightLoose.
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
	weightSynonym = 0.4  // a query word's close word
	weightClose   = 0.4  // a document word's close word
	weightLoose   = 0.15 // a document word's loose word
)

// relatedMinTF is the least weighted frequency of a document's word that stands for its related
// words: a word of its id, name or arguments, or one its description repeats. Measured: every
// word of the descriptions too put one fewer of the agent's queries and one fewer of the held-out
// ones in the top 3 (a description's passing words bring their definitions' noise).
const relatedMinTF = weightArg

// related returns the stems the table links stem to, by binary search over the table's lines:
// nothing is read or built at start.
func related(stem string) (close, loose, syn []string) {
	t := relatedTable
	lo, hi := 0, len(t)
	for lo < hi {
		mid := lo + (hi-lo)/2
		start := strings.LastIndexByte(t[:mid], '\n') + 1
		end := start + strings.IndexByte(t[start:], '\n')
		key, rest, _ := strings.Cut(t[start:end], " ")
		switch {
		case key == stem:
			c, rest, _ := strings.Cut(rest, "|")
			l, syn, _ := strings.Cut(rest, "|")
			return strings.Fields(c), strings.Fields(l), strings.Fields(syn)
		case key < stem:
			lo = end + 1
		default:
			hi = start
		}
	}
	return nil, nil, nil
}

// synonyms returns stem's close words.
func synonyms(stem string) []string {
	_, _, syn := related(stem)
	return syn
}

// relatedRef is a term of the index that stands for a word, with the weight of the relation.
type relatedRef struct {
	term   int32
	weight float32
}

// matchRelated raises each document's wordScores to word's related term's BM25 score there, if
// that is more: the related term of a document is in it with the sum over the document's words
// related to word (those of relatedMinTF or more) of the word's frequency (at most a name's
// weight) times the relation's weight, and has its own document frequency (the documents that
// hold it). A document that says word itself scores it by its own match.
func (ix *Index) matchRelated(word string, touched *[]int32) {
	close, loose, _ := related(word)
	refs := ix.relRefs[:0]
	for tier, ws := range [2][]string{close, loose} {
		for _, w := range ws {
			if t, ok := slices.BinarySearch(ix.terms, w); ok {
				refs = append(refs, relatedRef{int32(t), [2]float32{weightClose, weightLoose}[tier]})
			}
		}
	}
	ix.relRefs = refs
	if len(refs) == 0 {
		return
	}
	if ix.relTF == nil {
		ix.relTF = make([]float32, ix.n)
	}
	docs := ix.relDocs[:0]
	defer func() { ix.relDocs = docs[:0] }()
	if t, ok := slices.BinarySearch(ix.terms, word); ok {
		for _, p := range ix.postings(t) {
			ix.relTF[p.doc] = -1 // says the word: scored by its own match
			docs = append(docs, p.doc)
		}
	}
	says := len(docs)
	for _, r := range refs {
		for _, p := range ix.postings(int(r.term)) {
			if p.tf < relatedMinTF || ix.relTF[p.doc] < 0 {
				continue
			}
			if ix.relTF[p.doc] == 0 {
				docs = append(docs, p.doc)
			}
			ix.relTF[p.doc] += min(p.tf, weightName) * r.weight
		}
	}
	for _, d := range docs[:says] {
		ix.relTF[d] = 0
	}
	holders := docs[says:]
	idf := math.Log(1 + (float64(ix.n)-float64(len(holders))+0.5)/(float64(len(holders))+0.5))
	for _, d := range holders {
		tf := float64(ix.relTF[d])
		ix.relTF[d] = 0
		s := idf * tf * (k1 + 1) / (tf + ix.norms[d])
		if ix.wordScores[d] == 0 {
			*touched = append(*touched, d)
		}
		ix.wordScores[d] = max(ix.wordScores[d], s)
	}
}
