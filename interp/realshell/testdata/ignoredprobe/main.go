// Command ignoredprobe prints the signals ignored when it started, as realshell reads them,
// for TestIgnoredAtStart (built plain, as a PIE and stripped).
package main

import (
	"fmt"

	"github.com/spear-shell/spear-shell/interp/realshell"
)

func main() {
	set, err := realshell.IgnoredAtStart()
	if err != nil {
		fmt.Printf("unknown: %v\nknown: %s\n", err, set)
		return
	}
	fmt.Printf("ignored: %s\n", set)
}
