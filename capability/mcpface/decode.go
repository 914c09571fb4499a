package mcpface

import (
	"encoding/json"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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

// maxDepth is the SDK's nesting limit (internal/json): a deeper message is left to it.
const maxDepth = 1000

// decodeRequest reads line as a plain request, or returns nil.
func decodeRequest(line []byte) *jsonrpc.Request {
	if !json.Valid(line) {
		return nil
	}
	i := skipSpace(line, 0)
	if line[i] != '{' {
		return nil
	}
	var version, method, id, params []byte
	seen := 0
	for i = skipSpace(line, i+1); line[i] != '}'; {
		key, next, ok := plainString(line, i)
		if !ok {
			return nil
		}
		i = skipSpace(line, skipSpace(line, next)+1) // past the colon
		end, ok := skipValue(line, i)
		if !ok {
			return nil
		}
		value := line[i:end]
		var slot *[]byte
		var bit int
		switch string(key) {
		case "jsonrpc":
			slot, bit = &version, 1
		case "id":
			slot, bit = &id, 2
		case "method":
			slot, bit = &method, 4
		case "params":
			slot, bit = &params, 8
		default:
			return nil
		}
		if seen&bit != 0 {
			return nil
		}
		seen |= bit
		*slot = value
		i = skipSpace(line, end)
		if line[i] == ',' {
			i = skipSpace(line, i+1)
		}
	}
	if string(version) != `"2.0"` || method == nil || string(params) == "null" {
		return nil
	}
	name, _, ok := plainString(method, 0)
	if !ok || len(name)+2 != len(method) {
		return nil
	}
	req := &jsonrpc.Request{Method: string(name)}
	switch {
	case id == nil:
	case id[0] == '"':
		s, _, ok := plainString(id, 0)
		if !ok || len(s)+2 != len(id) {
			return nil
		}
		req.ID, _ = jsonrpc.MakeID(string(s))
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

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// plainString reads the string at b[i]: its content and the index past it, when it is printable
// ASCII without escapes.
func plainString(b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, i, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return b[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x7f:
			return nil, i, false
		}
	}
	return nil, i, false
}

// skipValue returns the index past the valid JSON value at b[i], or false when it nests deeper
// than maxDepth.
func skipValue(b []byte, i int) (int, bool) {
	depth := 0
	inString, escaped := false, false
	for ; i < len(b); i++ {
		c := b[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
				if depth == 0 {
					return i + 1, true
				}
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth >= maxDepth { // the message's own object is one level more
				return i, false
			}
		case '}', ']':
			if depth == 0 {
				return i, true // the end of the enclosing object: a number or literal ended
			}
			depth--
			if depth == 0 {
				return i + 1, true
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i, true
			}
		}
	}
	return i, depth == 0
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
