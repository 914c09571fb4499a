package mcpstdio

import (
	"bytes"
	"errors"
)

// A hand-written JSON validator for what servers send: one pass over a message, instead of
// encoding/json validating it and then skipping through it again to split it into members.
// It accepts exactly what json.Valid accepts (FuzzScanValue holds it to that): the grammar of
// RFC 8259, any byte from 0x20 up inside strings (encoding/json does not check UTF-8 there),
// and at most maxDepth nested objects and arrays.

// maxDepth is encoding/json's limit on nesting (its scanner's maxNestingDepth).
const maxDepth = 10000

var errSyntax = errors.New("invalid JSON")

// strSpecial marks the bytes that end a plain run inside a JSON string: the controls, which
// are refused, and '"' and '\\'. It and isHex are literals, laid out by the compiler: package
// initialisation stays free of work.
var strSpecial = [256]bool{
	0x00: true, 0x01: true, 0x02: true, 0x03: true, 0x04: true, 0x05: true, 0x06: true, 0x07: true,
	0x08: true, 0x09: true, 0x0a: true, 0x0b: true, 0x0c: true, 0x0d: true, 0x0e: true, 0x0f: true,
	0x10: true, 0x11: true, 0x12: true, 0x13: true, 0x14: true, 0x15: true, 0x16: true, 0x17: true,
	0x18: true, 0x19: true, 0x1a: true, 0x1b: true, 0x1c: true, 0x1d: true, 0x1e: true, 0x1f: true,
	'"': true, '\\': true,
}

// isHex marks the hexadecimal digits.
var isHex = [256]bool{
	'0': true, '1': true, '2': true, '3': true, '4': true, '5': true, '6': true, '7': true, '8': true, '9': true,
	'a': true, 'b': true, 'c': true, 'd': true, 'e': true, 'f': true,
	'A': true, 'B': true, 'C': true, 'D': true, 'E': true, 'F': true,
}

// validJSON reports whether b is one JSON value, with blanks around it allowed.
func validJSON(b []byte) bool {
	i := SkipSpace(b, 0)
	end, err := scanValue(b, i, 0)
	return err == nil && SkipSpace(b, end) == len(b)
}

// scanValue validates the JSON value that starts at b[i] (no blanks before it) and returns
// where it ends. depth is how many objects and arrays enclose it.
func scanValue(b []byte, i, depth int) (int, error) {
	// open holds the enclosing containers this call opened, innermost last: '{' or '['.
	var stack [64]byte
	open := stack[:0]
	for {
		// A value starts at b[i].
		if i >= len(b) {
			return 0, errSyntax
		}
		switch c := b[i]; {
		case c == '"':
			end, err := scanString(b, i)
			if err != nil {
				return 0, err
			}
			i = end
		case c == '{' || c == '[':
			if depth+len(open)+1 > maxDepth {
				return 0, errors.New("JSON nested too deeply")
			}
			open = append(open, c)
			i = SkipSpace(b, i+1)
			if i < len(b) && b[i] == c+2 { // '}' is '{'+2, ']' is '['+2
				open = open[:len(open)-1]
				i++
				break
			}
			if c == '{' {
				end, err := scanKey(b, i)
				if err != nil {
					return 0, err
				}
				i = end
			}
			continue
		case c == '-' || c >= '0' && c <= '9':
			end, err := scanNumber(b, i)
			if err != nil {
				return 0, err
			}
			i = end
		case c == 't':
			if !hasWord(b, i, "true") {
				return 0, errSyntax
			}
			i += 4
		case c == 'f':
			if !hasWord(b, i, "false") {
				return 0, errSyntax
			}
			i += 5
		case c == 'n':
			if !hasWord(b, i, "null") {
				return 0, errSyntax
			}
			i += 4
		default:
			return 0, errSyntax
		}
		// A value ended at b[i]: close what it ends, then find the next value.
		for {
			if len(open) == 0 {
				return i, nil
			}
			i = SkipSpace(b, i)
			if i >= len(b) {
				return 0, errSyntax
			}
			top := open[len(open)-1]
			if b[i] == top+2 {
				open = open[:len(open)-1]
				i++
				continue
			}
			if b[i] != ',' {
				return 0, errSyntax
			}
			i = SkipSpace(b, i+1)
			if top == '{' {
				end, err := scanKey(b, i)
				if err != nil {
					return 0, err
				}
				i = end
			}
			break
		}
	}
}

