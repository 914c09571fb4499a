package search

// The synonym table's generator: it reduces WordNet 3.0 (Debian's wordnet-base,
// /usr/share/wordnet) and the hand-written software vocabulary of testdata/software.txt to
// synonyms.txt, one line per stem, "stem syn syn ...", sorted, every word folded by Words as
// queries are. `go generate` (or this test with -update-synonyms) writes it; without the flag,
// where WordNet is installed, the test checks that the committed table is what it gives.
//
// A word takes the synonyms of its most frequent senses only (the first two of WordNet's index,
// which lists them by how often they were tagged in its corpus), single words only, nouns, verbs
// and adjectives: a word's rare senses are where its noise is ("folder", a shepherd).

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// raceEnabled is set by race_test.go.
var raceEnabled bool

var updateSynonyms = flag.Bool("update-synonyms", false, "rewrite synonyms.txt from WordNet and testdata/software.txt")

// wordNetDir is where Debian's wordnet-base puts WordNet 3.0's database.
const wordNetDir = "/usr/share/wordnet"

// senses is how many of a word's senses give it synonyms, most frequent first.
const senses = 2

func TestSynonymTableGenerated(t *testing.T) {
	t.Parallel()
	if raceEnabled && !*updateSynonyms {
		t.Skip("under the race detector: go test without -race checks the table")
	}
	if _, err := os.Stat(filepath.Join(wordNetDir, "data.noun")); err != nil {
		if *updateSynonyms {
			t.Fatalf("WordNet is needed (apt-get install wordnet-base): %v", err)
		}
		t.Skipf("WordNet is not installed (wordnet-base): %v", err)
	}
	got, err := generateSynonyms(wordNetDir, "testdata/software.txt", senses)
	if err != nil {
		t.Fatal(err)
	}
	if *updateSynonyms {
		if err := os.WriteFile("synonyms.txt", got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if string(got) != synonymTable {
		t.Error("synonyms.txt is not what WordNet and testdata/software.txt give (go generate)")
	}
}

// table is each stem's synonyms.
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

func generateSynonyms(dir, hand string, senses int) ([]byte, error) {
	t := table{}
	for _, pos := range []string{"noun", "verb", "adj"} {
		if err := readPOS(t, dir, pos, senses); err != nil {
			return nil, err
		}
	}
	if err := readHand(t, hand); err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		syns := make([]string, 0, len(t[k]))
		for s := range t[k] {
			syns = append(syns, s)
		}
		slices.Sort(syns)
		b.WriteString(k + " " + strings.Join(syns, " ") + "\n")
	}
	return []byte(b.String()), nil
}

// stemOf is w's one index term, or "" when w is not one word (a stop word, several parts).
func stemOf(w string) string {
	ws := Words(w)
	if len(ws) != 1 || len(ws[0]) < 2 {
		return ""
	}
	return ws[0]
}

// readPOS links each single-word lemma of one part of speech with the other single-word lemmas
// of its first senses.
func readPOS(t table, dir, pos string, senses int) error {
	data, err := os.ReadFile(filepath.Join(dir, "data."+pos))
	if err != nil {
		return err
	}
	f, err := os.Open(filepath.Join(dir, "index."+pos))
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, " ") {
			continue // the licence at the top
		}
		fields := strings.Fields(line)
		lemma := fields[0]
		if !isWord(lemma) {
			continue
		}
		st := stemOf(lemma)
		if st == "" {
			continue
		}
		// lemma pos synset_cnt p_cnt [ptr...] sense_cnt tagsense_cnt offsets...
		nsyn, _ := strconv.Atoi(fields[2])
		offs := fields[len(fields)-nsyn:]
		for _, off := range offs[:min(senses, len(offs))] {
			line, err := synsetLine(data, off)
			if err != nil {
				return fmt.Errorf("index.%s: %q: %w", pos, lemma, err)
			}
			for _, w := range synset(line) {
				if s := stemOf(w); s != "" && isWord(w) {
					t.link(st, s)
				}
			}
		}
	}
	return sc.Err()
}

// synsetLine is the line of data (a data.<pos> file) that starts at offset.
func synsetLine(data []byte, offset string) (string, error) {
	o, err := strconv.Atoi(offset)
	if err != nil || o >= len(data) {
		return "", fmt.Errorf("bad synset offset %q", offset)
	}
	end := bytes.IndexByte(data[o:], '\n')
	if end < 0 || !strings.HasPrefix(string(data[o:o+end]), offset+" ") {
		return "", fmt.Errorf("no synset at %s", offset)
	}
	return string(data[o : o+end]), nil
}

// synset reads a data line's words: offset lex_filenum ss_type w_cnt (hex) [word lex_id]... The words are lower-cased, adjectives' markers
// ("big(a)") dropped, phrases kept joined by "_" (isWord refuses them).
func synset(line string) (words []string) {
	f := strings.Fields(line)
	n, err := strconv.ParseInt(f[3], 16, 32)
	if err != nil {
		return nil
	}
	for i := range int(n) {
		w := f[4+2*i]
		if j := strings.IndexByte(w, '('); j >= 0 {
			w = w[:j]
		}
		words = append(words, strings.ToLower(w))
	}
	return words
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
