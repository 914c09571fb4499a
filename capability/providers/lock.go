package providers

// The operator's lock (SPEC 15), as a turn reads it: whether one governs, which providers it
// approves (by id and command), and, per offered provider, its entry, which the answers judge
// each tool against (capability/locked.go).

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/spear-shell/spear-shell/audit"
	"github.com/spear-shell/spear-shell/policy"
	"github.com/spear-shell/spear-shell/policy/lock"
)

// Lock is the lock as one process reads it.
type Lock struct {
	Path string
	File *lock.File // nil: no lock governs (none, not required), or it is unusable (Err)
	Hash string     // the SHA-256 of the file's bytes, when it was read
	Err  error      // unusable (invalid, untrusted, or required and missing): nothing is offered
}

// Governs reports whether the lock decides what is offered: it exists, or it is required.
func (l *Lock) Governs() bool { return l != nil && (l.File != nil || l.Err != nil) }

// LockPath is the lock's path for the capabilities file SPEAR_CAPABILITIES_FILE names, else
// $SPEAR_HOME/capabilities.json.
func LockPath(getenv func(string) string) string {
	caps := getenv("SPEAR_CAPABILITIES_FILE")
	if caps == "" {
		caps = filepath.Join(policy.DefaultHome(getenv), "capabilities.json")
	}
	return lock.PathFor(caps)
}

// ErrLockMissing is a required lock that does not exist.
var ErrLockMissing = errors.New(`capabilities.json says "lock": "required" and there is no lock: run spear-shell --lock`)

// ReadLock reads the lock at path. check says why a path cannot be trusted given the writable
// roots (nil: nothing is trusted); a lock the agent could have written or redirected approves
// nothing.
func ReadLock(path string, required bool, check func(string, []string) error, roots []string) *Lock {
	l := &Lock{Path: path}
	f, hash, err := lock.Read(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if required {
			l.Err = ErrLockMissing
		}
		return l
	case err != nil:
		l.Err = err
		return l
	case check == nil:
		l.Err = fmt.Errorf("lock %s: no trust check was given", path)
		return l
	}
	if terr := check(path, roots); terr != nil {
		l.Err = fmt.Errorf("lock %s: not a trusted path: %w", path, terr)
		return l
	}
	l.File, l.Hash = f, hash
	return l
}

// Entry returns the entry that approves p: nil when no lock governs; a nil entry and a reason
// when the lock does not approve p (no entry, or another command than the locked one).
func (l *Lock) Entry(p *policy.Provider) (entry *lock.Provider, why string) {
	if l == nil || l.File == nil {
		return nil, ""
	}
	e := l.File.Provider(p.ID)
	switch {
	case e == nil:
		return nil, "it has no entry in the lock"
	case !slices.Equal(e.Command, p.Command):
		return nil, "its command differs from the locked one"
	}
	return e, ""
}

// Gate withdraws what the lock does not approve from the offer: everything when the lock is
// unusable; otherwise each offered provider without an approving entry.
func (l *Lock) Gate(o policy.Offer, reg *policy.Registry) policy.Offer {
	if l.Err != nil {
		return o.Withdrawn("the lock is unusable: " + l.Err.Error())
	}
	if l.File == nil {
		return o
	}
	for i, d := range o.Decisions {
		if !d.Offered {
			continue
		}
		for j := range reg.Providers {
			if p := &reg.Providers[j]; p.ID == d.Provider {
				if _, why := l.Entry(p); why != "" {
					o.Decisions[i] = policy.Decision{Provider: d.Provider, Reason: lock.NotLocked + ": " + why}
				}
			}
		}
	}
	return o
}

// recordLock records, once per turn, each provider the lock left out (provider_rejected,
// reason not-locked).
func (t *Turn) recordLock() {
	if t.Lock == nil || t.Lock.File == nil || t.Registry == nil {
		return
	}
	for i := range t.Registry.Providers {
		p := &t.Registry.Providers[i]
		if !p.Enabled {
			continue
		}
		if _, why := t.Lock.Entry(p); why != "" && t.State.Once("not-locked@"+p.ID) {
			_ = t.Log(audit.Event{Name: audit.EventProviderRejected, Provider: p.ID, Reason: lock.NotLocked,
				Fields: map[string]any{"why": why, "lock": t.Lock.Hash}})
		}
	}
}

// LockField is what capability_family_selected records of the lock: its hash, or why it is
// unusable; nil when no lock governs.
func (l *Lock) LockField() any {
	switch {
	case l == nil || !l.Governs():
		return nil
	case l.Err != nil:
		return map[string]any{"unusable": l.Err.Error()}
	}
	return l.Hash
}
