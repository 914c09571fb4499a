package audit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The broker's records carry "broker": true, the provider and its share key (even empty), never
// turn or session, and are redacted like any other.
func TestBrokerRecords(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "broker.jsonl")
	l, err := OpenBroker(path, NewRedactor([]string{"s3cr3t-token"}))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Log(Event{Name: EventProviderFailed, Provider: "mem", ShareKey: "", Stage: "call", StderrTail: "env: s3cr3t-token"}); err != nil {
		t.Fatal(err)
	}
	if err := l.Log(Event{Name: EventProviderStarted, Provider: "mem", ShareKey: "fw-a"}); err != nil {
		t.Fatal(err)
	}
	if err := l.Log(Event{Name: EventBrokerStarted}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), "s3cr3t") {
		t.Fatalf("secret in the broker's records:\n%s", data)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	want := []map[string]any{
		{"broker": true, "provider": "mem", "share_key": ""},
		{"broker": true, "provider": "mem", "share_key": "fw-a"},
		{"broker": true},
	}
	for i, line := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{FieldTurn, FieldSession} {
			if _, ok := rec[k]; ok {
				t.Errorf("record %d has %s: %s", i, k, line)
			}
		}
		for k, v := range want[i] {
			if rec[k] != v {
				t.Errorf("record %d: %s = %v, want %v: %s", i, k, rec[k], v, line)
			}
		}
		if _, ok := rec[FieldShareKey]; ok != (i < 2) {
			t.Errorf("record %d: share_key present %v: %s", i, ok, line)
		}
	}
}
