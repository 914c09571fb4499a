package keeper

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/spear-shell/spear-shell/audit"
	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/capability/provlink"
	"github.com/spear-shell/spear-shell/policy"
)

// Link is how this process reaches the turn's keeper. It is made once per process (Reach);
// once the keeper fails it, the process starts its providers itself.
type Link struct {
	t    *providers.Turn
	path string

	mu   sync.Mutex
	gone bool // the keeper cannot be used: recorded once, every later start is local
}

// Reach returns a link to the keeper of turn t, starting the keeper when none runs, or nil
// when this process starts its providers itself: a stdin session, keep_providers 0, no state,
// no audit trail, no Settings.Self, or a keeper that cannot be started (recorded,
// keeper_unavailable). Call it once per process.
func Reach(t *providers.Turn) *Link {
	if t.Settings.Session || t.Settings.Self == "" || t.Manifest == nil || t.Manifest.KeepProviders <= 0 || t.State == nil || t.Audit == nil {
		return nil
	}
	k := &Link{t: t, path: socketPath(t.State.Dir())}
	if len(k.path) > maxSocketPath {
		k.unavailable(fmt.Errorf("keeper: the socket path %s does not fit a unix socket address (%d bytes at most)", k.path, maxSocketPath))
		return nil
	}
	if err := k.ensureRunning(); err != nil {
		k.unavailable(err)
		return nil
	}
	return k
}

// unavailable records, once per process, that this answer starts its providers itself.
func (k *Link) unavailable(err error) {
	k.mu.Lock()
	first := !k.gone
	k.gone = true
	k.mu.Unlock()
	if first {
		_ = k.t.Log(audit.Event{Name: audit.EventKeeperUnavailable, Reason: err.Error()})
	}
}

func (k *Link) usable() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return !k.gone
}

// hello is the first line of every connection.
func (k *Link) hello() provlink.Request {
	return provlink.Request{Op: provlink.OpHello, Protocol: protocol, Turn: k.t.Manifest.Turn, Key: k.t.Key}
}

// Start has the keeper start (or reuse) the provider of entry cfg. reached is false when the
// keeper could not be used; the caller then starts the provider itself. With reached true, err
// is the provider's failure as the keeper saw it.
func (k *Link) Start(ctx context.Context, cfg *policy.Provider) (c providers.Client, reached bool, err error) {
	if !k.usable() {
		return nil, false, nil
	}
	kp, err := k.dial()
	if err != nil {
		k.unavailable(err)
		return nil, false, nil
	}
	// hello and start go together: one round trip, the keeper answers both in order.
	if err := kp.Send(k.hello(), provlink.Request{Op: provlink.OpStart, Provider: cfg.ID}); err != nil {
		kp.Close()
		k.unavailable(fmt.Errorf("keeper: %w", err))
		return nil, false, nil
	}
	deadline := time.Now().Add(providers.Timeout(cfg) + provlink.Grace)
	for i := range 2 {
		rep, err := kp.Receive(ctx, deadline)
		switch {
		case ctx.Err() != nil:
			kp.Close()
			return nil, true, ctx.Err()
		case err != nil:
			kp.Close()
			k.unavailable(fmt.Errorf("keeper: %w", err))
			return nil, false, nil
		case rep.Err != nil && (i == 0 || rep.Err.Keeper):
			kp.Close()
			k.unavailable(fmt.Errorf("keeper: refused: %s", rep.Err.Msg))
			return nil, false, nil
		case rep.Err != nil:
			kp.Close()
			return nil, true, rep.Err.Err()
		}
	}
	return kp, true, nil
}

// dial connects to the keeper and checks that it runs as our user.
func (k *Link) dial() (*provlink.Conn, error) {
	kp, err := provlink.Dial(k.path, k.lost)
	if err != nil {
		return nil, fmt.Errorf("keeper: %w", err)
	}
	return kp, nil
}

// lost is the keeper's connection failing under a request: recorded once (keeper_unavailable);
// the request fails as a transport fault of the provider, never retried.
func (k *Link) lost(stage string, err error) error {
	k.unavailable(fmt.Errorf("keeper: the connection failed during %s: %w", stage, err))
	return &providers.Failure{Msg: stage + ": the turn's keeper went away: " + err.Error(), Stage: stage, Is: []error{ErrLost}}
}

// ErrLost is the keeper's connection failing under a request: no fault of the provider's. A
// listing that fails with it may be asked again of a provider started here; a call may not.
var ErrLost = errors.New("the turn's keeper went away")
