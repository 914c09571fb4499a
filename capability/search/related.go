package search

import (
	_ "embed"
	"slices"
	"strings"
)

// A word matches itself (its stem) and, weighted below, the words related to it (SPEC 2.6), so
// that an agent's word for a thing finds the tool's word for it. Both directions are bridged:
//   - a query's word matches its synonyms (and the words derived from it) at weightSynonym:
//     "picture" finds "image", "erase" "delete", "folder" "directory";
//   - a document's words stand, faintly, for the words related to them: a tool whose name says
//     "monitor" is found by "surveillance" and "eye" (WordNet defines monitor as "keep tabs on;
//     keep an eye on; keep under surveillance"), as if the document said them (its related
//     term, matchRelated), weighted weightClose and weightLoose; and for the words software
//     prose uses alike (a tool that says "rename" is found, faintly, by "move"), weighted
//     weightNear.
//
// None of it is in the index: the kept index, its format, size and build time are what they were
// (measured: added to the index at build time, the related words took the 10,000-tool family's
// build from 40 to 95-165 ms of CPU and its index from 0.5 to 1.2-8.8 MB, for the same quality).
//
// The related words are WordNet 3.0's, reduced to related.txt (related_gen_test.go; docs/mcp.md
// says where they came from, how they were measured and the licence, WORDNET-LICENSE), and the
// neighbours of a distributional thesaurus of software prose (distrib_gen_test.go,
// testdata/distrib.txt).

//go:generate go test -run TestRelatedTableGenerated -update-related .

// relatedTable is one line per stem, sorted: "stem close... | loose... | synonyms... | near...",
// every word as Words gives it, kept by the related word: close are the words of which the stem
// is a close word, loose those of which it is a loose word, synonyms its own close words, near its
// distributional neighbours and the words of which it is one (neither close nor loose). A word's
// close words are the synonyms, derived forms and (of an adjective) similar words of its most
// frequent senses and the hand-written software vocabulary; its loose words are the words of
// those senses' definitions and phrases.
//
//go:embed related.txt
var relatedTable string

// The weights of a related word's match, against the word's own (1).
const (
	weightSynonym = 0.4  // a query word's synonym
	weightClose   = 0.4  // a query word as a document word's close word
	weightLoose   = 0.15 // a query word as a document word's loose word
	weightNear    = 0.15 // a query word as a document word's distributional neighbour, as loose
)

// relatedMinTF is the least weighted frequency of a document's word that stands for its related
// words: a word of its id, name or arguments, or one its description repeats. Measured: every
// word of the descriptions too put one fewer of the agent's queries and one fewer of the held-out
// ones in the top 3 (a description's passing words bring their definitions' noise).
const relatedMinTF = weightArg

// related returns stem's line of the table, by binary search over its lines: nothing is read or
// built at start.
func related(stem string) (close, loose, syn, near []string) {
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
			l, rest, _ := strings.Cut(rest, "|")
			syn, near, _ := strings.Cut(rest, "|")
			return strings.Fields(c), strings.Fields(l), strings.Fields(syn), strings.Fields(near)
		case key < stem:
			lo = end + 1
		default:
			hi = start
		}
	}
	return nil, nil, nil, nil
}

// synonyms returns stem's own close words.
func synonyms(stem string) []string {
	_, _, syn, _ := related(stem)
	return syn
}

// matchRelated raises each document's wordScores to word's related term's BM25 score there, if
// that is more. The related term of a document is in it with the sum over the document's words
// related to word (those of relatedMinTF or more) of the word's frequency (at most a name's
// weight) times the relation's weight; its idf is its own (the documents that hold it). A
// document that says word itself does not hold it: it scores word by its own match.
func (ix *Index) matchRelated(word string, touched *[]int32) {
	if ix.relImp == nil {
		ix.relImp = map[string]*impacts{}
	}
	c := ix.relImp[word]
	if c == nil {
		c = &impacts{}
		ix.relImp[word] = c
	}
	for _, p := range ix.impactsFor(ix.relatedPostings(word), c) {
		s := p.s
		if ix.wordScores[p.doc] == 0 {
			*touched = append(*touched, p.doc)
		}
		ix.wordScores[p.doc] = max(ix.wordScores[p.doc], s)
	}
}

// relatedPostings returns word's related term's postings, in no particular order: made from the
// postings of the index's words related to word when a query first needs them, and kept as the
// decoded postings are (a long-lived turn searches the same index many times).
func (ix *Index) relatedPostings(word string) []posting {
	if ps, ok := ix.related[word]; ok {
		return ps
	}
	if ix.relTF == nil {
		ix.relTF = make([]float32, ix.n)
		ix.related = map[string][]posting{}
	}
	close, loose, _, near := related(word)
	docs := ix.relDocs[:0]
	if t, ok := slices.BinarySearch(ix.terms, word); ok {
		for _, p := range ix.postings(t) { // decoded already: the word's own match came first
			ix.relTF[p.doc] = -1 // says the word
			docs = append(docs, p.doc)
		}
	}
	says := len(docs)
	for tier, ws := range [3][]string{close, loose, near} {
		weight := [3]float32{weightClose, weightLoose, weightNear}[tier]
		for _, w := range ws {
			t, ok := slices.BinarySearch(ix.terms, w)
			if !ok {
				continue
			}
			r := ix.strong(t) // the weak are below relatedMinTF
			for p, ok := r.next(); ok; p, ok = r.next() {
				if ix.relTF[p.doc] < 0 {
					continue
				}
				if ix.relTF[p.doc] == 0 {
					docs = append(docs, p.doc)
				}
				ix.relTF[p.doc] += min(p.tf, weightName) * weight
			}
		}
	}
	ps := make([]posting, 0, len(docs)-says)
	for i, d := range docs {
		if i >= says {
			ps = append(ps, posting{d, ix.relTF[d]})
		}
		ix.relTF[d] = 0
	}
	ix.related[word], ix.relDocs = ps, docs
	return ps
}
