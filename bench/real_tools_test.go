package main

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/spear-shell/spear-shell/mcpstdio"
	"github.com/spear-shell/spear-shell/testdata/testkit"
)

var updateRealTools = flag.Bool("update-real-tools", false, "rewrite testdata/search/real-tools.json from the servers' tools/list")

// realTool is one tool of testdata/search/real-tools.json, the real servers' part of the family
// the labelled queries are judged over.
type realTool struct {
	Provider    string   `json:"provider"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Args        []string `json:"args"`
}

// realServer is one real MCP server the tests install, and the SDK it is made with: servers of
// five SDKs, so that the labelled queries are judged against more than one way of naming tools.
type realServer struct {
	provider string
	sdk      string
	npm      string   // the script under testdata/interop/node_modules, run by node
	goPkg    string   // or a Go package, built
	node     []string // node's own flags
	args     []string
	env      []string
}

var realServers = []realServer{
	{provider: "everything", sdk: "TypeScript SDK", npm: "@modelcontextprotocol/server-everything/dist/index.js", args: []string{"stdio"}},
	{provider: "filesystem", sdk: "TypeScript SDK", npm: "@modelcontextprotocol/server-filesystem/dist/index.js", args: []string{"."}},
	{provider: "memory", sdk: "TypeScript SDK", npm: "@modelcontextprotocol/server-memory/dist/index.js"},
	{provider: "sequential-thinking", sdk: "TypeScript SDK", npm: "@modelcontextprotocol/server-sequential-thinking/dist/index.js"},
	// FastMCP (TypeScript, a framework of its own over the SDK); the key is only read by calls.
	{provider: "firecrawl", sdk: "FastMCP", npm: "firecrawl-mcp/dist/index.js", env: []string{"FIRECRAWL_API_KEY=fc-offline"}},
	// tmcp (TypeScript, its own implementation of the protocol). Its documentation sections are
	// fetched at start; offline that fetch fails in a promise nobody awaits, which would end node.
	{provider: "svelte", sdk: "tmcp", npm: "@sveltejs/mcp/dist/index.mjs", node: []string{"--unhandled-rejections=warn"}},
	{provider: "gosdk", sdk: "Go SDK", goPkg: "./testdata/interop/gosdkserver"},
	{provider: "mcpgo-everything", sdk: "mcp-go", goPkg: "github.com/mark3labs/mcp-go/examples/everything"},
	{provider: "mcpgo-elicitation", sdk: "mcp-go", goPkg: "github.com/mark3labs/mcp-go/examples/elicitation"},
}

// command is how to run s, or an error saying what is not installed.
func (s realServer) command(t *testing.T, bin string) (mcpstdio.Command, error) {
	env := append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, s.env...)
	cmd := mcpstdio.Command{Dir: t.TempDir(), Env: mcpstdio.NewEnv(env)}
	if s.goPkg != "" {
		cmd.Path = filepath.Join(bin, s.provider)
		return cmd, testkit.Build(cmd.Path, s.goPkg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return cmd, err
	}
	script, err := filepath.Abs(filepath.Join("../testdata/interop/node_modules", s.npm))
	if err != nil {
		return cmd, err
	}
	if _, err := os.Stat(script); err != nil {
		return cmd, err
	}
	cmd.Path = node
	cmd.Args = slices.Concat(s.node, []string{script}, s.args)
	return cmd, nil
}

// The family the labelled queries are judged over holds the tools the real servers list now:
// testdata/search/real-tools.json is what their tools/list says (-update-real-tools rewrites it).
func TestRealTools(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	got := make([][]realTool, len(realServers))
	var wg sync.WaitGroup
	for i, s := range realServers {
		cmd, err := s.command(t, bin)
		if err != nil {
			if os.Getenv("SPEAR_REQUIRE_INTEROP") == "1" {
				t.Fatalf("%s (%s): not installed (make deps): %v", s.provider, s.sdk, err)
			}
			t.Skipf("%s (%s): not installed (make deps): %v", s.provider, s.sdk, err)
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			c, err := mcpstdio.Start(ctx, cmd, mcpstdio.Options{})
			if err != nil {
				t.Errorf("%s: %v", s.provider, err)
				return
			}
			defer c.Close()
			tools, err := c.ListTools(ctx)
			if err != nil {
				t.Errorf("%s: %v", s.provider, err)
				return
			}
			for _, tool := range tools {
				var schema struct{ Properties map[string]json.RawMessage }
				_ = json.Unmarshal(tool.InputSchema, &schema)
				args := make([]string, 0, len(schema.Properties))
				for a := range schema.Properties {
					args = append(args, a)
				}
				slices.Sort(args)
				got[i] = append(got[i], realTool{s.provider, tool.Name, tool.Description, args})
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	all := slices.Concat(got...)
	const file = "../testdata/search/real-tools.json"
	if *updateRealTools {
		b, err := json.MarshalIndent(all, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var want []realTool
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	for i := range max(len(all), len(want)) {
		switch {
		case i >= len(all):
			t.Errorf("%s/%s is in %s but no server lists it", want[i].Provider, want[i].Name, file)
		case i >= len(want):
			t.Errorf("%s/%s is listed but not in %s (-update-real-tools)", all[i].Provider, all[i].Name, file)
		case !sameTool(all[i], want[i]):
			t.Errorf("%s/%s differs from %s (-update-real-tools)", all[i].Provider, all[i].Name, file)
		}
	}
}

func sameTool(a, b realTool) bool {
	return a.Provider == b.Provider && a.Name == b.Name && a.Description == b.Description && slices.Equal(a.Args, b.Args)
}
