// Command execbash is the floor a Go shell front can reach: it only execs /bin/bash with its
// own arguments. The benchmark compares spear-shell -c true with execbash -c true.
package main

import (
	"fmt"
	"os"
	"syscall"
)

func main() {
	err := syscall.Exec("/bin/bash", os.Args, os.Environ())
	fmt.Fprintf(os.Stderr, "execbash: %v\n", err)
	os.Exit(126)
}
