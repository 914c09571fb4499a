package mcpface

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/spear-shell/spear-shell/mcpstdio"
)

// decodeMessage is jsonrpc.DecodeMessage, with the usual request read without it: an object
// whose keys are some of "jsonrpc" ("2.0"), "id" (an integer of at most 15 digits, or a plain
// string), "method" (a plain string) and "params" (any value but null), each once. The SDK
// decodes every message twice with a decoder that allocates about 32 KiB each time, which made
// a third of the face's garbage per call (docs/bench.md, face-invoke's sixth pass). Anything
// else, valid or not, is the SDK's to decode, so that errors and every unusual form read as the
// SDK reads them (FuzzDecodeMessage holds the two to the same answer).
func decodeMessage(line []byte) (jsonrpc.Message, error) {
	if m := decodeRequest(line); m != nil {
		return m, nil
	}
	return jsonrpc.DecodeMessage(line)
}

// maxDepth is the SDK's nesting limit (internal/json): a line with as many brackets, which may
// nest as deep, is left to it.
const maxDepth = 1000

// decodeRequest reads line as a plain request, or returns nil.
func decodeRequest(line []byte) *jsonrpc.Request {
	if !json.Valid(line) || bytes.Count(line, []byte("{"))+bytes.Count(line, []byte("[")) >= maxDepth {
		return nil
	}
	var version, method, id, params []byte
	plain := true
	_, err := mcpstdio.Members(line, mcpstdio.SkipSpace(line, 0), func(key, val []byte) {
		var slot *[]byte
		switch string(key) {
		case "jsonrpc":
			slot = &version
		case "id":
			slot = &id
		case "method":
			slot = &method
		case "params":
			slot = &params
		}
		if slot == nil || *slot != nil {
			plain = false // another key, or one said twice
			return
		}
		*slot = val
	})
	if err != nil || !plain || string(version) != `"2.0"` || method == nil || string(params) == "null" {
		return nil
	}
	name, ok := plainString(method)
	if !ok {
		return nil
	}
	req := &jsonrpc.Request{Method: name}
	switch {
	case id == nil:
	case id[0] == '"':
		s, ok := plainString(id)
		if !ok {
			return nil
		}
		req.ID, _ = jsonrpc.MakeID(s)
	default:
		n, ok := smallInt(id)
		if !ok {
			return nil
		}
		req.ID, _ = jsonrpc.MakeID(float64(n)) // a number is a float64 to the SDK's decoder
	}
	if params != nil {
		req.Params = json.RawMessage(append([]byte(nil), params...))
	}
	return req
}

// plainString reads v, a JSON string, when it is printable ASCII without escapes.
func plainString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	for _, c := range v[1 : len(v)-1] {
		if c == '"' || c == '\\' || c < 0x20 || c >= 0x7f {
			return "", false
		}
	}
	return string(v[1 : len(v)-1]), true
}

// smallInt reads an integer of at most 15 digits, which a float64 holds exactly.
func smallInt(b []byte) (int64, bool) {
	digits := b
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 15 {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	return n, err == nil
}
