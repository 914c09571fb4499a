package capability

import (
	"fmt"
	"strings"

	"github.com/spear-shell/spear-shell/policy/lock"
)

// Tools a provider lists that cannot be offered (a name outside [A-Za-z0-9_.-]{1,128}, a name
// listed twice, a schema that is not an object) stay out of the family, but the turn is told
// they exist and why they cannot be called: an agent that read of "read file" elsewhere must
// not be left with a bare unknown-capability. In a read-only (general) offer only what would be
// READ is told, and a name outside the charset is never in the read list: nothing is said there
// of a tool the turn may not see.

// unusableShown bounds the tools named per provider in a listing.
const unusableShown = 5

// visibleRejected keeps the rejected tools this offer may tell of, each name once.
func visibleRejected(p *prov, rejected []rejectedTool) []rejectedTool {
	var out []rejectedTool
	seen := map[string]bool{}
	for _, rj := range rejected {
		// A tool the lock does not hold is absent, not unusable (locked.go).
		if seen[rj.name] || rj.reason == lock.NotLocked || p.readOnly && p.cfg.Class(rj.name) != "READ" {
			continue
		}
		seen[rj.name] = true
		out = append(out, rj)
	}
	return out
}

// unusableReason is the answer to a describe or invoke of a tool the provider lists but that
// cannot be called, or "" when it lists none of that name.
func (p *prov) unusableReason(target, name string) string {
	for _, rj := range p.unusable {
		if rj.name == name {
			return fmt.Sprintf("%s: provider %s lists a tool of that name, but it cannot be called: %s",
				boundName(target), p.cfg.ID, rj.reason)
		}
	}
	return ""
}

// unusableLines says, for a listing, which tools each provider lists that cannot be called.
func (e *turnEnv) unusableLines() []string {
	var out []string
	for _, id := range e.order {
		p := e.provs[id]
		if p.down != "" || len(p.unusable) == 0 {
			continue
		}
		parts := make([]string, 0, unusableShown+1)
		for i, rj := range p.unusable {
			if i == unusableShown {
				parts = append(parts, fmt.Sprintf("and %d more", len(p.unusable)-unusableShown))
				break
			}
			parts = append(parts, fmt.Sprintf("%q (%s)", boundName(rj.name), rj.reason))
		}
		out = append(out, fmt.Sprintf("Provider %s also lists tools that cannot be called: %s.", id, strings.Join(parts, "; ")))
	}
	return out
}
