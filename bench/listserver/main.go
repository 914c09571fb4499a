// Command listserver is the reference of the face's start row (SPEC 13, Targets): a go-sdk
// stdio server that lists, from memory, the tools whose definitions it is given (a JSON array
// of MCP tools, read once at start from the file -tools names: the driver writes there what
// spear-mcp itself lists, so both answer tools/list with the same definitions). A call of any
// of them answers an empty result; the row measures only the start and the first tools/list.
//
//	listserver -tools FILE
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	file := flag.String("tools", "", "JSON array of the tools to list")
	flag.Parse()
	if err := run(context.Background(), *file); err != nil {
		fmt.Fprintf(os.Stderr, "listserver: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var tools []*mcp.Tool
	if err := json.Unmarshal(b, &tools); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "listserver", Version: "1.0.0"}, nil)
	for _, t := range tools {
		server.AddTool(t, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{}}, nil
		})
	}
	return server.Run(ctx, &mcp.StdioTransport{})
}
