package keeper

import (
	"fmt"
	"io"
	"time"

	"github.com/spear-shell/spear-shell/audit"
	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/capability/provlink"
)

// endTurnWait bounds how long --end-turn waits for the keeper to stop its providers (each
// takes at most about 2 s, SPEC 6, and they stop in parallel).
const endTurnWait = 30 * time.Second

// EndTurn ends the turn s names (spear-shell --end-turn): its keeper, if one runs, stops its
// providers and records keeper_ended; then turn_ended is recorded. It exits 0 whether or not
// a keeper ran; without a valid manifest, or without an audit trail, it says why and fails.
func EndTurn(s providers.Settings, stderr io.Writer) int {
	s.Session = false
	t := providers.Load(s, nil)
	switch {
	case t.Manifest == nil:
		fmt.Fprintf(stderr, "spear-shell: --end-turn: %s\n", t.None)
		return 2
	case t.Audit == nil:
		fmt.Fprintf(stderr, "spear-shell: --end-turn: the audit trail cannot be written: %v\n", t.AuditErr)
		return 3
	}
	if t.State != nil {
		// The mark first: an answer that starts meanwhile refuses instead of starting a keeper.
		if _, err := t.State.Create(providers.EndedFact, nil); err != nil {
			fmt.Fprintf(stderr, "spear-shell: --end-turn: the turn's end cannot be marked: %v\n", err)
			return 3
		}
		stopKeeper(t)
	}
	if err := t.Log(audit.Event{Name: audit.EventTurnEnded, Reason: "end-turn"}); err != nil {
		fmt.Fprintf(stderr, "spear-shell: --end-turn: %v\n", err)
		return 3
	}
	return 0
}

// stopKeeper asks the turn's keeper, if one listens, to end, and waits until it has: its
// connection closes once the providers are stopped, and the keeper lock is free once
// keeper_ended is recorded.
func stopKeeper(t *providers.Turn) {
	path := socketPath(t.State.Dir())
	if len(path) > maxSocketPath {
		return
	}
	link := &Link{t: t, path: path}
	kp, err := provlink.Dial(path, nil)
	if err != nil {
		return // no keeper, or not ours
	}
	defer kp.Close()
	if kp.Send(link.hello(), provlink.Request{Op: provlink.OpStop, Reason: reasonEndTurn}) != nil {
		return
	}
	kp.DrainUntil(time.Now().Add(endTurnWait)) // the hello's reply, then the end
	if unlock, err := lockKeeper(t.State.Dir()); err == nil {
		unlock()
	}
}
