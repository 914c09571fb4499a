package search

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// The table is what related's binary search needs: one line per key, sorted, each key once,
// "key close... | loose... | synonyms... | near...", every word as Words gives it, a newline at
// the end.
func TestRelatedTable(t *testing.T) {
	t.Parallel()
	if !strings.HasSuffix(relatedTable, "\n") {
		t.Fatal("the table does not end with a newline")
	}
	lines := strings.Split(strings.TrimSuffix(relatedTable, "\n"), "\n")
	prev := ""
	for i, l := range lines {
		f := strings.Fields(l)
		var bars []int
		for k, w := range f {
			if w == "|" {
				bars = append(bars, k)
			}
		}
		if len(f) < 5 || len(bars) != 3 || bars[0] < 1 || strings.Join(f, " ") != l {
			t.Fatalf("line %d %q: want a key, the words it is close to, |, those it is loosely related to, |, its synonyms, |, its neighbours, one space apart", i+1, l)
		}
		if f[0] <= prev {
			t.Fatalf("line %d: key %q after %q", i+1, f[0], prev)
		}
		prev = f[0]
		close, loose, syn, near := f[1:bars[0]], f[bars[0]+1:bars[1]], f[bars[1]+1:bars[2]], f[bars[2]+1:]
		if len(close)+len(loose)+len(syn)+len(near) == 0 || slices.Contains(f[1:], f[0]) || slices.ContainsFunc(loose, func(w string) bool { return slices.Contains(close, w) }) ||
			slices.ContainsFunc(near, func(w string) bool { return slices.Contains(close, w) || slices.Contains(loose, w) }) {
			t.Fatalf("line %d %q: no word, the key again, or a close word among the loose ones or either among the neighbours", i+1, l)
		}
		if i%97 == 0 || i == len(lines)-1 { // every key is found; a sample keeps this quick
			c, lo, sy, ne := related(f[0])
			if !slices.Equal(c, close) || !slices.Equal(lo, loose) || !slices.Equal(sy, syn) || !slices.Equal(ne, near) || !slices.Equal(synonyms(f[0]), syn) {
				t.Fatalf("related(%q) = %q, %q, %q, %q, want %q, %q, %q, %q", f[0], c, lo, sy, ne, close, loose, syn, near)
			}
		}
	}
	for _, tt := range []struct{ word, want string }{
		{"picture", "image"}, // WordNet
		{"erase", "delete"},
		{"folder", "directory"}, // the hand-written table
		{"repo", "repository"},
		{"repository", "repo"},
		{"tiny", "small"}, // an adjective's similar senses
		{"done", "finished"},
	} {
		w, s := Words(tt.word)[0], Words(tt.want)[0]
		if !slices.Contains(synonyms(w), s) {
			t.Errorf("synonyms(%q) = %q, want %q among them", w, synonyms(w), s)
		}
	}
	for _, w := range []string{"", "aaaa", "zzzzzz", "imag "} {
		if got := synonyms(w); got != nil {
			t.Errorf("synonyms(%q) = %q, want none", w, got)
		}
	}
}

