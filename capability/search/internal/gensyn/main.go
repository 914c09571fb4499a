// Command gensyn reduces WordNet 3.0 (Debian's wordnet-base, /usr/share/wordnet) and the
// hand-written software vocabulary beside it to capability/search's synonym table: one line per
// stem, "stem syn syn ...", sorted, every word folded by search.Words as queries are. Run by
// go generate in capability/search; its output is committed.
//
// A word takes the synonyms of its most frequent senses only (the first few of WordNet's index,
// which lists them by how often they were tagged in its corpus), single words only: a word's
// rare senses are where its noise is ("folder", a shepherd).
package main

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

	"github.com/spear-shell/spear-shell/capability/search"
)

func main() {
	dir := flag.String("wordnet", "/usr/share/wordnet", "WordNet 3.0's dict directory")
	hand := flag.String("hand", "internal/gensyn/software.txt", "the hand-written synonym groups")
	out := flag.String("o", "synonyms.txt", "the table to write")
	senses := flag.Int("senses", 2, "senses of each word taken, most frequent first")
	flag.Parse()
	if err := run(*dir, *hand, *out, *senses); err != nil {
		fmt.Fprintln(os.Stderr, "gensyn:", err)
		os.Exit(1)
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

func run(dir, hand, out string, senses int) error {
	t := table{}
	for _, pos := range []string{"noun", "verb", "adj"} {
		if err := readPOS(t, dir, pos, senses); err != nil {
			return err
		}
	}
	if err := readHand(t, hand); err != nil {
		return err
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
	return os.WriteFile(out, []byte(b.String()), 0o644)
}

// stemOf is w's one index term, or "" when w is not one word (a stop word, several parts).
func stemOf(w string) string {
	ws := search.Words(w)
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
			o, err := strconv.Atoi(off)
			if err != nil || o >= len(data) {
				return fmt.Errorf("index.%s: %q: bad offset %q", pos, lemma, off)
			}
			end := bytes.IndexByte(data[o:], '\n')
			if end < 0 {
				return fmt.Errorf("data.%s: no line at %d", pos, o)
			}
			for _, w := range synsetWords(string(data[o : o+end])) {
				if isWord(w) {
					if s := stemOf(w); s != "" {
						t.link(st, s)
					}
				}
			}
		}
	}
	return sc.Err()
}

// synsetWords are the lemmas of a data line: offset lex_filenum ss_type w_cnt (hex) word lex_id...
func synsetWords(line string) []string {
	f := strings.Fields(line)
	n, err := strconv.ParseInt(f[3], 16, 32)
	if err != nil {
		return nil
	}
	var ws []string
	for i := range int(n) {
		w := f[4+2*i]
		if j := strings.IndexByte(w, '('); j >= 0 { // adjectives' markers: "big(a)"
			w = w[:j]
		}
		ws = append(ws, strings.ToLower(w))
	}
	return ws
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
