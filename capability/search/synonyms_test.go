package search

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// The table is what synonyms' binary search needs: one line per key, sorted, each key once,
// every word as Words gives it, a newline at the end.
func TestSynonymTable(t *testing.T) {
	t.Parallel()
	if !strings.HasSuffix(synonymTable, "\n") {
		t.Fatal("the table does not end with a newline")
	}
	lines := strings.Split(strings.TrimSuffix(synonymTable, "\n"), "\n")
	prev := ""
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) < 2 || strings.Join(f, " ") != l {
			t.Fatalf("line %d %q: want a key and its synonyms, one space apart", i+1, l)
		}
		if f[0] <= prev {
			t.Fatalf("line %d: key %q after %q", i+1, f[0], prev)
		}
		prev = f[0]
		if i%97 == 0 || i == len(lines)-1 { // every key is found; a sample keeps this quick
			if got := synonyms(f[0]); !slices.Equal(got, f[1:]) {
				t.Fatalf("synonyms(%q) = %q, want %q", f[0], got, f[1:])
			}
		}
	}
	for _, tt := range []struct{ word, want string }{
		{"picture", "image"}, // WordNet
		{"erase", "delete"},
		{"folder", "directory"}, // the hand-written table
		{"repo", "repository"},
		{"repository", "repo"},
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
		if got := ids(docs, ix.Rank(tt.query)); !slices.Equal(got, tt.want) {
			t.Errorf("Rank(%q) = %q, want %q", tt.query, got, tt.want)
		}
	}
	// the same term in the same document: as a synonym it counts weightSynonym of its own match
	own, syn := ix.Rank("picture")[0], ix.Rank("image")[1]
	if own.Doc != syn.Doc || math.Abs(syn.Score-own.Score*weightSynonym) > 1e-12 {
		t.Errorf("a synonym's match scores %v, want %v (the word's own %v times %v)", syn, own.Score*weightSynonym, own, weightSynonym)
	}
	// a word counts once per document: its synonyms' match does not add to its own
	both := Build([]Doc{
		{ID: "q/x", Name: "x", Description: "erase delete"},
		{ID: "q/y", Name: "y", Description: "erase erase"},
		{ID: "q/z", Name: "z", Description: "delete delete"},
	})
	if got := both.Rank("erase"); len(got) != 3 || got[0].Doc != 1 || got[1].Doc != 0 || got[1].Score >= got[0].Score {
		t.Errorf("Rank(erase) over erase+delete, erase+erase, delete+delete = %v, want y, x, z", got)
	}
}
