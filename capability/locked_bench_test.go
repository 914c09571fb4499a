package capability

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/spear-shell/spear-shell/mcpstdio"
	"github.com/spear-shell/spear-shell/policy"
	"github.com/spear-shell/spear-shell/policy/lock"
)

// BenchmarkJudge10k: judging a listing of 10,000 tools without a lock and under one that holds
// them all (every tool put in canonical form and compared).
func BenchmarkJudge10k(b *testing.B) {
	list := make([]mcpstdio.Tool, 10000)
	entry := lock.Provider{ID: "p", Command: []string{"/bin/p"}}
	for i := range list {
		list[i] = mcpstdio.Tool{Name: fmt.Sprintf("t%d", i), Description: fmt.Sprintf("Tool number %d does one thing well.", i),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}}}`)}
		def, err := currentDefinition(list[i])
		if err != nil {
			b.Fatal(err)
		}
		entry.Tools = append(entry.Tools, lock.Tool{Name: list[i].Name, Definition: def, SHA256: lock.Sum([]byte(def))})
	}
	f := &lock.File{Version: lock.Version}
	f.Put(entry)
	cfg := &policy.Provider{ID: "p"}
	for _, c := range []struct {
		name string
		lk   *lock.Provider
	}{{"unlocked", nil}, {"locked", f.Provider("p")}} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				if kept, _ := judgeTools(cfg, false, c.lk, list); len(kept) != len(list) {
					b.Fatalf("kept %d", len(kept))
				}
			}
		})
	}
}
