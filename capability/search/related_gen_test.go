package search

// The related-words table's generator: it reduces WordNet 3.0 (Debian's wordnet-base,
// /usr/share/wordnet), the hand-written software vocabulary of testdata/software.txt and the
// distributional thesaurus of testdata/distrib.txt (distrib_gen_test.go) to related.txt, one line
// per stem, "stem close... | loose... | synonyms... | near...", sorted, every word folded by Words
// as queries are: the words of which the stem is a close or a loose word, its own close words, and
// its distributional neighbours. `go generate` (or this test with -update-related) writes it;
// without the flag, where WordNet is installed, the test checks that the committed table is what
// it gives.
//
// A word (a single-word lemma of any part of speech) takes its first senses only (WordNet's index
// lists them by how often they were tagged in its corpus: a word's rare senses are where its noise
// is, "folder" a shepherd). Of each sense: close, the sense's other single-word lemmas, the
// lemmas derived from the word (monitor: supervise; surveillance) and, of an adjective, those of
// the senses WordNet gives as similar (small: tiny, little); loose, the words of the sense's
// definition without its examples and of its phrases (monitor: keep, tab, eye, surveil). A
// definition's word found in more than one definition in 200 ("person", "something") says nothing
// and is left out. Broader terms (hypernyms) were measured and left out: they changed no query's
// rank and took 0.9 MB (with the similar adjectives in, they lost queries); so were WordNet's
// other relations (docs/mcp.md, Quality).

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var updateRelated = flag.Bool("update-related", false, "rewrite related.txt from WordNet, testdata/software.txt and testdata/distrib.txt")

// relatedSenses is how many of a word's senses, most frequent first, give it related words.
const relatedSenses = 3

