package capability

import (
	"context"
	"sync"

	"github.com/spear-shell/spear-shell/capability/broker"
	"github.com/spear-shell/spear-shell/capability/keeper"
	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/capability/schema"
	"github.com/spear-shell/spear-shell/policy"
)

// turnEnv is everything loaded at the turn's first need: the turn's provider core, and what
// this process knows of its family.
type turnEnv struct {
	*providers.Turn

	s Settings

	provs map[string]*prov // offered providers
	order []string         // their ids, registry order

	familyKnown bool   // this process knows the family's mode
	mode        string // "whole" or "index"

	schemas *schema.Checker // the tools' schemas, each compiled once

	index *familyIndex // the family's search index, once a search needed it (search.go)

	closing sync.WaitGroup // providers being stopped in the background

	// early holds the providers started ahead of need (startEarly), by id, until ensure takes them.
	early map[string]chan startResult

	keeperOnce sync.Once
	link       *keeper.Link // nil: this process starts its providers itself

	brokerOnce sync.Once
	brokerLink *broker.Link // the shared entries' (SPEC 14)
}

// newEnv wraps a loaded provider core.
func newEnv(s Settings, core *providers.Turn) *turnEnv {
	s.ManifestPath = core.Settings.ManifestPath // --manifest as typed, made absolute
	e := &turnEnv{Turn: core, s: s, provs: map[string]*prov{}}
	// The helper is trusted as a provider's programs are (it must not lie where the agent writes).
	e.schemas = &schema.Checker{Helper: s.SchemaHelper,
		Trust: func(path string) error { return core.TrustPrograms([]string{path}, nil) }}
	for _, o := range core.Offered {
		e.provs[o.Config.ID] = &prov{cfg: o.Config, readOnly: o.ReadOnly, locked: o.Locked, shareKey: shareKey(o.Config, core.Offer.Project)}
		e.order = append(e.order, o.Config.ID)
	}
	return e
}

// shareKey is the key the broker runs a shared entry's upstream under for a turn of project:
// the project for share project, "" for share all.
func shareKey(p *policy.Provider, project string) string {
	if p.Share == policy.ShareProject {
		return project
	}
	return ""
}

// load reads the manifest, the registry and opens the audit trail and the state, once.
func (t *Turn) load() {
	if t.loaded {
		return
	}
	t.loaded = true
	var early func(*providers.Turn)
	if t.startCtx != nil {
		early = func(core *providers.Turn) {
			t.env = newEnv(t.s, core)
			t.env.startEarly(t.startCtx, t.listOnly)
		}
	}
	core := providers.Load(t.s.Settings, early)
	t.s.ManifestPath = core.Settings.ManifestPath // --manifest as typed, made absolute
	if t.env == nil || t.env.Turn != core {
		t.env = newEnv(t.s, core)
	}
}

// keeper returns the turn's keeper link, made once per process (keeper.Reach), or nil when
// this process starts its providers itself. --context (listOnly) never asks for it.
func (e *turnEnv) keeper() *keeper.Link {
	e.keeperOnce.Do(func() { e.link = keeper.Reach(e.Turn) })
	return e.link
}

// startEarly starts every offered provider now when this turn has not selected its family
// yet: the first answer of a turn needs them all, and their start-up (a process, initialize,
// tools/list) then overlaps the turn's records and state instead of following them. ensure
// takes the results; Close stops those never taken.
func (e *turnEnv) startEarly(ctx context.Context, listOnly bool) {
	if _, ok, err := e.State.Read(providers.FamilyFact); err != nil || ok {
		return
	}
	e.early = make(map[string]chan startResult, len(e.order))
	for _, id := range e.order {
		if _, down, err := e.State.Read(providers.DownFact(id)); err != nil || down {
			continue
		}
		ch := make(chan startResult, 1)
		e.early[id] = ch
		p := e.provs[id]
		go func() { ch <- startAndList(ctx, e, p, listOnly) }()
	}
}

// takeEarly returns the channel of p's early start, if there was one; its result is ensure's.
func (e *turnEnv) takeEarly(p *prov) chan startResult {
	ch := e.early[p.cfg.ID]
	delete(e.early, p.cfg.ID)
	return ch
}

// dropEarly stops the providers started early that the answer did not take (it was refused
// before it needed them), so that no later answer inherits a start made under another context.
func (e *turnEnv) dropEarly() {
	for id, ch := range e.early {
		delete(e.early, id)
		e.closing.Add(1) // held until the start ends and closeLater holds its own
		go func() {
			defer e.closing.Done()
			e.closeLater((<-ch).client)
		}()
	}
}
