package mcpstdio

// Side-by-side benchmarks against the official Go SDK's client on the same server:
//
//	go test -run x -bench . -count 6 ./mcpstdio/

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var benchArgs = json.RawMessage(`{"message":"benchmark"}`)

func BenchmarkCold(b *testing.B) {
	server := goSDKServer(b)
	ctx := context.Background()
	b.Run("ours", func(b *testing.B) {
		for b.Loop() {
			c, err := Start(ctx, Command{Path: server, Env: minimalEnv()}, Options{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := c.ListTools(ctx); err != nil {
				b.Fatal(err)
			}
			if _, err := c.CallTool(ctx, "echo", benchArgs); err != nil {
				b.Fatal(err)
			}
			if err := c.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("gosdk", func(b *testing.B) {
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
		for b.Loop() {
			cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(server)},
				&mcp.ClientSessionOptions{ProtocolVersion: ProtocolVersion})
			if err != nil {
				b.Fatal(err)
			}
			for _, err := range cs.Tools(ctx, nil) { // follows nextCursor
				if err != nil {
					b.Fatal(err)
				}
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: benchArgs}); err != nil {
				b.Fatal(err)
			}
			if err := cs.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkWarm(b *testing.B) {
	server := goSDKServer(b)
	ctx := context.Background()
	b.Run("ours", func(b *testing.B) {
		c, err := Start(ctx, Command{Path: server, Env: minimalEnv()}, Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		for b.Loop() {
			if _, err := c.CallTool(ctx, "echo", benchArgs); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("gosdk", func(b *testing.B) {
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(server)},
			&mcp.ClientSessionOptions{ProtocolVersion: ProtocolVersion})
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		for b.Loop() {
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: benchArgs}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
