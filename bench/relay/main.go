// Command relay is the stand-in for the turn's keeper in the floor of the face's invoke row
// (docs/bench.md, face-invoke): a separate process that holds the provider and is reached over a
// unix socket, doing nothing else. It starts the provider given after its flags (stdin and stdout
// piped, stderr its own), listens on -socket, writes "ready\n" to its stdout, accepts one
// connection and copies bytes between that connection and the provider's stdio, both ways, as
// they come: no framing, parsing or checks. When the connection's client goes away it closes the
// provider's stdin, waits for the provider and exits.
//
//	relay -socket PATH -- provider [args...]
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
)

func main() {
	socket := flag.String("socket", "", "unix socket path to listen on")
	flag.Parse()
	if *socket == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: relay -socket PATH -- provider [args...]")
		os.Exit(2)
	}
	if err := run(*socket, flag.Args()); err != nil {
		fmt.Fprintf(os.Stderr, "relay: %v\n", err)
		os.Exit(1)
	}
}

func run(socket string, provider []string) error {
	cmd := exec.Command(provider[0], provider[1:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("provider: %w", err)
	}
	ln, err := net.Listen("unix", socket)
	if err != nil {
		return err
	}
	if _, err := os.Stdout.WriteString("ready\n"); err != nil {
		return err
	}
	conn, err := ln.Accept()
	ln.Close() // one connection only; this also removes the socket file
	if err != nil {
		return err
	}
	go func() {
		io.Copy(conn, out) // the provider's answers to the client
		conn.Close()
	}()
	io.Copy(in, conn) // the client's requests to the provider, until it goes away
	in.Close()
	return cmd.Wait()
}
