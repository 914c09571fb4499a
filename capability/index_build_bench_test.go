package capability

import (
	"fmt"
	"testing"

	"github.com/spear-shell/spear-shell/policy"
)

// BenchmarkFamilyIndexOf builds and encodes the search index of a family of 10,000 (the turn's
// first search pays it once; bench's first-search row measures the whole answer).
func BenchmarkFamilyIndexOf(b *testing.B) {
	p := &prov{cfg: &policy.Provider{ID: "bench"}}
	words := []string{"record", "ticket", "invoice", "message", "project", "report", "customer", "order", "alert", "schedule"}
	var tools []*tool
	for i := range 10000 {
		w1, w2, w3 := words[i%10], words[(i/10)%10], words[(i/100)%10]
		tools = append(tools, &tool{id: fmt.Sprintf("bench/s%d_%s_%s", i/100, w1, w2), name: fmt.Sprintf("s%d_%s_%s", i/100, w1, w2), prov: p,
			desc:  fmt.Sprintf("Finds each %s of the %s service whose %s matches a free-form query.\nReturns JSON.", w1, w2, w3),
			input: []byte(`{"type":"object","properties":{"q":{"type":"string","description":"words to look for"},"max_hits":{"type":"integer"}},"required":["q"]}`), hash: "h"})
	}
	for b.Loop() {
		familyIndexOf(tools).encode()
	}
}
