package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/spear-shell/spear-shell/bench/internal/catalog"
	"github.com/spear-shell/spear-shell/capability/search"
)

// qualityFamily is the family the labelled queries are judged over (SPEC 13, Quality): the
// benchmark provider's catalog ("bench", with its echo tool) and the real servers' tools, in
// the family's order (sorted by id).
func qualityFamily(t testing.TB) []search.Doc {
	t.Helper()
	docs := []search.Doc{{ID: "bench/echo", Name: "echo",
		Description: "Echo back the message it is given.\nUseful to check that the provider answers.", Args: []string{"message"}}}
	for _, tool := range catalog.Tools() {
		d := search.Doc{ID: "bench/" + tool.Name, Name: tool.Name, Description: tool.Description}
		for _, a := range tool.Args {
			d.Args = append(d.Args, a.Name)
		}
		docs = append(docs, d)
	}
	b, err := os.ReadFile("../testdata/search/real-tools.json")
	if err != nil {
		t.Fatal(err)
	}
	var real []struct {
		Provider, Name, Description string
		Args                        []string
	}
	if err := json.Unmarshal(b, &real); err != nil {
		t.Fatal(err)
	}
	for _, r := range real {
		docs = append(docs, search.Doc{ID: r.Provider + "/" + r.Name, Name: r.Name, Description: r.Description, Args: r.Args})
	}
	sort.Slice(docs, func(i, j int) bool { return docs[i].ID < docs[j].ID })
	return docs
}

type labelled struct {
	Query, Want string
}

func labelledQueries(t testing.TB, file string) []labelled {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Queries []labelled }
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f.Queries
}

// The quality targets (SPEC 13, Quality), each wanted capability in the top 3 of the family:
// queries.json, written against the catalog, for at least 90% of its queries; agent-queries.json
// (issue 27), an agent's words over the real servers' tools, for at least 92% (not met: its floor
// and the held-out set's are what the ranker reaches, so that a change that loses ground fails).
// No query holds a word of its target's id or name.
func TestSearchQuality(t *testing.T) {
	t.Parallel()
	docs := qualityFamily(t)
	if len(docs) < 10000 {
		t.Fatalf("family of %d, want at least 10,000", len(docs))
	}
	ix := search.Build(docs)
	for _, set := range []struct {
		file     string
		min, pct int
	}{
		{"../testdata/search/queries.json", 30, 90},
		// The target is 92% (issue 27): synonyms took it from 54.7% to 66.0%, WordNet's related
		// words (definitions, derived forms) to 79.2%, argument names out of a tool's length and
		// "every" and the indefinite pronouns as stop words to 81.1%, a distributional thesaurus
		// of software prose to 84.9%; what is left is paraphrase that no dictionary bridges
		// (docs/mcp.md, Quality).
		{"../testdata/search/agent-queries.json", 40, 84},
		// held out: written before the related words were tried, 64.0% -> 72.0% -> 80.0% -> 84.0% -> 88.0% (docs/mcp.md)
		{"../testdata/search/agent-queries-heldout.json", 20, 88},
		// held out again: written before the distributional thesaurus and the ranking changes
		// of its round were tried, committed with its baseline 23 of 46 (50.0%); 27 of 46 (58.7%) now (docs/mcp.md)
		{"../testdata/search/agent-queries-heldout2.json", 30, 58},
	} {
		t.Run(filepath.Base(set.file), func(t *testing.T) {
			qs := labelledQueries(t, set.file)
			if len(qs) < set.min {
				t.Fatalf("%d labelled queries, want at least %d", len(qs), set.min)
			}
			top3 := topThree(t, docs, ix, qs)
			pct := float64(top3) * 100 / float64(len(qs))
			t.Logf("top 3: %d of %d (%.1f%%)", top3, len(qs), pct)
			if pct < float64(set.pct) {
				t.Errorf("top 3 for %.1f%% of the labelled queries, want at least %d%%", pct, set.pct)
			}
		})
	}
}

// topThree counts the queries whose target ranks in the top 3, logging the others.
func topThree(t *testing.T, docs []search.Doc, ix *search.Index, qs []labelled) int {
	pos := map[string]int{}
	for i, d := range docs {
		pos[d.ID] = i
	}
	top3 := 0
	for _, q := range qs {
		want, ok := pos[q.Want]
		if !ok {
			t.Errorf("%q: wanted %s is not in the family", q.Query, q.Want)
			continue
		}
		if shared := sharedWords(q.Query, q.Want); len(shared) > 0 {
			t.Errorf("%q names its target %s (%v)", q.Query, q.Want, shared)
		}
		hits := ix.Rank(q.Query)
		rank := slices.IndexFunc(hits, func(h search.Hit) bool { return h.Doc == want })
		if rank >= 0 && rank < 3 {
			top3++
			continue
		}
		var got []string
		for _, h := range hits[:min(3, len(hits))] {
			got = append(got, fmt.Sprintf("%s %.2f", docs[h.Doc].ID, h.Score))
		}
		t.Logf("%q: %s at rank %d; top: %s", q.Query, q.Want, rank+1, strings.Join(got, ", "))
	}
	return top3
}

func sharedWords(query, id string) []string {
	named := map[string]bool{}
	for _, w := range search.Words(id) {
		named[w] = true
	}
	var shared []string
	for _, w := range search.Words(query) {
		if named[w] {
			shared = append(shared, w)
		}
	}
	return shared
}

// BenchmarkWarmPage is a warm turn's search over the quality family (the MCP face's, which
// searches one index many times): the benchmark's query (familyQuery), a page of 20.
func BenchmarkWarmPage(b *testing.B) {
	ix := search.Build(qualityFamily(b))
	if _, err := ix.Page(familyQuery, 20, "", "", nil); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := ix.Page(familyQuery, 20, "", "", nil); err != nil {
			b.Fatal(err)
		}
	}
}
