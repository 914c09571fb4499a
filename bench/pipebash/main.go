// Command pipebash is a bare pass-through in front of bash -s: it starts /bin/bash -s with its
// own arguments and a pipe as stdin, copies its stdin into that pipe, and exits with bash's
// status. It is what any program between a session's input and bash -s pays when it hands the
// bytes on as they come (bash then reads its script from a pipe a byte at a time, as bash -s
// does); spear-shell sends batches that bash reads with one read -N, and can be below it. The
// script case runs it beside spear-shell and bash -s.
package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
)

func main() {
	cmd := exec.Command("/bin/bash", append([]string{"-s"}, os.Args[1:]...)...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	in, err := cmd.StdinPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "pipebash: %v\n", err)
		os.Exit(126)
	}
	// A write error means bash has exited (exit N): what it did not read is not run.
	_, _ = io.Copy(in, os.Stdin)
	in.Close()
	_ = cmd.Wait()
	os.Exit(cmd.ProcessState.ExitCode())
}
