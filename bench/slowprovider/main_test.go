package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/spear-shell/spear-shell/bench/internal/catalog"
)

// marshalTool is how the tools were built before they were written by hand: the encoding
// the hand-written bytes must equal.
func marshalTool(t *testing.T, i int) []byte {
	t.Helper()
	var m map[string]any
	if i == 0 {
		m = map[string]any{
			"name":        "echo",
			"description": "Echo back the message it is given.\nUseful to check that the provider answers.",
			"inputSchema": map[string]any{
				"type":                 "object",
				"properties":           map[string]any{"message": map[string]any{"type": "string", "description": "text to echo"}},
				"required":             []string{"message"},
				"additionalProperties": false,
			},
			"annotations": map[string]any{"readOnlyHint": true},
		}
	} else {
		m = map[string]any{
			"name": fmt.Sprintf("t%04d", i),
			"description": fmt.Sprintf("Tool number %d of the benchmark family: looks up a record by key "+
				"in the project's store and returns it with its history.\nSecond line of the description.", i),
			"inputSchema": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"key":     map[string]any{"type": "string", "minLength": 1, "description": "record key"},
					"limit":   map[string]any{"type": "integer", "minimum": 1, "maximum": 100},
					"history": map[string]any{"type": "boolean", "description": "include the history"},
				},
				"required": []string{"key"},
			},
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestToolsAsMarshalled(t *testing.T) {
	s := &server{ntools: 10001}
	s.buildTools()
	for _, i := range []int{0, 1, 9, 10, 99, 100, 999, 1000, 9999, 10000} {
		if want := marshalTool(t, i); !bytes.Equal(s.tools[i], want) {
			t.Errorf("tool %d:\n got %s\nwant %s", i, s.tools[i], want)
		}
	}
}

func TestList(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id": "a b" ,"method":"tools/list","params":{"cursor":"2"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"4"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`,
	}, "\n") + "\n"
	type result struct {
		Tools      []json.RawMessage `json:"tools"`
		NextCursor string            `json:"nextCursor"`
		n          int               // tools expected
	}
	for _, tc := range []struct {
		tools, page int
		want        []result // per request
	}{
		{0, 0, []result{{}, {}, {}, {}}}, // "tools": [], never null
		{5, 0, []result{{n: 5}, {n: 3}, {n: 1}, {n: 5}}},
		{5, 2, []result{{NextCursor: "2", n: 2}, {NextCursor: "4", n: 2}, {n: 1}, {NextCursor: "2", n: 2}}},
	} {
		s := &server{ntools: tc.tools, page: tc.page}
		var out bytes.Buffer
		if err := s.serve(strings.NewReader(in), &out); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(&out)
		sc.Buffer(nil, 1<<20)
		k := 0
		for ; sc.Scan(); k++ {
			line := sc.Bytes()
			var resp struct {
				ID     json.RawMessage `json:"id"`
				Result result          `json:"result"`
			}
			if !json.Valid(line) || json.Unmarshal(line, &resp) != nil {
				t.Fatalf("tools %d page %d: answer %d is not JSON: %s", tc.tools, tc.page, k, line)
			}
			if want := []string{`1`, `"a b"`, `3`, `4`}[k]; string(resp.ID) != want {
				t.Errorf("answer %d: id %s, want %s", k, resp.ID, want)
			}
			r := resp.Result
			if r.Tools == nil || r.NextCursor != tc.want[k].NextCursor || len(r.Tools) != tc.want[k].n {
				t.Errorf("tools %d page %d: answer %d: %s", tc.tools, tc.page, k, line)
			}
			start := []int{0, 2, 4, 0}[k]
			for j, tool := range r.Tools {
				if !bytes.Equal(tool, marshalTool(t, start+j)) {
					t.Errorf("answer %d: tool %d is %s", k, j, tool)
				}
			}
		}
		if k != 4 {
			t.Errorf("tools %d page %d: %d answers, want 4", tc.tools, tc.page, k)
		}
	}
}

// -catalog serves echo, then the catalog's tools in its order, each with its arguments' types and
// descriptions and its required arguments; -tools bounds it.
func TestCatalog(t *testing.T) {
	for _, n := range []int{1, 10, catalog.Size + 1, catalog.Size + 5} {
		s := &server{ntools: min(n, catalog.Size+1), catalog: true}
		var out bytes.Buffer
		if err := s.serve(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`+"\n"), &out); err != nil {
			t.Fatal(err)
		}
		var resp struct {
			Result struct {
				Tools []struct {
					Name        string
					Description string
					InputSchema struct {
						Type       string
						Properties map[string]struct{ Type, Description string }
						Required   []string
					}
				}
			}
		}
		if err := json.Unmarshal(out.Bytes(), &resp); err != nil {
			t.Fatalf("tools %d: %v: %.200s", n, err, out.Bytes())
		}
		got := resp.Result.Tools
		if want := min(n, catalog.Size+1); len(got) != want {
			t.Fatalf("tools %d: listed %d, want %d", n, len(got), want)
		}
		if got[0].Name != "echo" {
			t.Errorf("tools %d: first is %q, want echo", n, got[0].Name)
		}
		for i, c := range catalog.Tools()[:len(got)-1] {
			g := got[i+1]
			if g.Name != c.Name || g.Description != c.Description || g.InputSchema.Type != "object" ||
				len(g.InputSchema.Properties) != len(c.Args) || fmt.Sprint(g.InputSchema.Required) != fmt.Sprint(c.Required) {
				t.Fatalf("tools %d: tool %d is %+v, want %+v", n, i+1, g, c)
			}
			for _, a := range c.Args {
				if p := g.InputSchema.Properties[a.Name]; p.Type != a.Type || p.Description != a.Description {
					t.Fatalf("tools %d: %s.%s is %+v, want %+v", n, c.Name, a.Name, p, a)
				}
			}
		}
	}
}
