package keeper

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/capability/provlink"
)

// Flag is the hidden option that runs spear-shell as a turn's keeper (Serve).
const Flag = "--spear-keeper"

// listenFd is where the keeper finds its listening socket: the process that starts it
// binds the socket, so that clients can connect (and queue) before the keeper runs.
const listenFd = 3

// ensureRunning makes sure a keeper listens on the turn's socket, starting one if none does.
// Starters take the turn's keeper lock, so that of two processes racing to start it one
// starts it and the other finds it; a keeper ending takes it too. A socket nobody listens on
// (a keeper that died) is not trusted: it is removed, and this process starts its providers
// itself (an error); the next answer starts a new keeper.
func (k *Link) ensureRunning() error {
	err := k.probe()
	if err == nil || !errors.Is(err, syscall.ENOENT) && !errors.Is(err, syscall.ECONNREFUSED) {
		return err
	}
	// The record first, the mark under the lock after: --end-turn marks the turn ended, then
	// looks for its keepers under each one's lock, so it either finds this keeper or this
	// process finds the mark and starts none.
	if err := k.t.NoteKeeper(); err != nil {
		return fmt.Errorf("keeper: %w", err)
	}
	unlock, err := lockKeeper(k.t.State.Dir())
	if err != nil {
		return err
	}
	defer unlock()
	switch err := k.probe(); {
	case err == nil:
		return nil // another process started it meanwhile
	case errors.Is(err, syscall.ECONNREFUSED):
		fi, lerr := os.Lstat(k.path)
		if lerr == nil && fi.Mode().Type() == fs.ModeSocket {
			os.Remove(k.path)
			return fmt.Errorf("keeper: a stale socket (no keeper listens on it) was removed; a later answer starts a new keeper")
		}
		return fmt.Errorf("keeper: %s is not a socket", k.path)
	case !errors.Is(err, syscall.ENOENT):
		return err
	}
	switch ended, err := k.t.EndedNow(); {
	case err != nil:
		return fmt.Errorf("keeper: not started: %w", err)
	case ended:
		return errors.New("keeper: not started: " + providers.TurnEnded)
	}
	return k.launch()
}

// probe connects and hangs up: is a keeper listening?
func (k *Link) probe() error {
	if err := provlink.Probe(k.path); err != nil {
		return fmt.Errorf("keeper: %w", err)
	}
	return nil
}

// lockKeeper takes the turn's keeper lock (flock on a file of the state directory).
func lockKeeper(dir string) (unlock func(), err error) {
	unlock, err = provlink.Lock(filepath.Join(dir, lockName))
	if err != nil {
		return nil, fmt.Errorf("keeper: %w", err)
	}
	return unlock, nil
}

// launch binds the socket (0600) and starts the keeper on it: this binary in keeper mode,
// in a session of its own (a harness that kills the -c process group does not reach it), with
// /dev/null as stdin, stdout and stderr and the socket as its only other descriptor (a harness
// that waits for the command's output to close does not wait for it). It is not waited for.
func (k *Link) launch() error {
	ln, err := provlink.Listen(k.path)
	if err != nil {
		return fmt.Errorf("keeper: %w", err)
	}
	defer ln.Close()
	s := k.t.Settings
	if err := provlink.Spawn(ln, k.path, []string{s.Self, Flag, "--manifest", s.ManifestPath}, s.Cwd, s.Environ); err != nil {
		return fmt.Errorf("keeper: %w", err)
	}
	return nil
}
