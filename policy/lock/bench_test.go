package lock

import (
	"fmt"
	"testing"
)

// BenchmarkParse10k: the lock every process of a turn reads, for one provider of 10,000 tools
// (the family size SPEC 13's targets use).
func BenchmarkParse10k(b *testing.B) {
	f := &File{Version: Version}
	p := Provider{ID: "big", Command: []string{"/bin/big"}, Time: "2026-12-07T00:00:00Z"}
	for i := range 10000 {
		def, err := Definition(Def{Name: fmt.Sprintf("t%05d", i), Description: fmt.Sprintf("Tool number %d does one thing well.", i),
			InputSchema: []byte(`{"type":"object","properties":{"message":{"type":"string","description":"what to say"}},"required":["message"]}`)})
		if err != nil {
			b.Fatal(err)
		}
		p.Tools = append(p.Tools, Tool{Name: fmt.Sprintf("t%05d", i), Definition: def, SHA256: Sum([]byte(def))})
	}
	f.Put(p)
	data := f.Marshal()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDefinition10k: the canonical definitions of a listing of 10,000 tools, which a turn
// under a lock computes for every listing it judges; /reference builds them on encoding/json's
// tokens (referenceCanonical), for the ratio.
func BenchmarkDefinition10k(b *testing.B) {
	in := []byte(`{"type":"object","properties":{"message":{"type":"string","description":"what to say"},"count":{"type":"integer","minimum":1}},"required":["message"]}`)
	defs := make([][]byte, 10000)
	for i := range defs {
		defs[i] = []byte(fmt.Sprintf(`{"name":"t%05d","description":"Tool number %d does one thing well.","inputSchema":%s}`, i, i, in))
	}
	for _, c := range []struct {
		name  string
		canon func([]byte) (string, error)
	}{{"canonical", Canonical}, {"reference", referenceCanonical}} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				for _, d := range defs {
					if _, err := c.canon(d); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
