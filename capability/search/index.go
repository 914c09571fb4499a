package search

import (
	"encoding/binary"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// Doc is what a capability gives the index. The family hands its capabilities in its own
// order, sorted by id; that order breaks ties.
type Doc struct {
	ID          string // <provider>/<tool>
	Name        string // the tool's name
	Description string
	Args        []string // the inputSchema's property names
}

// Field weights: a word of the id or name says more about a tool than one of its prose.
const (
	weightName = 3
	weightArg  = 2
	weightDesc = 1
)

// BM25's usual constants.
const (
	k1 = 1.2
	b  = 0.75
)

// Index is the ranked-retrieval index of one family: for every term, the documents that hold
// it with the term's weighted frequency there, and each document's weighted length (of its id,
// name and description: Build says why not its arguments).
type Index struct {
	n      int
	lens   []float32 // weighted length per document
	avgLen float32
	terms  []string // sorted
	offs   []uint32 // where each term's postings start in posts; one more at the end
	mids   []uint32 // where each term's weak postings start in posts (below, after its strong ones)
	posts  []byte   // per term, by document: (document delta, frequency) as uvarints

	// decoded holds the posting lists queries decoded, by term: a long-lived turn (the MCP
	// face's) searches the same index many times. An Index is used by one goroutine at a time.
	decoded [][]posting
	scores  []float64 // a query's scores by document, all zero between queries
	matched []int32   // the documents a query scored, kept for the next query's

	wordScores []float64 // one query word's scores by document (its own or a synonym's), all zero between words
	touched    []int32   // the documents wordScores holds, kept for the next word's
	hits       []Hit     // score's answer, kept for the next query's (Rank and Page copy what they return)

	// impacts holds, by term, each document's BM25 score for it (weight 1), made from the
	// decoded postings and kept once a second query needed them (a -c answer queries once):
	// a query then multiplies, where it divided.
	impacts []impacts // by term
	scratch []impact  // a term's impacts used once, not kept

	related map[string][]posting // by query word, its related term's postings (related.go), once a query needed them
	relImp  map[string]*impacts  // and their scores
	relTF   []float32            // scratch space of relatedPostings, all zero between words
	relDocs []int32              // and the documents it touched, kept for the next word's

	// words holds, by query word, its scores by document (the better of its own match and its
	// related words'), kept from its second use on while keptWords (their total) allows: a
	// query then adds each word's, where it matched the word and its related words again.
	words     map[string]*impacts
	keptWords int
	syns      map[string][]string // by query word, its synonyms
}

type posting struct {
	doc int32
	tf  float32
}

// Frequencies are kept in quarters: the field weights are whole numbers, so nothing is lost.
const tfScale = 4

// Build indexes docs (in the family's order). A large family is read in as many parts as
// there are processors, each into postings of its own, merged in the family's order: the index
// is byte for byte the one a single part makes (TestBuildInParts).
func Build(docs []Doc) *Index {
	parts := 1
	if len(docs) >= buildPartMin {
		parts = min(runtime.GOMAXPROCS(0), 4, len(docs)/buildPartMin)
	}
	return buildInParts(docs, parts)
}

// buildPartMin is the least number of documents a part of Build reads: below it a goroutine
// costs more than it saves.
const buildPartMin = 1000

func buildInParts(docs []Doc, parts int) *Index {
	ix := &Index{n: len(docs), lens: make([]float32, len(docs))}
	postings := make([]map[string][]posting, parts)
	var wg sync.WaitGroup
	for k := range parts {
		from, to := k*len(docs)/parts, (k+1)*len(docs)/parts
		wg.Go(func() { postings[k] = indexPart(docs, from, to, ix.lens) })
	}
	wg.Wait()
	var total float64
	for _, l := range ix.lens {
		total += float64(l)
	}
	if len(docs) > 0 {
		ix.avgLen = float32(total / float64(len(docs)))
	}
	for _, ps := range postings {
		for w := range ps {
			ix.terms = append(ix.terms, w)
		}
	}
	slices.Sort(ix.terms)
	ix.terms = slices.Compact(ix.terms)
	ix.offs = make([]uint32, 0, len(ix.terms)+1)
	ix.mids = make([]uint32, 0, len(ix.terms))
	lists := make([][]posting, parts)
	for _, w := range ix.terms {
		for k, ps := range postings {
			lists[k] = ps[w] // the parts' documents are in order: so are their lists, one after another
		}
		ix.offs = append(ix.offs, uint32(len(ix.posts)))
		ix.posts = appendPostings(ix.posts, lists, true)
		ix.mids = append(ix.mids, uint32(len(ix.posts)))
		ix.posts = appendPostings(ix.posts, lists, false)
	}
	ix.offs = append(ix.offs, uint32(len(ix.posts)))
	return ix
}

// indexPart reads docs[from:to]: each word's postings there, by document, and each document's
// length into lens.
func indexPart(docs []Doc, from, to int, lens []float32) map[string][]posting {
	postings := map[string][]posting{}
	tf := map[string]float32{}
	stems := map[string]string{}
	var words []string
	for i := from; i < to; i++ {
		d := docs[i]
		clear(tf)
		// A document's length, which BM25 holds its matches against, is that of its id, name and
		// description: its argument names are matched but are a list of options rather than
		// prose, and a tool of thirty options says no less about each of its words (BM25F's
		// length normalisation per field, none for this one). Measured: counted in the length,
		// they put one fewer of each held-out set's queries in the top 3 (docs/mcp.md, Quality).
		add := func(text string, weight float32, inLength bool) {
			words = appendWords(words[:0], text, stems)
			for _, w := range words {
				tf[w] += weight
				if inLength {
					lens[i] += weight
				}
			}
		}
		add(d.ID, weightName, true)
		if !strings.HasSuffix(d.ID, "/"+d.Name) {
			add(d.Name, weightName, true)
		}
		add(d.Description, weightDesc, true)
		for _, a := range d.Args {
			add(a, weightArg, false)
		}
		for w, f := range tf {
			postings[w] = append(postings[w], posting{int32(i), f})
		}
	}
	return postings
}

// A term's postings are kept in two lists, each by document: its strong postings, where the
// document holds it at relatedMinTF or more (in its id, name or arguments, or repeated), and
// then the rest. A related word stands only for the strong (related.go), so the postings of
// the many words related to a query's are read without passing over their weak ones, which
// are most of them.
func appendPostings(b []byte, lists [][]posting, strong bool) []byte {
	last := int32(0)
	for _, ps := range lists {
		for _, p := range ps {
			if p.tf >= relatedMinTF != strong {
				continue
			}
			b = binary.AppendUvarint(b, uint64(p.doc-last))
			b = binary.AppendUvarint(b, uint64(p.tf*tfScale))
			last = p.doc
		}
	}
	return b
}

// postings decodes term t's postings. A decoded index is checked here, list by list as
// queries need them (Decode checked the rest): a list that runs past its documents or does
// not decode ends where it stops making sense.
func (ix *Index) postings(t int) []posting {
	if ix.decoded == nil {
		ix.decoded = make([][]posting, len(ix.terms))
	}
	if ps := ix.decoded[t]; ps != nil {
		return ps
	}
	ps := ix.decode(t)
	ix.decoded[t] = ps
	return ps
}

func (ix *Index) decode(t int) []posting {
	out := make([]posting, 0, (ix.offs[t+1]-ix.offs[t])/2) // a posting takes two bytes or more
	for _, r := range ix.lists(t) {
		for p, ok := r.next(); ok; p, ok = r.next() {
			out = append(out, p)
		}
	}
	return out
}

// postingReader walks a list of a term's postings as the index holds them, without decoding them into a
// list: a related word's postings are read once and most are passed over (related.go).
type postingReader struct {
	b   []byte
	doc int64  // the last document read; -1 before the first
	n   uint64 // the index's documents
}

// strong reads term t's strong postings; lists reads them and then the rest.
func (ix *Index) strong(t int) postingReader { return ix.reader(ix.offs[t], ix.mids[t]) }
func (ix *Index) lists(t int) [2]postingReader {
	return [2]postingReader{ix.strong(t), ix.reader(ix.mids[t], ix.offs[t+1])}
}

func (ix *Index) reader(from, to uint32) postingReader {
	return postingReader{b: ix.posts[from:to], doc: -1, n: uint64(ix.n)}
}

// next returns the next posting; false at the end of the list, or where it stops making
// sense (a list that runs past its documents or does not decode ends there).
func (r *postingReader) next() (posting, bool) {
	if len(r.b) == 0 {
		return posting{}, false
	}
	d, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.b = nil
		return posting{}, false
	}
	f, m := binary.Uvarint(r.b[n:])
	base := uint64(max(r.doc, 0)) // below r.n
	// A delta of 0 only starts a list; one that reaches past the last document (compared
	// unsigned: a delta of 2^63 or more does too) ends it.
	if m <= 0 || (d == 0 && r.doc >= 0) || d >= r.n-base {
		r.b = nil
		return posting{}, false
	}
	r.b = r.b[n+m:]
	r.doc = int64(base + d)
	return posting{int32(r.doc), float32(f) / tfScale}, true
}

