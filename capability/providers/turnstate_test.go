package providers

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spear-shell/spear-shell/policy"
)

// turnIn is turn t1 of session s as a process loads it under configuration key (its default
// state directories opened under parent, or stateDir when not "").
func turnIn(t *testing.T, parent, key, stateDir string) *Turn {
	t.Helper()
	tu := &Turn{Settings: Settings{StateParent: parent}, Manifest: &policy.Manifest{Session: "s", Turn: "t1", StateDir: stateDir}, Key: key}
	if _, _, err := tu.openStates(); err != nil {
		t.Fatal(err)
	}
	return tu
}

// TestPerTurnState: two configurations of one turn have state directories of their own and
// one per-turn directory, where the ended mark of either is seen by the other; --end-turn finds
// each configuration's keeper directory from its record, and never a record that names no key,
// a directory that is missing, a link, or one open to others.
func TestPerTurnState(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "spear")
	k1, k2 := strings.Repeat("1", 32), strings.Repeat("2", 32)
	c1, c2 := turnIn(t, parent, k1, ""), turnIn(t, parent, k2, "")
	if c1.State.Dir() == c2.State.Dir() || c1.PerTurn.Dir() != c2.PerTurn.Dir() {
		t.Fatalf("states %s %s, per-turn %s %s", c1.State.Dir(), c2.State.Dir(), c1.PerTurn.Dir(), c2.PerTurn.Dir())
	}
	if _, err := c1.PerTurn.Create(EndedFact, nil); err != nil {
		t.Fatal(err)
	}
	if ended, err := c2.EndedNow(); err != nil || !ended {
		t.Errorf("the other configuration's turn: ended %v, %v", ended, err)
	}
	for _, c := range []*Turn{c1, c2} {
		if err := c.NoteKeeper(); err != nil {
			t.Fatal(err)
		}
	}
	// records that must lead nowhere
	missing, link, open := strings.Repeat("a", 32), strings.Repeat("b", 32), strings.Repeat("c", 32)
	if err := os.Symlink(c1.State.Dir(), filepath.Join(parent, link)); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(parent, open), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{missing, link, open, "XYZ", strings.ToUpper(missing)} {
		if _, err := c2.PerTurn.Create(keeperFact(key), nil); err != nil {
			t.Fatal(err)
		}
	}
	dirs, err := c2.KeeperDirs()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{c2.State.Dir(), c1.State.Dir()}; !slices.Equal(dirs, want) {
		t.Errorf("keeper directories %v, want %v", dirs, want)
	}

	// a state_dir the manifest names holds everything: one directory, no records
	named := filepath.Join(t.TempDir(), "st")
	n := turnIn(t, "", k1, named)
	if n.State != n.PerTurn || n.State.Dir() != named {
		t.Fatalf("named state_dir: state %s, per-turn %s", n.State.Dir(), n.PerTurn.Dir())
	}
	if err := n.NoteKeeper(); err != nil {
		t.Fatal(err)
	}
	if dirs, err := n.KeeperDirs(); err != nil || !slices.Equal(dirs, []string{named}) {
		t.Errorf("named state_dir: keeper directories %v, %v", dirs, err)
	}
	if ents, _ := os.ReadDir(named); len(ents) != 0 {
		t.Errorf("named state_dir holds %v", ents)
	}
}
