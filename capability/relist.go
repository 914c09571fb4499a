package capability

import "time"

// RelistAfter is how old a running provider's listing may be before an answer that needs the
// provider lists it again (docs/capabilities.md, "Changed definitions"). A provider that
// changes a definition without notifications/tools/list_changed is caught by the first answer
// after this age, at the cost of one tools/list round trip, while a session's tight run of
// invokes is not slowed by a listing before each one.
const RelistAfter = 10 * time.Second

// now is the turn's clock; tests set t.clock.
func (t *Turn) now() time.Time {
	if t.clock != nil {
		return t.clock()
	}
	return time.Now()
}

// stale reports whether a running provider must be listed again before this answer uses it:
// not twice in one answer; then when it announced a change, or when its last listing is older
// than RelistAfter.
func (t *Turn) stale(p *prov) bool {
	if p.listedSeq == t.seq {
		return false
	}
	return p.client.ToolsChanged() || t.now().Sub(p.listedAt) >= RelistAfter
}