// impact is a document's BM25 score for one term, at weight 1.
type impact struct {
	doc int32
	s   float64
}

// impactsOf appends to out the scores of ps, the postings of a term held by as many documents:
// its idf times BM25's saturated, length-normalised frequency, as match scores them.
func (ix *Index) impactsOf(out []impact, ps []posting) []impact {
	idf := math.Log(1 + (float64(ix.n)-float64(len(ps))+0.5)/(float64(len(ps))+0.5))
	out = slices.Grow(out, len(ps))
	for _, p := range ps {
		tf := float64(p.tf)
		norm := float64(k1 * (1 - b + b*ix.lens[p.doc]/ix.avgLen)) // BM25's length normalisation
		out = append(out, impact{p.doc, idf * tf * (k1 + 1) / (tf + norm)})
	}
	return out
}

// impacts are a term's scores: kept from their second use on, made in scratch space the first.
type impacts struct {
	kept []impact
	used bool
}

// impactsFor returns the impacts of postings ps, whose scores c keeps.
func (ix *Index) impactsFor(ps []posting, c *impacts) []impact {
	switch {
	case c.kept != nil:
	case c.used:
		c.kept = ix.impactsOf(make([]impact, 0, len(ps)), ps)
	default:
		c.used = true
		ix.scratch = ix.impactsOf(ix.scratch[:0], ps)
		return ix.scratch
	}
	return c.kept
}

