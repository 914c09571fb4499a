package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spear-shell/spear-shell/testdata/testkit"
)

// An ended turn stays ended through the face too (SPEC 12, 13), with three real servers (npm):
// the ended mark is kept per session and turn, so a face started after the configuration was
// edited (one provider's timeout) refuses every call, "the turn has ended", and starts nothing;
// and --end-turn ends every keeper the turn has, the one a face started under the first
// configuration and the one another face started under the second. The servers are named with
// the fixture's directory on their command line, so that only this test's are counted.
func TestFaceEndedStaysEnded(t *testing.T) {
	t.Parallel()
	node, mods := interopDeps(t)
	server := func(pkg, extra string) string {
		return fmt.Sprintf(`"command": [%q, %q, "$WORK"]%s`, node, filepath.Join(mods, "@modelcontextprotocol", pkg, "dist", "index.js"), extra)
	}
	caps := func(timeout string) string {
		return `{"providers": [
  {"id": "think", ` + server("server-sequential-thinking", timeout) + `, "scope": "global", "read": ["sequentialthinking"]},
  {"id": "mem", ` + server("server-memory", "") + `, "scope": "global", "read": ["read_graph"], "env": {"MEMORY_FILE_PATH": "$WORK/memory.jsonl"}},
  {"id": "fs", ` + server("server-filesystem", "") + `, "scope": "global", "read": ["list_directory"]}
]}`
	}
	c1, c2 := caps(""), caps(`, "timeout": 45`)
	fx := newFixture(t, c1, map[string]any{}, nil)
	servers := func() []int { return testkit.LivePids(mods, fx.dir) }
	keepers := func() []int { return testkit.LivePids("--spear-keeper", fx.dir) }
	search := func(f *face) string {
		return show(f.call(t, "spear_search", map[string]any{"query": "sequential thinking"}))
	}
	endTurn := func() {
		t.Helper()
		if o, e, code := fx.shell(t, "--end-turn"); code != 0 || e != "" {
			t.Fatalf("--end-turn: exit %d\n%s%s", code, o, e)
		}
		if !testkit.AwaitGone(mods, fx.dir) || !testkit.AwaitGone("--spear-keeper", fx.dir) {
			t.Fatalf("after --end-turn: servers %v, keepers %v", servers(), keepers())
		}
	}
	wantEnded := func(f *face) {
		t.Helper()
		refused(t, f.call(t, "spear_search", map[string]any{"query": "sequential thinking"}), "no-capabilities", "the turn has ended")
		refused(t, f.invoke(t, "think/sequentialthinking", map[string]any{}), "no-capabilities", "the turn has ended")
		if n := len(servers()) + len(keepers()); n != 0 {
			t.Errorf("an ended turn started servers %v, keepers %v", servers(), keepers())
		}
	}

	f1 := fx.startFace(t)
	if out := search(f1); !strings.Contains(out, "think/sequentialthinking") {
		t.Fatalf("search: %s", out)
	}
	if !testkit.Poll(func() bool { return len(servers()) == 3 }) || len(keepers()) != 1 {
		t.Fatalf("servers %v, keepers %v: want 3 and 1", servers(), keepers())
	}
	endTurn()
	fx.write(t, "home/capabilities.json", c2)
	wantEnded(fx.startFace(t))
	wantEnded(f1)
	fx.write(t, "home/capabilities.json", c1)
	endTurn()
	if n := fx.count(t, "keeper_started"); n != 1 {
		t.Errorf("%d keepers started, want 1", n)
	}

	// Keeper K1 under the first configuration, K2 under the second (the turn goes on): both end.
	fx.setManifest(t, map[string]any{"turn": "t2"})
	f3 := fx.startFace(t)
	search(f3)
	fx.write(t, "home/capabilities.json", c2)
	f4 := fx.startFace(t)
	if out := search(f4); !strings.Contains(out, "think/sequentialthinking") {
		t.Fatalf("search under the second configuration: %s", out)
	}
	if !testkit.Poll(func() bool { return len(servers()) == 6 }) || len(keepers()) != 2 {
		t.Fatalf("servers %v, keepers %v: want 6 and 2", servers(), keepers())
	}
	fx.write(t, "home/capabilities.json", c1)
	endTurn()
	if n := fx.count(t, "keeper_ended,turn=t2,reason=end-turn"); n != 2 {
		t.Errorf("%d keepers of t2 ended by --end-turn, want 2", n)
	}
	wantEnded(f3)
	wantEnded(f4)
}

// interopDeps finds node and the npm servers of testdata/interop, or skips (fails with
// SPEAR_REQUIRE_INTEROP=1, as make test sets).
func interopDeps(t *testing.T) (node, mods string) {
	mods, err := filepath.Abs("../../testdata/interop/node_modules")
	if err != nil {
		t.Fatal(err)
	}
	node, nodeErr := exec.LookPath("node")
	_, modsErr := os.Stat(filepath.Join(mods, "@modelcontextprotocol", "server-memory"))
	if nodeErr != nil || modsErr != nil {
		msg := fmt.Sprintf("interop servers not installed (make deps): node %v; servers %v", nodeErr, modsErr)
		if os.Getenv("SPEAR_REQUIRE_INTEROP") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if node, err = filepath.EvalSymlinks(node); err != nil {
		t.Fatal(err)
	}
	return node, mods
}