func TestRelatedTableGenerated(t *testing.T) {
	t.Parallel()
	if raceEnabled && !*updateRelated {
		t.Skip("under the race detector: go test without -race checks the table")
	}
	if _, err := os.Stat(filepath.Join(wordNetDir, "data.noun")); err != nil {
		if *updateRelated {
			t.Fatalf("WordNet is needed (apt-get install wordnet-base): %v", err)
		}
		t.Skipf("WordNet is not installed (wordnet-base): %v", err)
	}
	got, err := generateRelated(wordNetDir, "testdata/software.txt", "testdata/distrib.txt", relatedSenses)
	if err != nil {
		t.Fatal(err)
	}
	if *updateRelated {
		if err := os.WriteFile("related.txt", got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if string(got) != relatedTable {
		t.Error("related.txt is not what WordNet, testdata/software.txt and testdata/distrib.txt give (go generate)")
	}
}

// wnSynset is one synset of a data.<pos> file.
type wnSynset struct {
	words []string // lower-cased, phrases joined by "_"
	ptrs  []wnPtr
	gloss string // the definition, without its examples
}

type wnPtr struct {
	sym    string
	target string // pos letter + offset
	src    int    // the source word's number in the synset, 0 for the whole synset
	dst    int
}

// eachEntry calls f with each line of a WordNet file but the licence at its top.
func eachEntry(file string, f func(line string) error) error {
	r, err := os.Open(file)
	if err != nil {
		return err
	}
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line := sc.Text(); !strings.HasPrefix(line, " ") {
			if err := f(line); err != nil {
				return err
			}
		}
	}
	return sc.Err()
}

func readData(dir, pos string, into map[string]*wnSynset) error {
	return eachEntry(filepath.Join(dir, "data."+pos), func(line string) error {
		head, gloss, _ := strings.Cut(line, " | ")
		fs := strings.Fields(head)
		s := &wnSynset{}
		n, _ := strconv.ParseInt(fs[3], 16, 32)
		i := 4
		for range int(n) {
			w := fs[i]
			if j := strings.IndexByte(w, '('); j >= 0 {
				w = w[:j]
			}
			s.words = append(s.words, strings.ToLower(w))
			i += 2
		}
		np, _ := strconv.Atoi(fs[i])
		i++
		for range np {
			st, _ := strconv.ParseUint(fs[i+3], 16, 16)
			s.ptrs = append(s.ptrs, wnPtr{sym: fs[i], target: posLetter(fs[i+2]) + fs[i+1], src: int(st >> 8), dst: int(st & 0xff)})
			i += 4
		}
		if j := strings.IndexByte(gloss, '"'); j >= 0 {
			gloss = gloss[:j]
		}
		s.gloss = gloss
		into[posLetter(fs[2])+fs[0]] = s
		return nil
	})
}

// posLetter folds WordNet's satellite adjectives (s) into adjectives (a).
func posLetter(p string) string {
	if p == "s" {
		return "a"
	}
	return p
}

func generateRelated(dir, hand, distrib string, senses int) ([]byte, error) {
	syn := map[string]*wnSynset{}
	for _, pos := range []string{"noun", "verb", "adj", "adv"} {
		if err := readData(dir, pos, syn); err != nil {
			return nil, err
		}
	}
	// A gloss word found in very many glosses ("person", "something", "make") says nothing.
	df := map[string]int{}
	for _, s := range syn {
		for _, w := range slices.Compact(slices.Sorted(slices.Values(Words(s.gloss)))) {
			df[w]++
		}
	}
	common := len(syn) / 200
	close, loose := table{}, table{}
	addWords := func(t table, key, text string) {
		for _, w := range Words(text) {
			if len(w) >= 2 && df[w] <= common {
				t.link(key, w)
			}
		}
	}
	for _, pos := range []string{"noun", "verb", "adj", "adv"} {
		err := eachEntry(filepath.Join(dir, "index."+pos), func(line string) error {
			fields := strings.Fields(line)
			lemma := fields[0]
			key := stemOf(lemma)
			if !isWord(lemma) || key == "" {
				return nil
			}
			nsyn, _ := strconv.Atoi(fields[2])
			offs := fields[len(fields)-nsyn:]
			for _, off := range offs[:min(senses, len(offs))] {
				s := syn[posLetter(fields[1])+off]
				if s == nil {
					return fmt.Errorf("index.%s: %q: no synset at %s", pos, lemma, off)
				}
				me := slices.Index(s.words, lemma) + 1
				for _, w := range s.words {
					if isWord(w) {
						if st := stemOf(w); st != "" {
							close.link(key, st)
						}
					} else {
						addWords(loose, key, strings.ReplaceAll(w, "_", " "))
					}
				}
				addWords(loose, key, s.gloss)
				for _, p := range s.ptrs {
					t := syn[p.target]
					if t == nil {
						continue
					}
					// an adjective's similar senses (WordNet's clusters: tiny, small; done,
					// finished, completed)
					if p.sym == "&" {
						for _, w := range t.words {
							if isWord(w) {
								if st := stemOf(w); st != "" {
									close.link(key, st)
								}
							}
						}
					}
					// a derived form of this word (or of the whole sense)
					if p.sym == "+" && (p.src == me || p.src == 0) && p.dst > 0 && p.dst <= len(t.words) {
						if w := t.words[p.dst-1]; isWord(w) {
							if st := stemOf(w); st != "" {
								close.link(key, st)
							}
						}
					}
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if err := readHand(close, hand); err != nil {
		return nil, err
	}
	near, err := readNear(distrib)
	if err != nil {
		return nil, err
	}
	// The table is kept the other way round, by the related word: a query's word finds in one
	// look-up the words whose related words hold it (the words of the family a query reaches).
	// A query's word's synonyms are its own close words, the third field. The distributional
	// neighbours, the fourth, are linked both ways: no inverse is needed.
	synonymsOf := close
	close, loose = close.inverse(), loose.inverse()
	keys := make([]string, 0, len(close)+len(loose))
	for _, t := range []table{close, loose, synonymsOf, near} {
		for k := range t {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	var b bytes.Buffer
	for _, k := range keys {
		var c, l, n []string
		for w := range close[k] {
			c = append(c, w)
		}
		for w := range loose[k] {
			if !close[k][w] && w != k {
				l = append(l, w)
			}
		}
		for w := range near[k] {
			if !close[k][w] && !loose[k][w] && !synonymsOf[k][w] {
				n = append(n, w)
			}
		}
		syn := slices.Sorted(maps.Keys(synonymsOf[k]))
		if len(c)+len(l)+len(n)+len(syn) == 0 {
			continue
		}
		slices.Sort(c)
		slices.Sort(l)
		slices.Sort(n)
		b.WriteString(k)
		for i, ws := range [][]string{c, l, syn, n} {
			if i > 0 {
				b.WriteString(" |")
			}
			for _, w := range ws {
				b.WriteString(" " + w)
			}
		}
		b.WriteString("\n")
	}
	return b.Bytes(), nil
}

// raceEnabled is set by race_test.go.
var raceEnabled bool

// wordNetDir is where Debian's wordnet-base puts WordNet 3.0's database.
const wordNetDir = "/usr/share/wordnet"

// table is each stem's related words.
type table map[string]map[string]bool

func (t table) link(a, b string) {
	if a == b {
		return
	}
	if t[a] == nil {
		t[a] = map[string]bool{}
	}
	t[a][b] = true
}

// inverse links b to a wherever t links a to b.
func (t table) inverse() table {
	inv := table{}
	for a, bs := range t {
		for b := range bs {
			inv.link(b, a)
		}
	}
	return inv
}

// stemOf is w's one index term, or "" when w is not one word (a stop word, several parts).
func stemOf(w string) string {
	ws := Words(w)
	if len(ws) != 1 || len(ws[0]) < 2 {
		return ""
	}
	return ws[0]
}

// isWord says whether a lemma is one plain word (WordNet joins a phrase's words with "_").
func isWord(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return len(w) >= 2
}

// readNear reads the distributional thesaurus (distrib_gen_test.go), linking each word with its
// neighbours both ways.
func readNear(file string) (table, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	t := table{}
	for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		fs := strings.Fields(line)
		if len(fs) < 2 {
			return nil, fmt.Errorf("%s:%d: want a word and its neighbours", file, i+1)
		}
		for _, w := range fs[1:] {
			t.link(fs[0], w)
			t.link(w, fs[0])
		}
	}
	return t, nil
}

// readHand links every word of each line of the hand-written table with every other.
func readHand(t table, file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	for i, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var stems []string
		for _, w := range strings.Fields(line) {
			s := stemOf(w)
			if s == "" {
				return fmt.Errorf("%s:%d: %q is not one word", file, i+1, w)
			}
			stems = append(stems, s)
		}
		for _, a := range stems {
			for _, b := range stems {
				t.link(a, b)
			}
		}
	}
	return nil
}