// Len is the number of documents indexed.
func (ix *Index) Len() int { return ix.n }

// Hit is one matching document, by its position in the family.
type Hit struct {
	Doc   int
	Score float64
}

// Rank returns every document that holds any word of query, best first, ties by position.
// A query with no word (only stop words or punctuation) matches nothing.
func (ix *Index) Rank(query string) []Hit {
	hits := slices.Clone(ix.score(Words(query)))
	slices.SortFunc(hits, better)
	return hits
}

// better orders hits best first, ties by position (the family's order, by id).
func better(a, b Hit) int {
	switch {
	case a.Score > b.Score:
		return -1
	case a.Score < b.Score:
		return 1
	}
	return int(a.Doc - b.Doc)
}

// score returns every document that holds any of words (a query's, as Words gives them) or a
// synonym of one, with its BM25 score, in no particular order. Each word counts once per
// document: the better of its own match and its synonyms' (weighted below it), so that a word
// with many synonyms does not outweigh one with few.
func (ix *Index) score(words []string) []Hit {
	words = slices.Compact(slices.Sorted(slices.Values(words)))
	if ix.scores == nil { // room for every document at once: a common word's matches are most of them
		ix.scores = make([]float64, ix.n)
		ix.wordScores = make([]float64, ix.n)
		ix.matched = make([]int32, 0, ix.n)
		ix.touched = make([]int32, 0, ix.n)
	}
	scores, wordScores := ix.scores, ix.wordScores
	matched := ix.matched[:0]
	for _, w := range words {
		syns := ix.synonyms(w)
		// A word's scores are its own, its related term's and those of its synonyms that are
		// not words of the query: the same for every query in which none is, so those are kept.
		var kept *impacts
		if !slices.ContainsFunc(syns, func(s string) bool { _, isWord := slices.BinarySearch(words, s); return isWord }) {
			kept = ix.wordImpacts(w)
		}
		if kept != nil && kept.kept != nil {
			for _, p := range kept.kept {
				if scores[p.doc] == 0 {
					matched = append(matched, p.doc)
				}
				scores[p.doc] += p.s
			}
			continue
		}
		touched := ix.touched[:0]
		ix.match(w, 1, &touched)
		ix.matchRelated(w, &touched)
		for _, syn := range syns {
			if _, isWord := slices.BinarySearch(words, syn); !isWord {
				ix.match(syn, weightSynonym, &touched)
			}
		}
		if kept != nil {
			ix.keep(kept, touched)
		}
		for _, d := range touched {
			if scores[d] == 0 {
				matched = append(matched, d)
			}
			scores[d] += wordScores[d]
			wordScores[d] = 0
		}
		ix.touched = touched
	}
	hits := slices.Grow(ix.hits[:0], len(matched))
	for _, d := range matched {
		hits = append(hits, Hit{int(d), scores[d]})
		scores[d] = 0
	}
	ix.matched, ix.hits = matched, hits
	return hits
}

