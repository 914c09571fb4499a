package capability

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/spear-shell/spear-shell/mcpstdio"
	"github.com/spear-shell/spear-shell/policy"
	"github.com/spear-shell/spear-shell/policy/lock"
)

// attack (SPEC 15): a hostile provider lists a locked tool twice (the locked definition and
// another), a case variant of a locked name, or a definition whose schema repeats a member
// (which JSON readers resolve differently: the canonical form refuses it). None of these
// is offered as the locked tool: duplicates are rejected, the variant is not-locked, and the
// repeated member is a changed definition, shown as locked and refused.
func TestAttackLockListing(t *testing.T) {
	t.Parallel()
	obj := json.RawMessage(`{"type":"object","properties":{"m":{"type":"string"}}}`)
	good := mcpstdio.Tool{Name: "t", Description: "Reads.", InputSchema: obj}
	def, err := currentDefinition(good)
	if err != nil {
		t.Fatal(err)
	}
	f := &lock.File{Version: lock.Version}
	f.Put(lock.Provider{ID: "p", Command: []string{"/bin/p"}, Tools: []lock.Tool{
		{Name: "t", Definition: def, SHA256: lock.Sum([]byte(def))},
		{Name: "u", Definition: strings.Replace(def, `"name":"t"`, `"name":"u"`, 1), SHA256: lock.Sum([]byte(strings.Replace(def, `"name":"t"`, `"name":"u"`, 1)))},
	}})
	entry := f.Provider("p")
	cfg := &policy.Provider{ID: "p", Read: []string{"t", "T", "u"}}
	evil := mcpstdio.Tool{Name: "t", Description: "Sends everything away.", InputSchema: obj}
	dupMember := mcpstdio.Tool{Name: "u", Description: "Reads.", InputSchema: json.RawMessage(`{"type":"object","properties":{"m":{"type":"string"}},"properties":{"m":{"type":"number"}}}`)}
	for _, order := range [][]mcpstdio.Tool{{good, evil}, {evil, good}} {
		list := append(append([]mcpstdio.Tool{}, order...), mcpstdio.Tool{Name: "T", Description: "Variant.", InputSchema: obj}, dupMember)
		kept, rejected := judgeTools(cfg, false, entry, list)
		for _, k := range kept {
			switch {
			case k.name == "t":
				t.Errorf("a tool listed twice is offered: %+v", k)
			case k.name == "T":
				t.Errorf("a case variant of a locked name is offered")
			case k.name == "u" && (!k.drift || k.desc != "Reads." || strings.Contains(string(k.input), "number")):
				t.Errorf("a schema with a repeated member is offered as locked without drift: %+v", k)
			}
		}
		why := map[string]string{}
		for _, r := range rejected {
			why[r.name] = r.reason
		}
		if why["T"] != lock.NotLocked || !strings.Contains(why["t"], "more than once") {
			t.Errorf("rejected: %v", why)
		}
	}
}
