// Command mcpclient does what sdkclient does, with spear-shell's own client (mcpstdio): start
// the server given after its flags, initialize, list every tool, call echo -n times printing
// each result's text, and close. The benchmark's mcpstdio rows compare the two.
//
//	mcpclient [-n calls] [-message text] [-report] -- server [args...]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/spear-shell/spear-shell/mcpstdio"
)

func main() {
	n := flag.Int("n", 1, "calls of echo on the open session")
	message := flag.String("message", "hi", "echo's message; calls after the first add their number")
	report := flag.Bool("report", false, "print on stderr the time of the calls after the first (warm calls)")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: mcpclient [-n calls] [-message text] [-report] -- server [args...]")
		os.Exit(2)
	}
	if err := run(context.Background(), *n, *message, *report, flag.Args()); err != nil {
		fmt.Fprintf(os.Stderr, "mcpclient: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, n int, message string, report bool, server []string) error {
	cmd := mcpstdio.Command{Path: server[0], Args: server[1:],
		Env: mcpstdio.NewEnv([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")})}
	c, err := mcpstdio.Start(ctx, cmd, mcpstdio.Options{ClientName: "mcpclient", ClientVersion: "1.0.0"})
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	tools, err := c.ListTools(ctx)
	if err != nil {
		c.Close()
		return fmt.Errorf("list tools: %w", err)
	}
	if !slices.ContainsFunc(tools, func(t mcpstdio.Tool) bool { return t.Name == "echo" }) {
		c.Close()
		return fmt.Errorf("list tools: no echo tool")
	}
	var warm time.Time
	for i := range n {
		if i == 1 {
			warm = time.Now()
		}
		msg := message
		if i > 0 {
			msg += " " + strconv.Itoa(i)
		}
		args, err := json.Marshal(map[string]any{"message": msg})
		if err != nil {
			c.Close()
			return fmt.Errorf("call %d: %w", i, err)
		}
		res, err := c.CallTool(ctx, "echo", args)
		if err != nil {
			c.Close()
			return fmt.Errorf("call %d: %w", i, err)
		}
		for _, item := range res.Content {
			if item.Type == "text" {
				fmt.Println(item.Text)
			}
		}
	}
	if report && n > 1 {
		fmt.Fprintf(os.Stderr, "warm-calls-ns %d\n", time.Since(warm).Nanoseconds())
	}
	if err := c.Close(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	return nil
}
