package keeper

import (
	"context"
	"encoding/json"
	"syscall"
	"testing"
	"time"

	"github.com/spear-shell/spear-shell/capability/providers"
)

// BenchmarkKeeperCall is one guarded call through the keeper, in this process, as the face
// makes it (docs/bench.md, face-invoke): the client's Conn, the keeper's connection and call,
// and the provider's pipe. Its CPU and allocations a call are the hop's own work, less noisy
// than the bench's wall time.
func BenchmarkKeeperCall(b *testing.B) {
	dir := b.TempDir()
	s := oneProviderTurn(b, dir, map[string]any{"tools": []any{
		map[string]any{"name": "echo", "inputSchema": map[string]any{"type": "object"}, "behavior": map[string]any{"echo": true}},
	}})
	_, _, c, served := startKept(b, dir, s)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour) // the face gives every call a deadline
	defer cancel()
	_, listing, err := c.(providers.Definer).Definitions(ctx, []string{"echo"})
	if err != nil {
		b.Fatal(err)
	}
	g := c.(providers.GuardedCaller)
	args := json.RawMessage(`{"message":"found"}`)
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		res, moved, err := g.CallToolIf(ctx, "echo", args, listing.Hash)
		if err != nil || moved != nil || len(res.Content) == 0 {
			b.Fatalf("call: %+v %+v %v", res, moved, err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
	c.Close()
	endTurn(b, s, served)
}

// cpuTime is this process's CPU time so far, user and system: the client's, the keeper's.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
