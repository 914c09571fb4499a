// Command spear-shell is the shell an agent's terminal runs: it forwards every command line to a
// real bash, and answers spear-capability invocations itself.
//
// The -c fast path (a -c string that cannot spell spear-capability) runs from package
// initialisation, in package fastpath, before the packages that answers need are initialised:
// it becomes the real shell having loaded no configuration and initialised no shell parser,
// logger or capability layer. Everything else is decided by run (shell.go).
//
// It never imports capability/mcpface (the go-sdk), capability/importer (the TOML library) or
// capability/schemaformat (the schema library): their initialisation would come before the fast
// path's; spear-mcp, spear-shell-import and spear-shell-schema link them instead.
package main

import "os"

// Version is spear-shell's own version (--spear-version); --version is bash's.
var Version = "0.1.0"

func main() {
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}
