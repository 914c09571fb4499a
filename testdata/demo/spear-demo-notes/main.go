// Command spear-demo-notes is the demo's example MCP provider, spoken to over stdio: a tiny
// notes service ("notes": search_notes, get_note, create_note) or a journal ("journal":
// read_journal, append_entry), chosen by argv[1]. Its data lives in memory for its lifetime.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

type note struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Body  string `json:"body"`
}

var notes = []note{
	{"n1", "Release checklist", "Tag the release, update the changelog, announce it."},
	{"n2", "spear-shell", "Capabilities are answered by spear-shell; everything else runs in bash."},
	{"n3", "Coffee", "The good beans are in the left cupboard."},
}

var journal []string

type tool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
}

func tools(service string) []tool {
	if service == "journal" {
		return []tool{
			{Name: "read_journal", Description: "Read the team journal, newest entry last.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)},
			{Name: "append_entry", Description: "Append one entry to the team journal.",
				InputSchema: json.RawMessage(`{"type":"object","required":["entry"],"properties":{"entry":{"type":"string","minLength":1}}}`)},
		}
	}
	return []tool{
		{Name: "search_notes", Description: "Search the notes by a word in their title or body.\nReturns one line per note: id and title.",
			InputSchema: json.RawMessage(`{"type":"object","required":["query"],"properties":{"query":{"type":"string","minLength":1},"limit":{"type":"integer","minimum":1,"maximum":20}}}`)},
		{Name: "get_note", Description: "Get one note by id.",
			InputSchema:  json.RawMessage(`{"type":"object","required":["id"],"properties":{"id":{"type":"string"}}}`),
			OutputSchema: json.RawMessage(`{"type":"object","required":["id","title","body"],"properties":{"id":{"type":"string"},"title":{"type":"string"},"body":{"type":"string"}}}`)},
		{Name: "create_note", Description: "Create a note.",
			InputSchema: json.RawMessage(`{"type":"object","required":["title","body"],"properties":{"title":{"type":"string"},"body":{"type":"string"}}}`)},
	}
}

type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"params"`
}

func main() {
	if len(os.Args) != 2 || (os.Args[1] != "notes" && os.Args[1] != "journal") {
		fmt.Fprintln(os.Stderr, "usage: spear-demo-notes notes|journal")
		os.Exit(2)
	}
	service := os.Args[1]
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 8<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var r request
		if json.Unmarshal(in.Bytes(), &r) != nil || r.ID == nil {
			continue // notifications and noise
		}
		reply := map[string]any{"jsonrpc": "2.0", "id": r.ID}
		switch r.Method {
		case "initialize":
			reply["result"] = map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "spear-demo-" + service, "version": "1.0.0"}}
		case "ping":
			reply["result"] = map[string]any{}
		case "tools/list":
			reply["result"] = map[string]any{"tools": tools(service)}
		case "tools/call":
			res, err := call(r.Params.Name, r.Params.Arguments)
			if err != nil {
				reply["error"] = map[string]any{"code": -32602, "message": err.Error()}
			} else {
				reply["result"] = res
			}
		default:
			reply["error"] = map[string]any{"code": -32601, "message": "method not found"}
		}
		if err := out.Encode(reply); err != nil {
			os.Exit(1)
		}
	}
}

func text(s string) map[string]any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}}
}

func call(name string, raw json.RawMessage) (map[string]any, error) {
	var a struct {
		Query, ID, Title, Body, Entry string
		Limit                         int
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("arguments: %v", err)
	}
	switch name {
	case "search_notes":
		var lines []string
		for _, n := range notes {
			q := strings.ToLower(a.Query)
			if strings.Contains(strings.ToLower(n.Title+" "+n.Body), q) {
				lines = append(lines, n.ID+"  "+n.Title)
			}
			if a.Limit > 0 && len(lines) == a.Limit {
				break
			}
		}
		if len(lines) == 0 {
			return text("no note matches " + fmt.Sprintf("%q", a.Query)), nil
		}
		return text(strings.Join(lines, "\n")), nil
	case "get_note":
		for _, n := range notes {
			if n.ID == a.ID {
				return map[string]any{"content": []any{}, "structuredContent": n}, nil
			}
		}
		res := text("no note has id " + fmt.Sprintf("%q", a.ID))
		res["isError"] = true
		return res, nil
	case "create_note":
		n := note{ID: fmt.Sprintf("n%d", len(notes)+1), Title: a.Title, Body: a.Body}
		notes = append(notes, n)
		return text("created " + n.ID), nil
	case "read_journal":
		if len(journal) == 0 {
			return text("the journal is empty"), nil
		}
		return text(strings.Join(journal, "\n")), nil
	case "append_entry":
		journal = append(journal, a.Entry)
		return text(fmt.Sprintf("entry %d appended", len(journal))), nil
	}
	return nil, fmt.Errorf("unknown tool %q", name)
}
