package search

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
)

func TestWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
	}{
		{"read_text_file", []string{"read", "text", "file"}},
		{"get-sum", []string{"get", "sum"}},
		{"readFile", []string{"read", "file"}},
		{"HTTPServer.start", []string{"http", "server", "start"}},
		{"s3/putObject2x", []string{"s3", "put", "object2x"}},
		{"Erases the entities", []string{"eras", "entiti"}},
		{"erase erased erasing", []string{"eras", "eras", "eras"}},
		{"invite invitation", []string{"invit", "invit"}},
		{"données Über", []string{"données", "über"}},
		{"", nil},
		{"the of a", nil},
		{"every page, everything", []string{"page"}},
	}
	for _, tt := range tests {
		if got := Words(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Words(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func family() []Doc {
	return []Doc{
		{ID: "fs/move_file", Name: "move_file", Description: "Move or rename files and directories in one step.", Args: []string{"source", "destination"}},
		{ID: "fs/read_file", Name: "read_file", Description: "Read a whole file as text.", Args: []string{"path"}},
		{ID: "notes/a", Name: "a", Description: "Same words."},
		{ID: "notes/b", Name: "b", Description: "Same words."},
		{ID: "notes/c", Name: "c", Description: "Same words."},
		{ID: "notes/search", Name: "search", Description: "Finds notes by text.", Args: []string{"query"}},
	}
}

func ids(docs []Doc, hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, docs[h.Doc].ID)
	}
	return out
}

func TestRank(t *testing.T) {
	t.Parallel()
	docs := family()
	ix := Build(docs)
	tests := []struct {
		query string
		want  []string
	}{
		{"rename", []string{"fs/move_file"}},
		{"destination", []string{"fs/move_file"}},
		{"file", []string{"fs/read_file", "fs/move_file"}}, // both in name and prose: the shorter first
		{"words", []string{"notes/a", "notes/b", "notes/c"}},
		{"text query", []string{"notes/search", "fs/read_file"}},
		{"xyzzy plugh", nil},
		{"the", nil},
	}
	for _, tt := range tests {
		if got := ids(docs, ix.Rank(tt.query)); !ranksFirst(got, tt.want) {
			t.Errorf("Rank(%q) = %q, want %q first", tt.query, got, tt.want)
		}
	}
}

// A tool's argument names are matched but do not lengthen it: a tool of many options scores
// a word of its name as one of none does.
func TestArgsDoNotLengthen(t *testing.T) {
	t.Parallel()
	var many []string
	for i := range 30 {
		many = append(many, fmt.Sprintf("option%d", i))
	}
	docs := []Doc{
		{ID: "p/fetch", Name: "fetch", Description: "Fetches a page.", Args: many},
		{ID: "q/fetch", Name: "fetch", Description: "Fetches a page."},
		{ID: "c/other", Name: "other", Description: "Something else.", Args: []string{"page"}},
	}
	ix := Build(docs)
	hits := ix.Rank("fetch")
	if len(hits) != 2 || hits[0].Score != hits[1].Score {
		t.Errorf("Rank(fetch) = %v, want p/fetch and q/fetch scored alike", hits)
	}
	if got := ids(docs, ix.Rank("option7")); !slices.Equal(got, []string{"p/fetch"}) {
		t.Errorf("Rank(option7) = %q, want the argument matched", got)
	}
}

func TestEncodeDecode(t *testing.T) {
	t.Parallel()
	docs := family()
	ix := Build(docs)
	b := ix.Encode()
	back, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"rename", "file", "words", "text query", "none"} {
		if got, want := back.Rank(q), ix.Rank(q); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: decoded %v, built %v", q, got, want)
		}
	}
	if !bytes.Equal(back.Encode(), b) {
		t.Error("encoding the decoded index gives other bytes")
	}
	empty, err := Decode(Build(nil).Encode())
	if err != nil || empty.Len() != 0 || len(empty.Rank("x")) != 0 {
		t.Errorf("empty index: %v %v", empty, err)
	}
	for i := range b {
		if _, err := Decode(b[:i]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Decode of the first %d bytes: %v", i, err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(Build(family()).Encode())
	f.Add([]byte(magic))
	f.Fuzz(func(t *testing.T, b []byte) {
		ix, err := Decode(b)
		if err != nil {
			return
		}
		for _, q := range []string{"file", "words", "x", "picture erase"} { // the last by synonyms too
			for _, h := range ix.Rank(q) {
				if h.Doc < 0 || h.Doc >= ix.Len() {
					t.Fatalf("hit %d outside %d documents", h.Doc, ix.Len())
				}
			}
		}
	})
}

func TestPage(t *testing.T) {
	t.Parallel()
	var docs []Doc
	for i := range 45 {
		docs = append(docs, Doc{ID: fmt.Sprintf("p/t%02d", i), Name: fmt.Sprintf("t%02d", i), Description: "a record lookup"})
	}
	ix := Build(docs)
	var all []string
	cursor := ""
	for pages := 0; ; pages++ {
		p, err := ix.Page("record", 20, cursor, "fam1", nil)
		if err != nil {
			t.Fatal(err)
		}
		if p.Matched != 45 {
			t.Fatalf("matched %d", p.Matched)
		}
		all = append(all, ids(docs, p.Hits)...)
		if p.Next == "" {
			break
		}
		again, _ := ix.Page("record", 20, cursor, "fam1", nil)
		if again.Next != p.Next {
			t.Fatalf("cursor not stable: %q then %q", p.Next, again.Next)
		}
		cursor = p.Next
	}
	if len(all) != 45 || !slices.IsSorted(all) {
		t.Errorf("pages gave %q", all)
	}
	first, _ := ix.Page("record", 20, "", "fam1", nil)
	for _, bad := range []struct{ query, cursor, salt string }{
		{"record", "20", "fam1"},
		{"record", "20-00000000", "fam1"},
		{"lookup", first.Next, "fam1"},
		{"record", first.Next, "fam2"},
		{"record", "020" + first.Next[2:], "fam1"},
		{"record", "-1-" + first.Next[3:], "fam1"},
	} {
		if _, err := ix.Page(bad.query, 20, bad.cursor, bad.salt, nil); !errors.Is(err, ErrCursor) {
			t.Errorf("Page(%q, cursor %q, salt %q) = %v, want ErrCursor", bad.query, bad.cursor, bad.salt, err)
		}
	}
	for _, l := range []int{0, 51, -1} {
		if _, err := ix.Page("record", l, "", "", nil); !errors.Is(err, ErrLimit) {
			t.Errorf("limit %d: %v", l, err)
		}
	}
	if _, err := ix.Page("  ", 5, "", "", nil); !errors.Is(err, ErrNoWords) {
		t.Errorf("blank query: %v", err)
	}
	odd, err := ix.Page("record", 5, "", "fam1", func(d int) bool { return d%2 == 1 })
	if err != nil || odd.Matched != 22 || len(odd.Hits) != 5 || docs[odd.Hits[0].Doc].ID != "p/t01" {
		t.Errorf("kept odd documents: %+v %v", odd, err)
	}
}

// best gives the first k of Rank's order, ties by position, whatever k.
func TestBest(t *testing.T) {
	t.Parallel()
	var hits []Hit
	for i := range 300 {
		hits = append(hits, Hit{Doc: (i * 7919) % 300, Score: float64((i * 31) % 17)})
	}
	want := slices.Clone(hits)
	slices.SortFunc(want, better)
	for _, k := range []int{0, 1, 5, 20, 74, 75, 299, 300} {
		if got := best(slices.Clone(hits), k); !slices.Equal(got, want[:k]) {
			t.Errorf("best(%d) = %v, want %v", k, got, want[:k])
		}
	}
}

// ranksFirst says whether got starts with want, the documents that say a query's words: those
// that say only words related to them may follow (related.go). No want is no hit at all.
func ranksFirst(got, want []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	return len(got) >= len(want) && slices.Equal(got[:len(want)], want)
}

// TestKeptScores: an index that has kept its words' scores (a long-lived turn's, from each
// word's second use) ranks every query as a fresh index does, to the last bit of every score:
// queries sharing words, a word whose synonym is another of the query's words (not kept), and
// an index past its bound of kept scores.
func TestKeptScores(t *testing.T) {
	t.Parallel()
	docs := append(family(),
		Doc{ID: "pix/crop", Name: "crop", Description: "Crops an image to a box.", Args: []string{"picture"}},
		Doc{ID: "pix/delete_image", Name: "delete_image", Description: "Deletes a stored photo."})
	queries := []string{"rename file", "file", "move files", "erase picture", "picture image", "image", "text words", "rename file", "same words", "remove photo"}
	for _, bound := range []int{maxKeptWordImpacts, 3} {
		warm := Build(docs)
		warm.keptWords = maxKeptWordImpacts - bound // room for this many
		for round := range 3 {
			for _, q := range queries {
				if got, want := warm.Rank(q), Build(docs).Rank(q); len(want) == 0 || !slices.Equal(got, want) {
					t.Errorf("room %d, round %d, %q: kept %v, fresh %v", bound, round, q, got, want)
				}
			}
		}
		if kept := warm.keptWords - (maxKeptWordImpacts - bound); kept == 0 || warm.keptWords > maxKeptWordImpacts {
			t.Errorf("room %d: %d scores kept, %d in all", bound, kept, warm.keptWords)
		}
	}
}

// TestBuildInParts: an index built in parts is byte for byte the one built whole, lengths, terms
// and postings (strong and weak), however many parts.
func TestBuildInParts(t *testing.T) {
	t.Parallel()
	words := []string{"record", "ticket", "invoice", "message", "report", "customer", "order", "alert", "page", "file"}
	var docs []Doc
	for i := range 3001 {
		w1, w2, w3 := words[i%10], words[(i/10)%10], words[(i/100)%10]
		docs = append(docs, Doc{ID: fmt.Sprintf("p%d/%s_%s", i/500, w1, w2), Name: w1 + "_" + w2,
			Description: fmt.Sprintf("Finds each %s of the %s whose %s matches; %d.", w1, w2, w3, i%7), Args: []string{w3, "q"}})
	}
	whole := buildInParts(docs, 1).Encode()
	for parts := 2; parts <= 5; parts++ {
		if got := buildInParts(docs, parts).Encode(); !bytes.Equal(got, whole) {
			t.Errorf("%d parts: %d bytes, whole %d, not the same", parts, len(got), len(whole))
		}
	}
	if got := Build(docs).Encode(); !bytes.Equal(got, whole) {
		t.Error("Build differs from one part")
	}
	if got, want := buildInParts(family(), 3).Encode(), buildInParts(family(), 1).Encode(); !bytes.Equal(got, want) {
		t.Error("a small family in 3 parts differs")
	}
}
