package interp

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test in the package leaves a goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
