package schema

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"go.uber.org/goleak"
)

// helperBin is cmd/spear-shell-schema, built once for the package's tests.
var helperBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "schema-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	_, self, _, _ := runtime.Caller(0)
	helperBin = filepath.Join(dir, HelperName)
	src := filepath.Join(filepath.Dir(self), "..", "..", "cmd", HelperName)
	if out, err := exec.Command("go", "build", "-o", helperBin, src).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build %s: %v\n%s", HelperName, err, out)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// trusted is a checker whose helper is the one at path, trusted as it is.
func trusted(path string) *Checker {
	return &Checker{Helper: path, Trust: func(string) error { return nil }}
}
