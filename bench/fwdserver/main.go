// Command fwdserver is the reference of the face's invoke row (SPEC 13, Targets): the least a
// go-sdk MCP server can do to pass one call on. It is a stdio server (the go-sdk's own
// StdioTransport) with one tool, echo, whose handler forwards the call as it came (the raw
// arguments) to the provider given after its flags, through one go-sdk client session opened
// at start (initialize, protocol 2025-06-18, as spear-shell speaks it) and kept open, and
// returns the provider's result as it is: no offer, no checks, no audit, no cleaning.
//
//	fwdserver -- provider [args...]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: fwdserver -- provider [args...]")
		os.Exit(2)
	}
	if err := run(context.Background(), flag.Args()); err != nil {
		fmt.Fprintf(os.Stderr, "fwdserver: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, provider []string) error {
	cmd := exec.Command(provider[0], provider[1:]...)
	// The environment spear-shell gives a provider: PATH and HOME only.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	client := mcp.NewClient(&mcp.Implementation{Name: "fwdserver", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		return fmt.Errorf("provider: %w", err)
	}
	defer cs.Close()
	server := mcp.NewServer(&mcp.Implementation{Name: "fwdserver", Version: "1.0.0"}, nil)
	server.AddTool(&mcp.Tool{
		Name:        "echo",
		Description: "Echo back the message it is given (forwarded to the provider).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: req.Params.Arguments})
	})
	return server.Run(ctx, &mcp.StdioTransport{})
}
