package capability

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkFaceInvoke is one spear_invoke of a kept provider's echo, as the MCP face makes it
// on a long-lived turn (bench's face-invoke row measures it whole, through spear-mcp).
func BenchmarkFaceInvoke(b *testing.B) {
	bin := buildShell(b)
	f := newFixture(b, obj("keep_providers", 300), provSpec{id: "p", entry: obj("read", []string{"echo"}),
		fake: obj("tools", []any{echoTool("echo")})})
	s := f.faceSettings(bin)
	tn := NewTurn(s)
	defer endKeptTurn(s, tn)
	ctx := context.Background()
	if _, r := tn.FaceInvoke(ctx, "p/echo", `{"message":"warm"}`); r != nil {
		b.Fatalf("warm: %+v", r)
	}
	for b.Loop() {
		if _, r := tn.FaceInvoke(ctx, "p/echo", `{"message":"x"}`); r != nil {
			b.Fatalf("invoke: %+v", r)
		}
	}
}

// BenchmarkFaceSearch is one spear_search of a family of 10,000 on a long-lived turn whose
// index is built (bench's face-search row measures it whole, through spear-mcp).
func BenchmarkFaceSearch(b *testing.B) {
	words := []string{"record", "ticket", "invoice", "message", "project", "report", "customer", "order", "alert", "schedule"}
	var tools []any
	for i := range 10000 {
		w1, w2, w3 := words[i%10], words[(i/10)%10], words[(i/100)%10]
		tools = append(tools, obj("name", fmt.Sprintf("s%d_%s_%s", i/100, w1, w2),
			"description", fmt.Sprintf("Finds each %s of the %s service whose %s matches a free-form query.\nReturns JSON.", w1, w2, w3),
			"inputSchema", obj("type", "object", "properties", obj("q", obj("type", "string")))))
	}
	f := newFixture(b, obj("keep_providers", 0), provSpec{id: "p", fake: obj("tools", tools)})
	tn := NewTurn(f.settings())
	defer tn.Close("bench")
	ctx := context.Background()
	query := []string{"customer", "invoice", "schedule", "free-form"}
	if p, r := tn.FaceSearch(ctx, query, 20, ""); r != nil || p.Admitted != 10000 || len(p.Entries) != 20 {
		b.Fatalf("warm: %+v %+v", p, r)
	}
	for b.Loop() {
		if _, r := tn.FaceSearch(ctx, query, 20, ""); r != nil {
			b.Fatalf("search: %+v", r)
		}
	}
}
