package capability

import (
	"time"

	"github.com/spear-shell/spear-shell/capability/providers"
)

// A running provider's listing is reused until it is providers.RelistAfter old or the provider
// announced a change (docs/capabilities.md, "Changed definitions").

// now is the turn's clock; tests set t.clock.
func (t *Turn) now() time.Time {
	if t.clock != nil {
		return t.clock()
	}
	return time.Now()
}

// stale reports whether a running provider must be listed again before this answer uses it:
// not twice in one answer; then when it announced a change, or when its last listing is older
// than providers.RelistAfter.
func (t *Turn) stale(p *prov) bool {
	if p.listedSeq == t.seq {
		return false
	}
	return p.client.ToolsChanged() || t.now().Sub(p.listedAt) >= providers.RelistAfter
}
