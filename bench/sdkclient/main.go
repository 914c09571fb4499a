// Command sdkclient is the benchmarks' reference MCP client, built with the official go-sdk:
// it starts the server given after its flags, initializes with protocol 2025-06-18 (the
// version spear-shell speaks, so both do the same handshake), lists every tool, calls echo
// -n times printing each result's text, and closes the session. With -parallel K it starts K
// copies of the server at once, each initialized and listed on its own session (the calls go to
// the first), as a turn start with K providers does.
//
//	sdkclient [-n calls] [-message text] [-report] [-parallel K] -- server [args...]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	n := flag.Int("n", 1, "calls of echo on the open session")
	message := flag.String("message", "hi", "echo's message; calls after the first add their number")
	report := flag.Bool("report", false, "print on stderr the time of the calls after the first (warm calls)")
	parallel := flag.Int("parallel", 1, "copies of the server started at once, each initialized and listed")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: sdkclient [-n calls] [-message text] [-report] -- server [args...]")
		os.Exit(2)
	}
	if err := runParallel(context.Background(), *parallel, *n, *message, *report, flag.Args()); err != nil {
		fmt.Fprintf(os.Stderr, "sdkclient: %v\n", err)
		os.Exit(1)
	}
}

// runParallel runs k sessions at once; the first makes the n calls, the others list and close.
func runParallel(ctx context.Context, k, n int, message string, report bool, server []string) error {
	errs := make([]error, max(k, 1))
	var wg sync.WaitGroup
	for i := range errs {
		calls := n
		if i > 0 {
			calls = 0
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = run(ctx, calls, message, report, server)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func run(ctx context.Context, n int, message string, report bool, server []string) error {
	cmd := exec.Command(server[0], server[1:]...)
	// The environment spear-shell gives a provider: PATH and HOME only.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	client := mcp.NewClient(&mcp.Implementation{Name: "sdkclient", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	found := false
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			cs.Close()
			return fmt.Errorf("list tools: %w", err)
		}
		found = found || tool.Name == "echo"
	}
	if !found {
		cs.Close()
		return errors.New("list tools: no echo tool")
	}
	out := os.Stdout
	var warm time.Time
	for i := range n {
		if i == 1 {
			warm = time.Now()
		}
		msg := message
		if i > 0 {
			msg += " " + strconv.Itoa(i)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": msg}})
		if err != nil {
			cs.Close()
			return fmt.Errorf("call %d: %w", i, err)
		}
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				fmt.Fprintln(out, t.Text)
			}
		}
	}
	if report && n > 1 {
		fmt.Fprintf(os.Stderr, "warm-calls-ns %d\n", time.Since(warm).Nanoseconds())
	}
	if err := cs.Close(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	return nil
}
