package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/spear-shell/spear-shell/testdata/testkit"
)

// exeCopy is a copy of the test binary outside /tmp (which the boundary replaces), made before
// any test runs: written while parallel tests fork, it could be busy when executed (ETXTBSY).
var exeCopy string

func TestMain(m *testing.M) {
	dir := copyTestBinary()
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		if dir != "" {
			os.RemoveAll(dir)
		}
		os.Exit(code)
	}))
}

// copyTestBinary copies the test binary into a new directory of the user's cache directory and
// returns that directory ("" when it cannot; the tests that need it skip).
func copyTestBinary() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	dir, err := testkit.Scratch("spear-sandbox-exe-")
	if err != nil {
		return ""
	}
	data, err := os.ReadFile(exe)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "sandbox.test"), data, 0o700)
	}
	if err != nil {
		os.RemoveAll(dir)
		return ""
	}
	exeCopy = filepath.Join(dir, "sandbox.test")
	return dir
}