// maxKeptWordImpacts bounds the word scores an index keeps (wordImpacts): 4 MiB, room for the
// scores of dozens of common words in a family of 10,000 (the MCP face keeps up to four turns,
// each with its own index). Words past it are scored anew each time.
const maxKeptWordImpacts = 1 << 18

// wordImpacts returns word's kept scores (impacts.kept nil until its second use, as a term's),
// or nil when the index keeps no more.
func (ix *Index) wordImpacts(word string) *impacts {
	c := ix.words[word]
	if c == nil {
		if len(ix.words) >= maxKeptWordImpacts/64 || ix.keptWords >= maxKeptWordImpacts {
			return nil // the words seen are bounded too
		}
		if ix.words == nil {
			ix.words = map[string]*impacts{}
		}
		c = &impacts{}
		ix.words[word] = c
	}
	return c
}

// keep keeps a word's scores, as wordScores holds them for the documents touched, from the
// word's second use on, while there is room.
func (ix *Index) keep(c *impacts, touched []int32) {
	if !c.used {
		c.used = true
		return
	}
	if ix.keptWords+len(touched) > maxKeptWordImpacts {
		return
	}
	c.kept = make([]impact, len(touched))
	for i, d := range touched {
		c.kept[i] = impact{d, ix.wordScores[d]}
	}
	ix.keptWords += len(touched)
}

// synonyms returns stem's synonyms (related.go), read from the table once per index.
func (ix *Index) synonyms(stem string) []string {
	if syns, ok := ix.syns[stem]; ok {
		return syns
	}
	if ix.syns == nil {
		ix.syns = map[string][]string{}
	}
	syns := synonyms(stem)
	ix.syns[stem] = syns
	return syns
}

// match raises each document's wordScores to term's BM25 score there times weight, if that is
// more, appending the documents it scored first to touched. A synonym keeps its own idf: one
// rarer than the word may outrank a common word's own match, as a rare word outranks a common
// one in BM25 (measured: holding it to the word's idf put 3 fewer of the agent's queries in the
// top 3).
func (ix *Index) match(term string, weight float64, touched *[]int32) {
	t, ok := slices.BinarySearch(ix.terms, term)
	if !ok {
		return
	}
	if ix.impacts == nil {
		ix.impacts = make([]impacts, len(ix.terms))
	}
	for _, p := range ix.impactsFor(ix.postings(t), &ix.impacts[t]) {
		s := weight * p.s
		if ix.wordScores[p.doc] == 0 {
			*touched = append(*touched, p.doc)
		}
		ix.wordScores[p.doc] = max(ix.wordScores[p.doc], s)
	}
}

// best returns the first k of hits in Rank's order, without sorting the rest.
func best(hits []Hit, k int) []Hit {
	if k <= 0 {
		return hits[:0]
	}
	if k >= len(hits)/4 {
		slices.SortFunc(hits, better)
		return hits[:min(k, len(hits))]
	}
	top := make([]Hit, 0, k+1)
	for _, h := range hits {
		if len(top) == k && better(h, top[k-1]) >= 0 {
			continue
		}
		i, _ := slices.BinarySearchFunc(top, h, better)
		top = slices.Insert(top, i, h)
		if len(top) > k {
			top = top[:k]
		}
	}
	return top
}
