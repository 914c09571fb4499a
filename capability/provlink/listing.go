package provlink

import (
	"strconv"
	"time"

	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/mcpstdio"
)

// Listing is the last tools/list a holder (the keeper, the broker) kept of one provider: the
// tools as it passes them on, where each name stands in them, the listing's hash and when it was
// taken. The list, tools and moved answers are read from it; nothing in it is judged.
type Listing struct {
	Tools []WireTool
	Hash  string // providers.ListingHash of the tools as the provider listed them
	At    time.Time
	names map[string]placed
}

// placed is where a name stands in a listing: its first tool and how many carry it.
type placed struct{ first, count int }

// NewListing keeps tools, listed now, as wt passes them on (wt is ToWireTools(tools), redacted
// where the holder redacts).
func NewListing(tools []mcpstdio.Tool, wt []WireTool) *Listing {
	names := make(map[string]placed, len(tools))
	for i, t := range tools {
		at, seen := names[t.Name]
		if !seen {
			at.first = i
		}
		at.count++
		names[t.Name] = at
	}
	return &Listing{Tools: wt, Hash: providers.ListingHash(tools), At: time.Now(), names: names}
}

// Fresh reports whether l may be given again: there is one, the provider announced no change
// (changed is asked only then), and it is not providers.RelistAfter old.
func (l *Listing) Fresh(changed func() bool) bool {
	return l != nil && !changed() && time.Since(l.At) < providers.RelistAfter
}

// Def is name as the listing holds it: how many of its tools carry it, and the first (none
// when there is no listing).
func (l *Listing) Def(name string) WireDef {
	d := WireDef{Name: name}
	if l == nil {
		return d
	}
	if at, ok := l.names[name]; ok {
		d.Count = at.count
		d.Tool = &l.Tools[at.first]
	}
	return d
}

// Answer is the tools answer for names: each as Def says, with the listing's hash and age.
func (l *Listing) Answer(names []string) Response {
	defs := make([]WireDef, len(names))
	for i, n := range names {
		defs[i] = l.Def(n)
	}
	return Response{Defs: defs, Hash: l.Hash, AgeMS: time.Since(l.At).Milliseconds()}
}

// Moved is the answer to a call guarded by another listing than l: not sent, and the tool's
// definition in l (none when there is no listing), for the caller to judge again.
func (l *Listing) Moved(name string) Response {
	r := Response{Moved: true, Defs: []WireDef{l.Def(name)}}
	if l != nil {
		r.Hash, r.AgeMS = l.Hash, time.Since(l.At).Milliseconds()
	}
	return r
}

// Guards reports whether l is the listing a call's hash names.
func (l *Listing) Guards(hash string) bool { return l != nil && l.Hash == hash }

// BadNames is the refusal of a tools request that asks no name or more than MaxNames; nil when
// it is within bounds.
func BadNames(names []string) *Response {
	if len(names) == 0 || len(names) > MaxNames {
		return &Response{Err: &WireError{Msg: "tools: between 1 and " + strconv.Itoa(MaxNames) + " names", Keeper: true}}
	}
	return nil
}
