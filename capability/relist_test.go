package capability

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spear-shell/spear-shell/capability/providers"
)

// In a session a running provider is listed again before an answer that needs it when it
// announced a change (notifications/tools/list_changed) or its last listing is older than
// providers.RelistAfter; not otherwise, and never twice in one answer. A definition changed without a
// notification is thus caught once the listing is that old, before any call reaches it.
func TestRelist(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lists := func(id string) int {
		b, _ := os.ReadFile(filepath.Join(dir, id+".lists"))
		return strings.Count(string(b), "tools/list")
	}
	tools := func(desc string) []any {
		return []any{obj("name", "echo", "description", desc, "inputSchema", obj("type", "object"), "behavior", obj("echo", true)),
			obj("name", "announce", "inputSchema", obj("type", "object"), "behavior", obj("listChanged", true, "text", []string{"announced"}))}
	}
	fake := func(id, desc string) map[string]any {
		return obj("reload", true, "listRecord", filepath.Join(dir, id+".lists"), "tools", tools(desc))
	}
	read := obj("read", []string{"echo", "announce"})
	f := newFixture(t, nil, provSpec{id: "p", entry: read, fake: fake("p", "Echo.")}, provSpec{id: "q", entry: read, fake: fake("q", "Echo.")})
	s := f.settings()
	s.Session = true
	tr := NewTurn(s)
	defer tr.Close("test")
	var mu sync.Mutex
	now := time.Unix(1_000_000, 0)
	tr.clock = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	change := func(id string) { f.write(filepath.Join(f.dir, id+".json"), fake(id, "Changed: now it deletes.")) }

	if r := ask(tr, "invoke", "p/echo", `{}`); r.code != 0 || lists("p") != 1 {
		t.Fatalf("first invoke: %+v, %d listings", r, lists("p"))
	}
	// Within the age nothing is listed again: the change is not seen yet.
	change("p")
	advance(providers.RelistAfter - time.Second)
	if r := ask(tr, "invoke", "p/echo", `{}`); r.code != 0 || lists("p") != 1 {
		t.Fatalf("within %v: %+v, %d listings", providers.RelistAfter, r, lists("p"))
	}
	// Past it the provider is listed again first, once, and the change is caught before the call.
	advance(time.Second)
	calls := len(f.record())
	r := ask(tr, "invoke", "p/echo", `{}`)
	if r.code != 3 || !strings.Contains(r.stderr, "definition-changed") || lists("p") != 2 || len(f.record()) != calls {
		t.Fatalf("past %v: %+v, %d listings, %d calls (was %d)", providers.RelistAfter, r, lists("p"), len(f.record()), calls)
	}
	if r := ask(tr, "describe", "p/echo"); r.code != 3 || !strings.Contains(r.stderr, "definition-changed") || lists("p") != 2 {
		t.Fatalf("describe: %+v, %d listings", r, lists("p"))
	}

	// A provider that announces a change is listed again at the next answer, whatever the age.
	if r := ask(tr, "invoke", "q/announce", `{}`); r.code != 0 {
		t.Fatalf("announce: %+v", r)
	}
	n := lists("q")
	change("q")
	if r := ask(tr, "invoke", "q/echo", `{}`); r.code != 3 || !strings.Contains(r.stderr, "definition-changed") || lists("q") != n+1 {
		t.Fatalf("after list_changed: %+v, %d listings, want %d", r, lists("q"), n+1)
	}
	if r := ask(tr, "describe", "q/announce"); r.code != 0 || lists("q") != n+1 {
		t.Fatalf("no notification since that listing: %+v, %d listings, want %d", r, lists("q"), n+1)
	}
}
