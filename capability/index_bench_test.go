package capability

import (
	"fmt"
	"testing"
)

// benchFamily is a family like tools-10k's: 20 providers of 500 tools each.
func benchFamily() []*tool {
	var tools []*tool
	for p := 1; p <= 20; p++ {
		for i := range 500 {
			tools = append(tools, &tool{id: fmt.Sprintf("p%02d/t%04d", p, i), class: "WRITE",
				hash: fmt.Sprintf("%064x", p*1000+i),
				desc: fmt.Sprintf("Tool number %d of the benchmark family: looks up a record by key "+
					"in the project's store and returns it with its history.\nSecond line of the description.", i)})
		}
	}
	return tools
}

// BenchmarkRenderIndex renders the index of a 10,000-capability family.
func BenchmarkRenderIndex(b *testing.B) {
	tools := benchFamily()
	l := &Listing{Mode: "index"}
	for _, tl := range tools {
		l.Entries = append(l.Entries, Entry{ID: tl.id, Class: tl.class, Description: tl.desc})
	}
	for b.Loop() {
		(&answer{}).renderListing(l)
	}
}
