package keeper

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/spear-shell/spear-shell/audit"
	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/capability/provlink"
)

// endTurnWait bounds how long --end-turn waits for the keeper to stop its providers (each
// takes at most about 2 s, SPEC 6, and they stop in parallel).
const endTurnWait = 30 * time.Second

// EndTurn ends the turn s names (spear-shell --end-turn): it marks the turn ended (per session
// and turn, whatever the configuration), every keeper the turn has, whatever configuration it
// was started with, stops its providers and records keeper_ended; then turn_ended is recorded,
// and the turn's configurations' state directories are removed (the per-turn one stays).
// It exits 0 whether or not a keeper ran; without a valid manifest, or without an audit trail,
// it says why and fails.
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
	code := 0
	if t.State != nil {
		// The mark first: an answer that starts meanwhile refuses instead of starting a keeper.
		if _, err := t.PerTurn.Create(providers.EndedFact, nil); err != nil {
			fmt.Fprintf(stderr, "spear-shell: --end-turn: the turn's end cannot be marked: %v\n", err)
			return 3
		}
		// Every keeper of the turn, whatever configuration it was started with (SPEC 12).
		dirs, err := t.KeeperDirs()
		if err != nil {
			fmt.Fprintf(stderr, "spear-shell: --end-turn: the turn's keepers cannot all be found: %v\n", err)
		}
		var wg sync.WaitGroup
		for _, dir := range dirs {
			wg.Go(func() { stopKeeper(t, dir) })
		}
		wg.Wait()
		if err != nil {
			code = 3 // the turn is ended all the same: recorded below
		}
	}
	if err := t.Log(audit.Event{Name: audit.EventTurnEnded, Reason: "end-turn"}); err != nil {
		fmt.Fprintf(stderr, "spear-shell: --end-turn: %v\n", err)
		return 3
	}
	// Its keepers ended, the turn needs none of its configurations' state (the ended mark is
	// kept per turn): a platform's turns would otherwise fill the state parent.
	if err := t.RemoveConfigDirs(); err != nil {
		fmt.Fprintf(stderr, "spear-shell: --end-turn: the turn is ended, but its state was not all removed: %v\n", err)
	}
	return code
}

// stopKeeper asks the keeper listening in state directory dir, if one does, to end, and waits
// until it has: its connection closes once the providers are stopped, and the keeper lock is
// free once keeper_ended is recorded. The socket is looked for under the lock, which a process
// starting a keeper holds until the socket is bound: a keeper is either found or never started
// (the ended mark is read under the same lock, ensureRunning).
func stopKeeper(t *providers.Turn, dir string) {
	path := socketPath(dir)
	if len(path) > maxSocketPath {
		return
	}
	unlock, err := lockKeeper(dir)
	if err != nil {
		return
	}
	kp, err := provlink.Dial(path, nil)
	unlock() // the keeper takes it to end
	if err != nil {
		return // no keeper, or not ours
	}
	defer kp.Close()
	link := &Link{t: t, path: path}
	hello := link.hello()
	hello.Ending = true // the keeper may serve another configuration of the turn
	if kp.Send(hello, provlink.Request{Op: provlink.OpStop, Reason: reasonEndTurn}) != nil {
		return
	}
	kp.DrainUntil(time.Now().Add(endTurnWait)) // the hello's reply, then the end
	if unlock, err := lockKeeper(dir); err == nil {
		unlock()
	}
}