// scanKey validates an object's key at b[i], its colon and the blanks after it, and returns
// where the value starts.
func scanKey(b []byte, i int) (int, error) {
	if i >= len(b) || b[i] != '"' {
		return 0, errSyntax
	}
	end, err := scanString(b, i)
	if err != nil {
		return 0, err
	}
	i = SkipSpace(b, end)
	if i >= len(b) || b[i] != ':' {
		return 0, errSyntax
	}
	return SkipSpace(b, i+1), nil
}

// scanString validates the string that starts at b[i] ('"') and returns where it ends.
func scanString(b []byte, i int) (int, error) {
	i++
	for {
		for i < len(b) && !strSpecial[b[i]] {
			i++
		}
		if i >= len(b) {
			return 0, errSyntax
		}
		switch b[i] {
		case '"':
			return i + 1, nil
		case '\\':
			if i+1 >= len(b) {
				return 0, errSyntax
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex[b[i+2]] || !isHex[b[i+3]] || !isHex[b[i+4]] || !isHex[b[i+5]] {
					return 0, errSyntax
				}
				i += 6
			default:
				return 0, errSyntax
			}
		default: // a control byte
			return 0, errSyntax
		}
	}
}

// scanNumber validates the number that starts at b[i] and returns where it ends:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func scanNumber(b []byte, i int) (int, error) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return 0, errSyntax
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return 0, errSyntax
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return 0, errSyntax
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return 0, errSyntax
		}
		i = j
	}
	return i, nil
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

func hasWord(b []byte, i int, w string) bool {
	return len(b)-i >= len(w) && string(b[i:i+len(w)]) == w
}

// message is a JSON-RPC message split into the members the client reads. Each value is the
// bytes the server sent (a slice of the line); a member named twice keeps its last value, and
// keys are matched exactly after unescaping, as decoding into a map does.
type message struct {
	jsonrpc, id, method, result, err    []byte
	hasID, hasMethod, hasResult, hasErr bool
}

// splitMessage validates a whole line as JSON in one pass and splits the object it holds into
// members; ok is false when the line is not valid JSON or not an object.
func splitMessage(line []byte) (m message, ok bool) {
	i := SkipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return m, false
	}
	i = SkipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		return m, SkipSpace(line, i+1) == len(line)
	}
	for {
		if i >= len(line) || line[i] != '"' {
			return m, false
		}
		kstart := i
		kend, err := scanString(line, i)
		if err != nil {
			return m, false
		}
		key := line[kstart+1 : kend-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			key = []byte(stringValue(line[kstart:kend])) // escapes are decoded before keys compare
		}
		i = SkipSpace(line, kend)
		if i >= len(line) || line[i] != ':' {
			return m, false
		}
		i = SkipSpace(line, i+1)
		vend, err := scanValue(line, i, 1)
		if err != nil {
			return m, false
		}
		val := line[i:vend]
		switch string(key) {
		case "jsonrpc":
			m.jsonrpc = val
		case "id":
			m.id, m.hasID = val, true
		case "method":
			m.method, m.hasMethod = val, true
		case "result":
			m.result, m.hasResult = val, true
		case "error":
			m.err, m.hasErr = val, true
		}
		i = SkipSpace(line, vend)
		if i >= len(line) {
			return m, false
		}
		if line[i] == '}' {
			return m, SkipSpace(line, i+1) == len(line)
		}
		if line[i] != ',' {
			return m, false
		}
		i = SkipSpace(line, i+1)
	}
}
