package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	registerCommands(map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"import-home": cmdImportHome,
		"file-mode":   cmdFileMode,
		"gen-servers": cmdGenServers,
	})
}

// import-home TERMINAL DIR: copies testdata/import/TERMINAL (a home holding the terminal's
// settings as its own `mcp add` wrote them, testdata/import/gen.sh) to DIR, with /INTEROP
// replaced by testdata/interop (installed by make deps).
func cmdImportHome(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: import-home TERMINAL DIR")
	}
	interop, err := filepath.Abs("../../testdata/interop")
	ts.Check(err)
	if _, err := os.Stat(filepath.Join(interop, "node_modules", "@modelcontextprotocol", "server-memory")); err != nil {
		ts.Fatalf("no interop servers (make deps): %v", err)
	}
	src := filepath.Join("../../testdata/import", args[0])
	dst := ts.MkAbs(args[1])
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), []byte(strings.ReplaceAll(string(b), "/INTEROP", interop)), 0o600)
	})
	ts.Check(err)
}

// file-mode PATH MODE: PATH's permission bits are MODE (octal).
func cmdFileMode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: file-mode PATH MODE")
	}
	st, err := os.Lstat(ts.MkAbs(args[0]))
	ts.Check(err)
	want, err := strconv.ParseUint(args[1], 8, 32)
	ts.Check(err)
	if got := st.Mode().Perm(); uint64(got) != want {
		ts.Fatalf("%s: mode %04o, want %04o", args[0], got, want)
	}
}

// gen-servers N FILE: a Gemini settings file of N stdio servers s0..s<N-1>, each running
// /bin/cat with an env value.
func cmdGenServers(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: gen-servers N FILE")
	}
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	servers := map[string]any{}
	for i := range n {
		servers[fmt.Sprintf("s%d", i)] = map[string]any{"command": "cat", "args": []string{"-u"},
			"env": map[string]string{"TOKEN": fmt.Sprintf("value-of-server-%d", i)}}
	}
	b, err := json.MarshalIndent(map[string]any{"mcpServers": servers}, "", " ")
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), b, 0o600))
}

// The TOML library --import needs initialises with work at start: it must be linked into
// spear-shell-import alone, never into spear-shell, whose -c fast path would pay for it.
func TestTOMLOnlyInTheImportBinary(t *testing.T) {
	t.Parallel()
	for bin, want := range map[string]bool{"spear-shell": false, "spear-shell-import": true} {
		out, err := exec.Command("go", "version", "-m", filepath.Join(binDir, bin)).Output()
		if err != nil {
			t.Fatalf("go version -m %s: %v", bin, err)
		}
		if got := strings.Contains(string(out), "github.com/BurntSushi/toml"); got != want {
			t.Errorf("%s links github.com/BurntSushi/toml: %v, want %v", bin, got, want)
		}
	}
}
