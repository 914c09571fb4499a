package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/spear-shell/spear-shell/testdata/testkit"
)

// The transcripts in testdata/script run the real binaries: both spear-shell binaries and the
// test provider are built once into a temporary directory put first on PATH.

var update = flag.Bool("update", false, "rewrite the transcripts' expected output")

var (
	binDir       string
	scratch      string
	hostGo       []string // this machine's GOCACHE and GOMODCACHE, for transcripts that build
	fakeProvider string
	demoDir      string
	scriptCmds   = map[string]func(ts *testscript.TestScript, neg bool, args []string){}
)

// registerCommands adds custom transcript commands; test files call it from init.
func registerCommands(cmds map[string]func(ts *testscript.TestScript, neg bool, args []string)) {
	for name, f := range cmds {
		if _, dup := scriptCmds[name]; dup {
			panic("transcript command registered twice: " + name)
		}
		scriptCmds[name] = f
	}
}

func TestMain(m *testing.M) {
	flag.Parse()
	// Binaries outside /tmp: inside the boundary /tmp is the turn's own, so binaries kept in the
	// host's /tmp would be out of sight. $WORK stays in /tmp (a unix socket's path under it must
	// fit 107 bytes); $OUTSIDE is a directory of each transcript's outside /tmp, for what must be
	// visible, and masked, inside.
	root, err := testkit.Scratch("spear-shell-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir, scratch = filepath.Join(root, "bin"), root
	interopNode, interopMods = findInterop()
	if out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE").Output(); err == nil {
		hostGo = strings.Fields(string(out))
	}
	code := 1
	if err := buildBinaries(binDir); err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(root)
	os.Exit(code)
}

func buildBinaries(dir string) error {
	if err := testkit.Build(dir+"/", "./cmd/..."); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(testkit.Root(), "testdata/fakeprovider")); err != nil {
		return nil
	}
	fakeProvider = filepath.Join(dir, "fakeprovider")
	if err := testkit.Build(fakeProvider, "./testdata/fakeprovider"); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(testkit.Root(), "testdata/demo/spear-demo-notes")); err == nil {
		demoDir = filepath.Join(testkit.Root(), "testdata/demo") // the demo's turn, for the report's transcripts
		return testkit.Build(dir+"/", "./testdata/demo/spear-demo-notes")
	}
	return nil
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "../../testdata/script",
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		Cmds:                scriptCmds,
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "bwrap":
				return bwrapWorks(), nil
			case "root":
				return os.Getuid() == 0, nil
			case "tmpfs":
				return tmpfsWorks(), nil
			case "interop":
				return interopWorks(), nil
			case "chromium":
				return chromiumFound(), nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
			env.Setenv("BIN", binDir)
			env.Setenv("FAKEPROVIDER", fakeProvider)
			// The npm reference servers, for transcripts run under [interop].
			env.Setenv("NODE", interopNode)
			env.Setenv("INTEROP", interopMods)
			env.Setenv("DEMO", demoDir)
			// Beside $WORK, not in it: with the boundary $WORK is the default workspace, which must
			// not hold the state parent or the configuration.
			env.Setenv("XDG_RUNTIME_DIR", env.WorkDir+"-run")
			env.Setenv("XDG_CONFIG_HOME", env.WorkDir+"-config")
			// Transcripts choose isolation explicitly where they test it.
			env.Setenv("SPEAR_ISOLATION", "none")
			env.Defer(func() { testkit.StopKeepers(env.WorkDir) })
			outside, err := os.MkdirTemp(scratch, "out-")
			if err != nil {
				return err
			}
			env.Setenv("OUTSIDE", outside)
			if len(hostGo) == 2 {
				env.Setenv("HOST_GOCACHE", hostGo[0])
				env.Setenv("HOST_GOMODCACHE", hostGo[1])
			}
			env.Defer(func() { os.RemoveAll(outside) })
			return os.MkdirAll(env.WorkDir+"-run", 0o700)
		},
	})
}

// interopNode and interopMods are node and testdata/interop/node_modules ("" when either is
// missing): the npm reference servers, which transcripts run under [interop].
var interopNode, interopMods string

func findInterop() (node, mods string) {
	mods, err := filepath.Abs("../../testdata/interop/node_modules")
	if err != nil {
		return "", ""
	}
	if _, err := os.Stat(filepath.Join(mods, "@modelcontextprotocol", "server-memory")); err != nil {
		return "", ""
	}
	if node, err = exec.LookPath("node"); err == nil {
		node, err = filepath.EvalSymlinks(node)
	}
	if err != nil {
		return "", ""
	}
	return node, mods
}

// interopWorks tells whether the [interop] transcripts can run here; with
// SPEAR_REQUIRE_INTEROP=1 (CI) missing servers fail instead of skipping, as in TestInterop.
func interopWorks() bool {
	if interopNode == "" && os.Getenv("SPEAR_REQUIRE_INTEROP") == "1" {
		panic("the interop servers are required (SPEAR_REQUIRE_INTEROP=1) but are not installed (make deps)")
	}
	return interopNode != ""
}

// bwrapWorks tells whether the isolation transcripts can run here; with SPEAR_REQUIRE_BWRAP=1
// (CI) a missing bwrap fails instead of skipping.
func bwrapWorks() bool {
	err := exec.Command("bwrap", "--ro-bind", "/", "/", "--unshare-pid", "--dev", "/dev", "--proc", "/proc", "true").Run()
	if err != nil && os.Getenv("SPEAR_REQUIRE_BWRAP") == "1" {
		panic("bwrap is required (SPEAR_REQUIRE_BWRAP=1) but does not work: " + err.Error())
	}
	return err == nil
}

// tmpfsWorks tells whether a transcript can mount a small file system of its own (a tmpfs in
// a user and mount namespace, with unshare), to fill it.
func tmpfsWorks() bool {
	dir, err := os.MkdirTemp("", "spear-tmpfs-")
	if err != nil {
		return false
	}
	defer os.Remove(dir)
	return exec.Command("unshare", "-rm", "mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir).Run() == nil
}
