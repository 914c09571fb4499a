// Command gosdkserver is an MCP stdio server built with the official Go SDK, for
// interoperability tests and benchmarks of mcpstdio.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoIn struct {
	Message string `json:"message" jsonschema:"the text to echo"`
}

type sumIn struct {
	A float64 `json:"a" jsonschema:"first addend"`
	B float64 `json:"b" jsonschema:"second addend"`
}

type sumOut struct {
	Sum float64 `json:"sum" jsonschema:"a plus b"`
}

type failIn struct {
	Reason string `json:"reason,omitempty"`
}

func main() {
	pageSize := flag.Int("pagesize", 0, "tools per tools/list page (0: the SDK's default)")
	extra := flag.Int("tools", 0, "number of extra no-op tools, to make listing paginate")
	flag.Parse()

	s := mcp.NewServer(&mcp.Implementation{Name: "gosdkserver", Version: "1.0.0"}, &mcp.ServerOptions{PageSize: *pageSize})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes the message"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Message}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "sum", Description: "Adds two numbers; structured output"},
		func(_ context.Context, _ *mcp.CallToolRequest, in sumIn) (*mcp.CallToolResult, sumOut, error) {
			return nil, sumOut{Sum: in.A + in.B}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always fails with a tool error"},
		func(_ context.Context, _ *mcp.CallToolRequest, in failIn) (*mcp.CallToolResult, any, error) {
			return nil, nil, errors.New("failing as asked: " + in.Reason)
		})
	for i := range *extra {
		mcp.AddTool(s, &mcp.Tool{Name: fmt.Sprintf("noop_%03d", i), Description: "Does nothing"},
			func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{}}, nil, nil
			})
	}
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Printf("gosdkserver: %v", err)
		os.Exit(1)
	}
}
