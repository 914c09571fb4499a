package capability

import (
	"encoding/json"
	"os"
	"testing"
)

// TestTerminalAfterPin: a session's terminal is the one its scope pin read at the session's
// start; a manifest rewritten later changes it only for a turn that has not pinned.
func TestTerminalAfterPin(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]any{"terminal": "terminal-bench"})
	session := f.turn()
	session.Pin()
	var m map[string]any
	b, err := os.ReadFile(f.manifest)
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil {
		t.Fatal(err)
	}
	m["terminal"] = "claude-code"
	f.write(f.manifest, m)
	if got := session.Terminal(); got != "terminal-bench" {
		t.Errorf("after the pin: terminal %q, want terminal-bench", got)
	}
	if got := f.turn().Terminal(); got != "claude-code" {
		t.Errorf("a turn that did not pin: terminal %q, want claude-code", got)
	}
}
