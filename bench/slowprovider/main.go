// Command slowprovider is the MCP server the benchmarks run on both sides: it speaks
// protocol 2025-06-18 over stdio, sleeps -init-ms before answering initialize, and serves
// -tools tools: "echo" (READ in the benchmark's configuration) and t0001, t0002, ... with
// realistic descriptions and schemas.
//
// It is written by hand rather than with the go-sdk so that its own cost is small and the
// same for every client measured against it.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
)

func main() {
	initMS := flag.Int("init-ms", 0, "milliseconds to sleep before answering initialize")
	tools := flag.Int("tools", 1, "number of tools served (echo first); 0 serves none")
	page := flag.Int("page", 0, "tools per tools/list page; 0 means all in one page")
	flag.Parse()
	s := &server{initDelay: time.Duration(*initMS) * time.Millisecond, page: *page}
	s.buildTools(*tools)
	if err := s.serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "slowprovider: %v\n", err)
		os.Exit(1)
	}
}

type server struct {
	initDelay time.Duration
	page      int
	tools     []json.RawMessage // each tool's JSON, encoded once
}

type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

type callParams struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

func (s *server) buildTools(n int) {
	for i := range n {
		var t map[string]any
		if i == 0 {
			t = map[string]any{
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
			t = map[string]any{
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
		b, err := json.Marshal(t)
		if err != nil {
			panic(err) // static data: cannot fail
		}
		s.tools = append(s.tools, b)
	}
}

func (s *server) serve(in io.Reader, out io.Writer) error {
	r := bufio.NewReaderSize(in, 64<<10)
	w := bufio.NewWriterSize(out, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if herr := s.handle(line, w); herr != nil {
				return herr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read: %w", err)
		}
	}
}

func (s *server) handle(line []byte, w *bufio.Writer) error {
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	if len(req.ID) == 0 || req.Method == "" {
		return nil // a notification, or a response to nothing we asked
	}
	var result any
	var rpcErr *rpcError
	switch req.Method {
	case "initialize":
		time.Sleep(s.initDelay)
		result = map[string]any{
			"protocolVersion": "2025-06-18",
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": "slowprovider", "version": "1.0.0"},
		}
	case "ping":
		result = map[string]any{}
	case "tools/list":
		result = s.list(req.Params)
	case "tools/call":
		result, rpcErr = s.call(req.Params)
	default:
		rpcErr = &rpcError{Code: -32601, Message: "method not found: " + req.Method}
	}
	resp := map[string]any{"jsonrpc": "2.0", "id": req.ID}
	if rpcErr != nil {
		resp["error"] = rpcErr
	} else {
		resp["result"] = result
	}
	b, err := json.Marshal(resp)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	w.Write(b)
	w.WriteByte('\n')
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (s *server) list(params json.RawMessage) any {
	var p struct {
		Cursor string `json:"cursor"`
	}
	_ = json.Unmarshal(params, &p)
	start, _ := strconv.Atoi(p.Cursor)
	start = min(max(start, 0), len(s.tools))
	end := len(s.tools)
	if s.page > 0 {
		end = min(start+s.page, end)
	}
	res := map[string]any{"tools": s.tools[start:end]}
	if end < len(s.tools) {
		res["nextCursor"] = strconv.Itoa(end)
	}
	return res
}

func (s *server) call(params json.RawMessage) (any, *rpcError) {
	var p callParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &rpcError{Code: -32602, Message: "invalid params"}
	}
	text := "ok " + p.Name
	if p.Name == "echo" {
		msg, _ := p.Arguments["message"].(string)
		text = msg
	}
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}, nil
}
