package schema

import (
	"path/filepath"
	"testing"

	"github.com/spear-shell/spear-shell/testdata/testkit"
)

// helperBin is cmd/spear-shell-schema, built once for the package's tests.
var helperBin string

func TestMain(m *testing.M) {
	testkit.Main(m, "schema-test-", func(dir string) error {
		helperBin = filepath.Join(dir, HelperName)
		return testkit.Build(helperBin, "./cmd/"+HelperName)
	})
}

// trusted is a checker whose helper is the one at path, trusted as it is.
func trusted(path string) *Checker {
	return &Checker{Helper: path, Trust: func(string) error { return nil }}
}
