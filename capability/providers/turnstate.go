package providers

// What a turn keeps whatever its configuration (SPEC 12): the ended mark, the pinned workspace
// and project, turn_started said once, and a record of each keeper started for the turn. The
// default state directory is keyed by the configuration too (a changed configuration, manifest
// or lock renews pins, family, described marks and index), so these facts live beside it, in a
// directory keyed by session and turn alone: an edited configuration never brings an ended turn
// back, and --end-turn finds every keeper the turn has, whatever configuration each serves.
//
// A manifest that names a state_dir chose the turn's place itself: everything, these facts
// included, is kept there (and a manifest that names another state_dir names another place).
//
// --end-turn removes the configuration's directories the turn made (each recorded here by the
// process that made it: configFact), its keepers ended first: an ended turn needs nothing of
// them, and a platform's turns would otherwise fill the state parent (a tmpfs, often) with a
// family's pins and search index each. What is kept per turn stays, the ended mark with it.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// keeperFact names the record that a keeper was started for the turn under configuration key.
func keeperFact(key string) string { return "keeper@" + key }

// configFact names the record that a process of the turn made configuration key's directory.
func configFact(key string) string { return "config@" + key }

// turnDirPrefix begins the name of a default per-turn directory in the state parent.
const turnDirPrefix = "turn-"

// openStates opens the turn's state (State) and its per-turn state (PerTurn), and reads the
// ended mark there, once: ended, or markErr when it cannot be read (which never reads as "not
// ended"). err says that the states cannot be opened; the mark is then not read.
func (t *Turn) openStates() (ended bool, markErr, err error) {
	man := t.Manifest
	if man.StateDir != "" {
		st, err := openState(man.StateDir, "")
		if err != nil {
			return false, nil, err
		}
		t.State, t.PerTurn = st, st
		_, ended, markErr = st.Read(EndedFact)
		return ended, markErr, nil
	}
	parent := t.Settings.StateParent
	if parent == "" {
		return false, nil, errors.New("no state parent: set XDG_RUNTIME_DIR or HOME")
	}
	perTurn, err := openState(filepath.Join(parent, turnDirPrefix+stateKey(man.Session, man.Turn)), parent)
	if err != nil {
		return false, nil, err
	}
	if _, ended, markErr = perTurn.Read(EndedFact); ended {
		// An ended turn needs no configuration's state (--end-turn removed it) and makes none
		// again: its answers only say it has ended, and what little they record (said once)
		// is kept with the ended mark.
		t.State, t.PerTurn = perTurn, perTurn
		return true, nil, nil
	}
	st, err := openState(filepath.Join(parent, t.Key), "") // the parent was checked just now
	if err != nil {
		return false, nil, err
	}
	if st.created {
		// For --end-turn to remove (RemoveConfigDirs). Not kept, the directory is only left
		// behind: the answer goes on.
		_, _ = perTurn.Create(configFact(t.Key), nil)
	}
	t.State, t.PerTurn = st, perTurn
	return false, markErr, nil
}

// EndedNow reads --end-turn's mark afresh (a turn loaded earlier may have been ended since).
func (t *Turn) EndedNow() (bool, error) {
	if t.PerTurn == nil {
		return false, nil
	}
	_, ended, err := t.PerTurn.Read(EndedFact)
	return ended, err
}

// NoteKeeper records, before a keeper is started for this configuration, that the turn has
// one in this configuration's state directory, for --end-turn to find (KeeperDirs).
func (t *Turn) NoteKeeper() error {
	if t.PerTurn == nil || t.PerTurn == t.State {
		return nil // one directory: its keeper is found there
	}
	_, err := t.PerTurn.Create(keeperFact(t.Key), nil)
	return err
}

// KeeperDirs are the state directories in which the turn's keepers may listen: this
// configuration's, and each one a keeper was recorded for (NoteKeeper), whatever configuration
// it serves. A recorded directory that is missing, or is not a private directory of ours, is
// left out, never created.
func (t *Turn) KeeperDirs() ([]string, error) {
	if t.State == nil {
		return nil, nil
	}
	dirs := []string{t.State.Dir()}
	if t.PerTurn == t.State {
		return dirs, nil
	}
	recorded, err := t.recordedDirs(keeperFact(""))
	return append(dirs, recorded...), err
}

// recordedDirs are the configurations' state directories the per-turn directory holds a record
// of (by the records' prefixes), but this configuration's: each one that exists as a private
// directory of ours, never created, once.
func (t *Turn) recordedDirs(prefixes ...string) ([]string, error) {
	ents, err := os.ReadDir(t.PerTurn.Dir())
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	var dirs []string
	parent := filepath.Dir(t.State.Dir())
	for _, e := range ents {
		for _, prefix := range prefixes {
			key, ok := strings.CutPrefix(e.Name(), prefix)
			if !ok || key == t.Key || !isKey(key) {
				continue
			}
			if dir := filepath.Join(parent, key); !slices.Contains(dirs, dir) && isPrivateDir(dir) {
				dirs = append(dirs, dir)
			}
		}
	}
	return dirs, nil
}

// RemoveConfigDirs removes, once the turn has ended and its keepers with it (--end-turn), every
// configuration's state directory of the turn: this configuration's, and each one a keeper was
// started in or a process made. The per-turn directory stays, with the ended mark and the pinned
// scope (SPEC 12); so does a state_dir the manifest names, which holds them.
func (t *Turn) RemoveConfigDirs() error {
	if t.State == nil || t.PerTurn == t.State {
		return nil
	}
	recorded, err := t.recordedDirs(configFact(""), keeperFact(""))
	errs := []error{err}
	for _, dir := range append([]string{t.State.Dir()}, recorded...) {
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, fmt.Errorf("state: %w", err))
		}
	}
	return errors.Join(errs...)
}

// isKey reports whether s is a state directory's key (stateKey): 32 lowercase hex digits.
func isKey(s string) bool {
	if len(s) != 32 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// isPrivateDir reports whether dir exists as privateDir would leave it: a directory, not a
// symlink, ours, closed to others.
func isPrivateDir(dir string) bool {
	fi, err := os.Lstat(dir)
	if err != nil || fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
