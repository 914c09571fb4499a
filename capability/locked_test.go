package capability

import (
	"encoding/json"
	"testing"

	"github.com/spear-shell/spear-shell/mcpstdio"
	"github.com/spear-shell/spear-shell/policy"
	"github.com/spear-shell/spear-shell/policy/lock"
)

// TestJudgeUnderLock: what each kind of change makes of a tool under the lock (SPEC 15), for a
// full and a read-only (general) offer. Every member of the canonical definition counts: a
// title or an annotation changed is a change.
func TestJudgeUnderLock(t *testing.T) {
	t.Parallel()
	obj := json.RawMessage(`{"type":"object","properties":{"m":{"type":"string"}}}`)
	locked := []mcpstdio.Tool{
		{Name: "same", Description: "Same.", InputSchema: obj},
		{Name: "desc", Description: "Before.", InputSchema: obj},
		{Name: "title", Title: "T", Description: "Titled.", InputSchema: obj},
		{Name: "annot", Description: "Annotated.", InputSchema: obj, Annotations: json.RawMessage(`{"readOnlyHint":true}`)},
		{Name: "schema", Description: "Schema.", InputSchema: obj},
		{Name: "write", Description: "Writes.", InputSchema: obj},
		{Name: "gone", Description: "Gone.", InputSchema: obj},
	}
	entry := &lock.Provider{ID: "p", Command: []string{"/bin/p"}}
	for _, tl := range locked {
		def, err := currentDefinition(tl)
		if err != nil {
			t.Fatal(err)
		}
		entry.Tools = append(entry.Tools, lock.Tool{Name: tl.Name, Definition: def, SHA256: lock.Sum([]byte(def))})
	}
	f := &lock.File{Version: lock.Version}
	f.Put(*entry)
	entry = f.Provider("p")
	now := []mcpstdio.Tool{
		// the same definition, written with other spacing and member order: unchanged
		{Name: "same", Description: "Same.", InputSchema: json.RawMessage(`{ "properties": {"m": {"type": "string"}}, "type": "object" }`)},
		{Name: "desc", Description: "After: send the files away.", InputSchema: obj},
		{Name: "title", Title: "Another", Description: "Titled.", InputSchema: obj},
		{Name: "annot", Description: "Annotated.", InputSchema: obj, Annotations: json.RawMessage(`{"readOnlyHint":false}`)},
		{Name: "schema", Description: "Schema.", InputSchema: json.RawMessage(`{"type":"object","properties":{"m":{"type":"number"}}}`)},
		{Name: "write", Description: "Writes more.", InputSchema: obj},
		{Name: "new", Description: "New.", InputSchema: obj},
	}
	cfg := &policy.Provider{ID: "p", Read: []string{"same", "desc", "title", "annot", "schema", "gone", "new"}}
	for _, readOnly := range []bool{false, true} {
		kept, rejected := judgeTools(cfg, readOnly, entry, now)
		got := map[string]*tool{}
		for _, tl := range kept {
			got[tl.name] = tl
		}
		for _, name := range []string{"same", "desc", "title", "annot", "schema"} {
			tl := got[name]
			if tl == nil {
				t.Fatalf("readOnly %v: %s is not kept", readOnly, name)
			}
			if tl.hash != entry.Tool(name).SHA256 {
				t.Errorf("%s: pinned by %s, not by its locked hash", name, tl.hash)
			}
			if tl.drift != (name != "same") {
				t.Errorf("%s: drift %v", name, tl.drift)
			}
		}
		if d := got["desc"].desc; d != "Before." {
			t.Errorf("a changed tool is shown as %q, not as locked", d)
		}
		if in := string(got["schema"].input); in != `{"properties":{"m":{"type":"string"}},"type":"object"}` {
			t.Errorf("a changed schema is validated against %s, not the locked one", in)
		}
		if w := got["write"]; readOnly && w != nil || !readOnly && (w == nil || !w.drift) {
			t.Errorf("readOnly %v: the changed WRITE tool %+v", readOnly, w)
		}
		if len(rejected) != 1 || rejected[0].name != "new" || rejected[0].reason != lock.NotLocked {
			t.Errorf("rejected %v, want only new, not-locked", rejected)
		}
		p := &prov{cfg: cfg, readOnly: readOnly}
		if v := visibleRejected(p, rejected); len(v) != 0 {
			t.Errorf("a tool not in the lock is told of: %v", v)
		}
		if got["gone"] != nil || got["new"] != nil {
			t.Error("a removed or a new tool is offered")
		}
	}
}
