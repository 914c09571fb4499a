package wire

import (
	"os/exec"
	"strings"
	"testing"
)

// layers is docs/layout.md's table: a package of ours may import only packages of a lower
// layer on its own side or in the shared leaves, never one of its own layer or above, and
// nothing under interp/ imports capability/ or the reverse. Commands sit above everything.
var layers = map[string]int{
	"audit": 0, "mcpstdio": 0, "policy/paths": 0, "interp/invocation": 0, "interp/lineedit": 0,
	"capability/schemaformat": 0, "capability/schema": 0, "capability/search": 0, "textclean": 0,
	"report": 1,
	"policy": 1, "policy/lock": 1,
	"interp": 1, "interp/sandbox": 1,
	"interp/realshell": 2, "interp/envelope": 2,
	"interp/session":       3,
	"capability/providers": 2, "capability/importer": 2, "capability/provlink": 3, "capability/keeper": 4,
	"capability/broker": 4, "capability": 5, "capability/mcpface": 6,
	"cmd/internal/wire": 7,
	"testdata/testkit":  0, // the tests' shared fixtures: imported by tests alone
}

const module = "github.com/spear-shell/spear-shell/"

func TestLayers(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}:{{join .Imports " "}}`, module+"...", module+"testdata/testkit").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, ":")
		pkg = strings.TrimPrefix(pkg, module)
		if strings.HasPrefix(pkg, "bench") || strings.HasPrefix(pkg, "testdata") && pkg != "testdata/testkit" {
			continue
		}
		from, known := layers[pkg]
		if !known {
			if strings.HasPrefix(pkg, "cmd/") {
				from = 100 // a command wires everything
			} else {
				t.Errorf("package %s is not in docs/layout.md's layers (add it to the table and here)", pkg)
				continue
			}
		}
		seen++
		for _, imp := range strings.Fields(imports) {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			imp = strings.TrimPrefix(imp, module)
			if strings.HasPrefix(imp, "testdata/") {
				t.Errorf("%s imports %s: packages under testdata are for tests alone", pkg, imp)
				continue
			}
			to, ok := layers[imp]
			if !ok {
				if strings.HasPrefix(pkg, "cmd/") {
					continue
				}
				t.Errorf("%s imports %s, which has no layer", pkg, imp)
				continue
			}
			if to >= from {
				t.Errorf("%s (layer %d) imports %s (layer %d): imports run down the layers", pkg, from, imp, to)
			}
			if side(pkg) != "" && side(imp) != "" && side(pkg) != side(imp) {
				t.Errorf("%s imports %s across the sides", pkg, imp)
			}
		}
	}
	if seen < len(layers) {
		t.Errorf("saw %d of the %d packages of the table", seen, len(layers))
	}
}

func side(pkg string) string {
	switch {
	case pkg == "interp" || strings.HasPrefix(pkg, "interp/"):
		return "interp"
	case pkg == "capability" || strings.HasPrefix(pkg, "capability/"):
		return "capability"
	}
	return ""
}
