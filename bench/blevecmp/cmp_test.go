// Package blevecmp measures bleve's in-memory index against capability/search on the
// benchmark catalog, side by side: the measurement that decided the ranker (docs/mcp.md). It is
// a module of its own so that the product never links bleve.
//
//	cd bench/blevecmp && go test -bench . -benchtime 5x
package blevecmp

import (
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/spear-shell/spear-shell/bench/internal/catalog"
	"github.com/spear-shell/spear-shell/capability/search"
)

type doc struct {
	ID, Name, Description string
	Args                  []string
}

func docs() []doc {
	var out []doc
	for _, t := range catalog.Tools() {
		d := doc{ID: "bench/" + t.Name, Name: t.Name, Description: t.Description}
		for _, a := range t.Args {
			d.Args = append(d.Args, a.Name)
		}
		out = append(out, d)
	}
	return out
}

const query = "erase a bug report from the Atlassian agile tracker for good"

func BenchmarkBuildBleve(b *testing.B) {
	ds := docs()
	for b.Loop() {
		ix, err := bleve.NewMemOnly(bleve.NewIndexMapping())
		if err != nil {
			b.Fatal(err)
		}
		batch := ix.NewBatch()
		for _, d := range ds {
			if err := batch.Index(d.ID, d); err != nil {
				b.Fatal(err)
			}
		}
		if err := ix.Batch(batch); err != nil {
			b.Fatal(err)
		}
		ix.Close()
	}
}

func BenchmarkBuildOwn(b *testing.B) {
	ds := docs()
	for b.Loop() {
		sd := make([]search.Doc, len(ds))
		for i, d := range ds {
			sd[i] = search.Doc{ID: d.ID, Name: d.Name, Description: d.Description, Args: d.Args}
		}
		search.Build(sd)
	}
}

func BenchmarkQueryBleve(b *testing.B) {
	ix, _ := bleve.NewMemOnly(bleve.NewIndexMapping())
	batch := ix.NewBatch()
	for _, d := range docs() {
		batch.Index(d.ID, d)
	}
	ix.Batch(batch)
	defer ix.Close()
	for b.Loop() {
		req := bleve.NewSearchRequestOptions(bleve.NewMatchQuery(query), 20, 0, false)
		if _, err := ix.Search(req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkQueryOwn(b *testing.B) {
	var sd []search.Doc
	for _, d := range docs() {
		sd = append(sd, search.Doc{ID: d.ID, Name: d.Name, Description: d.Description, Args: d.Args})
	}
	ix := search.Build(sd)
	for b.Loop() {
		ix.Rank(query)
	}
}
