// Command slowprovider is the MCP server the benchmarks run on both sides: it speaks
// protocol 2025-06-18 over stdio, sleeps -init-ms before answering initialize, and serves
// -tools tools: "echo" (READ in the benchmark's configuration) and t0001, t0002, ... with
// realistic descriptions and schemas. With -catalog the tools after echo are those of
// bench/internal/catalog instead (github_create_ticket, ...: names, descriptions and argument
// names a search can tell apart; the t0001 family all says the same words), as many as -tools
// asks for, at most catalog.Size+1 with echo.
//
// It is written by hand rather than with the go-sdk so that its own cost is small and the
// same for every client measured against it: the tools' JSON is built by appending bytes (no
// reflection, no re-validation of pre-encoded JSON), and each tools/list page is encoded once,
// at its first request, after which an answer is the page's bytes with the request's id
// spliced in. A benchmark of 10,000 tools then measures the client's work, not this server's
// encoding of the same 250 KB on every run. -tools 0 serves an empty list ("tools": []).
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

	"github.com/spear-shell/spear-shell/bench/internal/catalog"
)

func main() {
	initMS := flag.Int("init-ms", 0, "milliseconds to sleep before answering initialize")
	tools := flag.Int("tools", 1, "number of tools served (echo first); 0 serves none")
	page := flag.Int("page", 0, "tools per tools/list page; 0 means all in one page")
	cat := flag.Bool("catalog", false, "serve bench/internal/catalog's tools after echo instead of t0001...")
	flag.Parse()
	s := &server{initDelay: time.Duration(*initMS) * time.Millisecond, page: *page, ntools: max(*tools, 0), catalog: *cat}
	if s.catalog {
		s.ntools = min(s.ntools, catalog.Size+1)
	}
	if err := s.serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "slowprovider: %v\n", err)
		os.Exit(1)
	}
}

type server struct {
	initDelay time.Duration
	page      int
	ntools    int
	catalog   bool           // the tools after echo are catalog.Tools()
	tools     [][]byte       // each tool's JSON, built at the first tools/list
	pages     map[int][]byte // a tools/list result by its first tool, encoded once
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

// echoTool is the first tool, as json.Marshal wrote it from a map (keys sorted).
const echoTool = `{"annotations":{"readOnlyHint":true},` +
	`"description":"Echo back the message it is given.\nUseful to check that the provider answers.",` +
	`"inputSchema":{"additionalProperties":false,"properties":{"message":{"description":"text to echo","type":"string"}},` +
	`"required":["message"],"type":"object"},"name":"echo"}`

// appendTool appends tool i's JSON (i >= 1), byte for byte what json.Marshal wrote from a map.
func appendTool(b []byte, i int) []byte {
	b = append(b, `{"description":"Tool number `...)
	b = strconv.AppendInt(b, int64(i), 10)
	b = append(b, ` of the benchmark family: looks up a record by key in the project's store and returns it with its history.\nSecond line of the description.",`...)
	b = append(b, `"inputSchema":{"properties":{"history":{"description":"include the history","type":"boolean"},`...)
	b = append(b, `"key":{"description":"record key","minLength":1,"type":"string"},`...)
	b = append(b, `"limit":{"maximum":100,"minimum":1,"type":"integer"}},"required":["key"],"type":"object"},"name":"t`...)
	for d := 1000; d > 1 && i < d; d /= 10 {
		b = append(b, '0') // %04d
	}
	b = strconv.AppendInt(b, int64(i), 10)
	return append(b, `"}`...)
}

func (s *server) buildTools() {
	if s.tools != nil || s.ntools == 0 {
		return
	}
	if s.catalog {
		s.buildCatalog()
		return
	}
	// One buffer for all the tools: each tool is a slice of it.
	all := make([]byte, 0, len(echoTool)+s.ntools*400)
	all = append(all, echoTool...)
	ends := make([]int, s.ntools)
	ends[0] = len(all)
	for i := 1; i < s.ntools; i++ {
		all = appendTool(all, i)
		ends[i] = len(all)
	}
	s.tools = make([][]byte, s.ntools)
	start := 0
	for i, end := range ends {
		s.tools[i] = all[start:end:end]
		start = end
	}
}

// buildCatalog makes echo and the first ntools-1 tools of the catalog, each encoded once by
// encoding/json (keys sorted): name, description, and an inputSchema whose properties carry the
// argument's type and description, with the catalog's required arguments.
func (s *server) buildCatalog() {
	s.tools = make([][]byte, 0, s.ntools)
	s.tools = append(s.tools, []byte(echoTool))
	for _, t := range catalog.Tools()[:s.ntools-1] {
		s.tools = append(s.tools, catalogTool(t))
	}
}

func catalogTool(t catalog.Tool) []byte {
	props := make(map[string]any, len(t.Args))
	for _, a := range t.Args {
		p := map[string]any{"type": a.Type, "description": a.Description}
		if a.Type == "array" {
			p["items"] = map[string]any{"type": "string"}
		}
		props[a.Name] = p
	}
	b, err := json.Marshal(map[string]any{
		"name":        t.Name,
		"description": t.Description,
		"inputSchema": map[string]any{"type": "object", "properties": props, "required": t.Required},
	})
	if err != nil {
		panic(err) // maps of strings: cannot fail
	}
	return b
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
		// The encoded page is spliced in as it is: the same bytes json.Marshal wrote.
		var id bytes.Buffer
		if err := json.Compact(&id, req.ID); err != nil {
			return fmt.Errorf("encode: %w", err)
		}
		w.WriteString(`{"id":`)
		w.Write(id.Bytes())
		w.WriteString(`,"jsonrpc":"2.0","result":`)
		w.Write(s.list(req.Params))
		return flush(w)
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
	return flush(w)
}

// flush ends the answer's line and sends it.
func flush(w *bufio.Writer) error {
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

// list returns the encoded tools/list result (with the closing brace of the response) for the
// page the cursor names.
func (s *server) list(params json.RawMessage) []byte {
	var p struct {
		Cursor string `json:"cursor"`
	}
	_ = json.Unmarshal(params, &p)
	start, _ := strconv.Atoi(p.Cursor)
	start = min(max(start, 0), s.ntools)
	if b, ok := s.pages[start]; ok {
		return b
	}
	s.buildTools()
	end := s.ntools
	if s.page > 0 {
		end = min(start+s.page, end)
	}
	n := 32
	for _, t := range s.tools[start:end] {
		n += len(t) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, '{')
	if end < s.ntools {
		b = append(b, `"nextCursor":"`...)
		b = strconv.AppendInt(b, int64(end), 10)
		b = append(b, `",`...)
	}
	b = append(b, `"tools":[`...)
	for i, t := range s.tools[start:end] {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, t...)
	}
	b = append(b, "]}}"...)
	if s.pages == nil {
		s.pages = map[int][]byte{}
	}
	s.pages[start] = b
	return b
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
