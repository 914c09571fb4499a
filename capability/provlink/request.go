package provlink

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// DecodeRequest reads one request line exactly as json.Unmarshal reads it into a Request. A
// call as Conn writes it (the keys json.Marshal writes for one, in its order, no white space,
// strings without escapes), nearly every line a holder reads, is read in one walk over its
// bytes, its arguments checked as JSON as Unmarshal checks them: the reflection of Unmarshal was
// a tenth of the keeper's time a call (docs/bench.md, face-invoke). Anything else is
// json.Unmarshal's (FuzzDecodeRequest holds the two equal).
func DecodeRequest(line []byte) (Request, error) {
	if req, ok := quickCall(line); ok {
		return req, nil
	}
	var req Request
	err := json.Unmarshal(line, &req)
	return req, err
}

func quickCall(line []byte) (req Request, ok bool) {
	rest, ok := bytes.CutPrefix(bytes.TrimSuffix(line, []byte("\n")), []byte(`{"op":"call"`))
	if !ok {
		return req, false
	}
	req.Op = OpCall
	if r, found := bytes.CutPrefix(rest, []byte(`,"name":`)); found {
		if req.Name, rest, ok = plainString(r); !ok {
			return req, false
		}
	}
	if r, found := bytes.CutPrefix(rest, []byte(`,"arguments":`)); found {
		var v []byte
		if v, rest, ok = rawValue(r); !ok {
			return req, false
		}
		req.Arguments = bytes.Clone(v)
	}
	if r, found := bytes.CutPrefix(rest, []byte(`,"listing":`)); found {
		if req.Listing, rest, ok = plainString(r); !ok {
			return req, false
		}
	}
	if r, found := bytes.CutPrefix(rest, []byte(`,"timeout_ms":`)); found {
		if req.TimeoutMS, rest, ok = plainInt(r); !ok {
			return req, false
		}
	}
	return req, string(rest) == "}"
}

// plainString reads a JSON string at the start of b that needs no unescaping (no backslash, no
// control character, valid UTF-8), and what follows it.
func plainString(b []byte) (s string, rest []byte, ok bool) {
	if len(b) == 0 || b[0] != '"' {
		return "", nil, false
	}
	end := bytes.IndexByte(b[1:], '"')
	if end < 0 {
		return "", nil, false
	}
	v := b[1 : 1+end]
	for _, c := range v {
		if c < 0x20 || c == '\\' {
			return "", nil, false
		}
	}
	if !utf8.Valid(v) {
		return "", nil, false
	}
	return string(v), b[end+2:], true
}

// plainInt reads a positive integer of at most 18 digits without a leading zero.
func plainInt(b []byte) (n int64, rest []byte, ok bool) {
	end := 0
	for end < len(b) && b[end] >= '0' && b[end] <= '9' {
		end++
	}
	if end == 0 || end > 18 || b[0] == '0' {
		return 0, nil, false
	}
	n, err := strconv.ParseInt(string(b[:end]), 10, 64)
	return n, b[end:], err == nil
}

// rawValue finds the end of the JSON value at the start of b (a string's escapes skipped, the
// nesting of objects and arrays followed) and checks that it is one valid JSON value with no
// white space around it.
func rawValue(b []byte) (v, rest []byte, ok bool) {
	end := -1
	depth, inString := 0, false
scan:
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
				if depth == 0 {
					end = i + 1
					break scan
				}
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 { // the request's own brace: a number or literal ended here
				end = i
				break scan
			}
			if depth--; depth == 0 {
				end = i + 1
				break scan
			}
		case ',':
			if depth == 0 {
				end = i
				break scan
			}
		}
	}
	if end <= 0 {
		return nil, nil, false
	}
	v = b[:end]
	if isSpace(v[0]) || isSpace(v[len(v)-1]) || !json.Valid(v) {
		return nil, nil, false
	}
	return v, b[end:], true
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
