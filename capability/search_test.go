package capability

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/spear-shell/spear-shell/policy"
)

func indexFixture() *familyIndex {
	a, b := &prov{cfg: &policy.Provider{ID: "a"}}, &prov{cfg: &policy.Provider{ID: "b"}}
	var tools []*tool
	for i := range 5 {
		p := a
		if i >= 3 {
			p = b
		}
		tools = append(tools, &tool{id: fmt.Sprintf("%s/t%d", p.cfg.ID, i), name: fmt.Sprintf("t%d", i), prov: p,
			desc: fmt.Sprintf("Tool %d reads records.\nSecond line.", i), input: []byte(`{"type":"object","properties":{"key":{}}}`), hash: "h"})
	}
	return familyIndexOf(tools)
}

// The kept index reads back as built, and any damage is an error, never a panic.
func TestFamilyIndexEncoding(t *testing.T) {
	t.Parallel()
	fi := indexFixture()
	b := fi.encode()
	back, err := decodeFamilyIndex(b)
	if err != nil {
		t.Fatal(err)
	}
	if back.n != 5 || !reflect.DeepEqual(back.provs, []string{"a", "b"}) || !reflect.DeepEqual(back.count, []int{3, 2}) || back.salt != fi.salt {
		t.Errorf("decoded %+v", back)
	}
	for doc := range 5 {
		id, line := back.idLine(doc)
		if want := fmt.Sprintf("Tool %d reads records.", doc); line != want || id[2:] != fmt.Sprintf("t%d", doc) || back.provider(doc) != doc/3 {
			t.Errorf("doc %d: %q %q provider %d", doc, id, line, back.provider(doc))
		}
	}
	if got, want := back.ix.Rank("key records"), fi.ix.Rank("key records"); !reflect.DeepEqual(got, want) {
		t.Errorf("ranks %v, built %v", got, want)
	}
	for i := range b {
		if _, err := decodeFamilyIndex(b[:i]); err == nil {
			t.Fatalf("the first %d of %d bytes decoded", i, len(b))
		}
	}
	// Counts that are not the providers' documents (the family's size, admitted, is their
	// sum), even when they add up to the documents, or wrap around to them.
	for _, counts := range [][]int{{4, 1}, {2, 2}, {-1, 6}} {
		bad := *fi
		bad.count = counts
		if _, err := decodeFamilyIndex(bad.encode()); err == nil {
			t.Errorf("counts %v for providers of 3 and 2 documents decoded", counts)
		}
	}
}

func FuzzFamilyIndex(f *testing.F) {
	f.Add(indexFixture().encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		fi, err := decodeFamilyIndex(b)
		if err != nil {
			return
		}
		counts := make([]int, len(fi.provs))
		for doc := range fi.n {
			fi.idLine(doc)
			if fi.provider(doc) >= len(fi.provs) {
				t.Fatalf("doc %d: provider %d of %d", doc, fi.provider(doc), len(fi.provs))
			}
			counts[fi.provider(doc)]++
		}
		if !slices.Equal(counts, fi.count) {
			t.Fatalf("counts %v for providers of %v documents", fi.count, counts)
		}
		fi.ix.Page("records key", 5, "", fi.salt, nil)
	})
}