func TestRankSynonyms(t *testing.T) {
	t.Parallel()
	docs := []Doc{ // of one length each, so that only the words decide
		{ID: "p/one", Name: "one", Description: "Returns an image."},
		{ID: "p/three", Name: "three", Description: "Returns a picture."},
		{ID: "p/two", Name: "two", Description: "Returns a picture."},
		{ID: "r/delete", Name: "delete", Description: "Deletes a record."},
		{ID: "r/erase", Name: "erase", Description: "Erases a record."},
		{ID: "s/dir", Name: "list_directory", Description: "Lists a directory."},
	}
	ix := Build(docs)
	tests := []struct {
		query string
		want  []string
	}{
		// the word's own match first, then its synonyms', ties by id
		{"picture", []string{"p/three", "p/two", "p/one"}},
		{"pictures", []string{"p/three", "p/two", "p/one"}}, // the stem is the word
		{"image", []string{"p/one", "p/three", "p/two"}},
		{"erasing", []string{"r/erase", "r/delete"}},
		{"remove", []string{"r/delete", "r/erase"}},
		{"folder", []string{"s/dir"}}, // the software table
		{"nothing", nil},
	}
	for _, tt := range tests {
		if got := ids(docs, ix.Rank(tt.query)); !ranksFirst(got, tt.want) {
			t.Errorf("Rank(%q) = %q, want %q first", tt.query, got, tt.want)
		}
	}
	// the same term in the same document: as a synonym it counts weightSynonym of its own match
	own, syn := ix.Rank("picture")[0], ix.Rank("image")[1]
	if own.Doc != syn.Doc || math.Abs(syn.Score-own.Score*weightSynonym) > 1e-12 {
		t.Errorf("a synonym's match scores %v, want %v (the word's own %v times %v)", syn, own.Score*weightSynonym, own, weightSynonym)
	}
	// a word counts once per document: its synonyms' match does not add to its own. With as
	// many documents saying "erase" as saying only "delete" (so that neither is the rarer), the
	// one that says the word outranks the one that says its synonym.
	both := Build([]Doc{
		{ID: "q/w", Name: "w", Description: "delete delete"},
		{ID: "q/x", Name: "x", Description: "erase delete"},
		{ID: "q/y", Name: "y", Description: "erase erase"},
		{ID: "q/z", Name: "z", Description: "delete delete"},
	})
	if got := both.Rank("erase"); len(got) != 4 || got[0].Doc != 2 || got[1].Doc != 1 || got[2].Doc != 0 || got[3].Doc != 3 || got[1].Score >= got[0].Score || got[2].Score >= got[1].Score {
		t.Errorf("Rank(erase) over delete+delete, erase+delete, erase+erase, delete+delete = %v, want y, x, w, z", got)
	}
}

// A document's words bring their related words into the index, below them: a tool that says
// "monitor" is found by an agent's "keep an eye on" (WordNet: "keep tabs on; keep an eye on;
// keep under surveillance"), one that says "paper" by "essay", and a tool that says the query's
// word itself still comes first.
func TestRankRelated(t *testing.T) {
	t.Parallel()
	docs := []Doc{
		{ID: "a/create_alert", Name: "create_alert", Description: "Creates an alert."},
		{ID: "m/create_monitor", Name: "create_monitor", Description: "Creates a monitor of a page."},
		{ID: "p/search_papers", Name: "search_papers", Description: "Searches papers."},
		{ID: "s/surveil", Name: "surveil", Description: "Keeps an eye on a page."},
	}
	ix := Build(docs)
	for _, tt := range []struct {
		query string
		want  []string
	}{
		{"surveillance", []string{"s/surveil", "m/create_monitor"}},
		{"eye", []string{"s/surveil", "m/create_monitor"}},
		{"essay", []string{"p/search_papers"}},
	} {
		if got := ids(docs, ix.Rank(tt.query)); !slices.Equal(got, tt.want) {
			t.Errorf("Rank(%q) = %q, want %q", tt.query, got, tt.want)
		}
	}
}

// A document's word stands, faintly, for its distributional neighbours (testdata/distrib.txt):
// software prose uses "wildcard" and "glob" alike, which WordNet does not link.
func TestRankNeighbours(t *testing.T) {
	t.Parallel()
	docs := []Doc{
		{ID: "fs/glob", Name: "glob", Description: "Expands into the paths it matches."},
		{ID: "fs/stat", Name: "stat", Description: "Describes one path."},
	}
	ix := Build(docs)
	if got := ids(docs, ix.Rank("wildcard")); !slices.Equal(got, []string{"fs/glob"}) {
		t.Errorf("Rank(wildcard) = %q, want fs/glob", got)
	}
	_, _, _, near := related("wildcard")
	if !slices.Contains(near, "glob") {
		t.Errorf("wildcard's neighbours %q, want glob among them", near)
	}
}
