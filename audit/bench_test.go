package audit

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// A typical outcome record: what a stdin session writes twice per invoke.
var benchEvent = Event{
	Name: EventInvoked, Provider: "github", Capability: "github/get_issue", Class: "READ",
	AuditID: "k3x7q2m9a1b4c5d6e7f8g9h0ij", Duration: 12 * time.Millisecond,
	Args:   json.RawMessage(`{"owner":"spear-shell","repo":"spear-shell","issue_number":5}`),
	Result: "issue 5: the audit trail: every decision recorded, nothing lost, no secret kept",
	Fields: map[string]any{"phase": "outcome"},
}

var benchSecrets = []string{"ghp_0123456789abcdefghij", "postgres://user:pw@db/x"}

func BenchmarkLog(b *testing.B) {
	l, err := Open(filepath.Join(b.TempDir(), "audit.jsonl"), "turn-1", "sess-1", NewRedactor(benchSecrets))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := l.Log(benchEvent); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLogParallel(b *testing.B) {
	l, err := Open(filepath.Join(b.TempDir(), "audit.jsonl"), "turn-1", "sess-1", NewRedactor(benchSecrets))
	if err != nil {
		b.Fatal(err)
	}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := l.Log(benchEvent); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkRecord is the rendering alone, without the file.
func BenchmarkRecord(b *testing.B) {
	l := &Logger{turn: "turn-1", session: "sess-1", red: NewRedactor(benchSecrets)}
	now := time.Now()
	for b.Loop() {
		if _, err := l.record(benchEvent, now); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTurnEndedSynced(b *testing.B) {
	l, err := Open(filepath.Join(b.TempDir(), "audit.jsonl"), "turn-1", "sess-1", nil)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := l.Log(Event{Name: EventTurnEnded}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecordFamily renders a capability_family_selected record of 10,000 capabilities
// (the tools-10k benchmark's), with secrets to look for.
func BenchmarkRecordFamily(b *testing.B) {
	l := &Logger{turn: "turn-1", session: "sess-1", red: NewRedactor(benchSecrets)}
	ids := make([]string, 10000)
	for i := range ids {
		ids[i] = fmt.Sprintf("p%02d/t%04d WRITE", i/500+1, i%500)
	}
	ev := Event{Name: EventFamilySelected, Mode: "index", Fields: map[string]any{
		"project": "bench", "family": ids, "count": len(ids), "bytes": 4000000,
		"providers":   []map[string]any{{"id": "p01", "offered": true, "reason": "scope global", "read_only": false}},
		"unavailable": []string(nil),
	}}
	now := time.Now()
	for b.Loop() {
		if _, err := l.record(ev, now); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLogReserving is a call's intent record: Log plus the room kept for its outcome.
func BenchmarkLogReserving(b *testing.B) {
	l, err := Open(filepath.Join(b.TempDir(), "audit.jsonl"), "turn-1", "sess-1", NewRedactor(benchSecrets))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := l.LogReserving(benchEvent); err != nil {
			b.Fatal(err)
		}
	}
}
