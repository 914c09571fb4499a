package mcpstdio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// A tools/list page can hold thousands of tools. It arrives inside a message that dispatch has
// already validated as JSON, so the page is walked once here, by hand, rather than decoded
// again per tool: keys are matched exactly (after unescaping), the last of a repeated key wins,
// and every value is kept as the bytes the server sent. Each byte of a tool is passed over once
// to find where its members end; strings are decoded as encoding/json decodes them.

var errNotObject = errors.New("not a JSON object")

// decodePage appends a tools/list page to tools and returns its nextCursor ("" at the end).
func (c *Client) decodePage(raw json.RawMessage, tools *[]Tool) (string, error) {
	var list, cursor []byte
	_, err := Members(raw, SkipSpace(raw, 0), func(key, val []byte) {
		switch string(key) {
		case "tools":
			list = val
		case "nextCursor":
			cursor = val
		}
	})
	if err != nil {
		return "", fmt.Errorf("%w: %s", err, snippet(raw))
	}
	if len(list) == 0 || list[0] != '[' {
		return "", errors.New("result has no tools array")
	}
	err = elements(list, func(i int) (int, error) {
		if len(*tools) >= c.opts.MaxTools {
			return 0, fmt.Errorf("more than %d tools", c.opts.MaxTools)
		}
		var t Tool
		end, err := Members(list, i, func(key, val []byte) {
			switch string(key) {
			case "name":
				t.Name = stringValue(val)
			case "title":
				t.Title = stringValue(val)
			case "description":
				t.Description = stringValue(val)
			case "annotations":
				t.Annotations = nonNull(val)
			case "inputSchema":
				t.InputSchema = val
			case "outputSchema":
				t.OutputSchema = nonNull(val)
			}
		})
		if err != nil {
			item := list[i:]
			if e, serr := skipValue(list, i); serr == nil {
				item = list[i:e]
			}
			return 0, fmt.Errorf("tool %d: %w: %s", len(*tools), err, snippet(item))
		}
		t.Raw = list[i:end]
		*tools = append(*tools, t)
		return end, nil
	})
	if err != nil {
		return "", err
	}
	var next string
	if rc := nonNull(cursor); rc != nil {
		if err := json.Unmarshal(rc, &next); err != nil {
			return "", fmt.Errorf("nextCursor is not a string: %s", snippet(rc))
		}
	}
	return next, nil
}

// Members calls f with each key of the JSON object that starts at b[i] and its value's bytes,
// and returns where the object ends; b was validated as JSON. A key is passed as it is spelled
// unless it holds escapes, which are decoded first (as encoding/json decodes them); f must not
// keep it. (The MCP face reads a request's members with it too.)
func Members(b []byte, i int, f func(key, val []byte)) (int, error) {
	if i >= len(b) || b[i] != '{' {
		return 0, errNotObject
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, errNotObject
		}
		end, err := skipValue(b, i)
		if err != nil {
			return 0, err
		}
		key := b[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			key = []byte(stringValue(b[i:end]))
		}
		i = SkipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return 0, errNotObject
		}
		i = SkipSpace(b, i+1)
		end, err = skipValue(b, i)
		if err != nil {
			return 0, err
		}
		f(key, b[i:end])
		i = SkipSpace(b, end)
		if i >= len(b) {
			return 0, errNotObject
		}
		if b[i] == '}' {
			return i + 1, nil
		}
		if b[i] != ',' {
			return 0, errNotObject
		}
		i = SkipSpace(b, i+1)
	}
}

// elements calls f with the start of each element of the JSON array in b; f returns where
// the element ends.
func elements(b []byte, f func(i int) (int, error)) error {
	var errArray error = arrayError{} // a value of no size: no allocation at each call
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return errArray
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return nil
	}
	for {
		if i >= len(b) {
			return errArray
		}
		end, err := f(i)
		if err != nil {
			return err
		}
		i = SkipSpace(b, end)
		if i >= len(b) {
			return errArray
		}
		if b[i] == ']' {
			return nil
		}
		if b[i] != ',' {
			return errArray
		}
		i = SkipSpace(b, i+1)
	}
}

type arrayError struct{}

func (arrayError) Error() string { return "not a JSON array" }

// SkipSpace returns the index of the first byte at or after i that is not JSON white space.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// structural marks the bytes skipValue stops at inside an object or array (a literal, so
// package initialisation stays free of work).
var structural = [256]bool{'"': true, '{': true, '}': true, '[': true, ']': true}

// skipValue returns the end of the JSON value starting at b[i]. The bytes were validated as
// JSON before, so it only needs to find where a value ends: strings (with escapes), nested
// objects and arrays, and the bare words of numbers and literals.
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errors.New("unexpected end of JSON")
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			for j < len(b) && !structural[b[j]] {
				j++
			}
			if j >= len(b) {
				break
			}
			switch b[j] {
			case '"':
				end, err := skipString(b, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			default: // '}', ']'
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errors.New("unterminated object or array")
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	if j == i {
		return 0, fmt.Errorf("unexpected %q", b[i])
	}
	return j, nil
}

// skipString returns the end of the string starting at b[i] ('"'), which was validated: the
// first quote after it that no backslash escapes.
func skipString(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, errors.New("unterminated string")
}

// stringValue decodes a JSON string as encoding/json does; a value of another kind, or a
// string it would refuse, is "" (the caller judges it). Plain strings (no escapes, valid
// UTF-8) are taken as they are.
func stringValue(v []byte) string {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return ""
	}
	body := v[1 : len(v)-1]
	esc := bytes.IndexByte(body, '\\')
	if esc < 0 && utf8.Valid(body) {
		for _, c := range body {
			if c < 0x20 || c == '"' {
				return ""
			}
		}
		return string(body)
	}
	s, _ := unquote(body)
	return s
}

// unquote decodes the body of a JSON string the way encoding/json's unquote does: escapes,
// UTF-16 surrogate pairs (a lone or broken surrogate becomes U+FFFD), and each byte of
// invalid UTF-8 becomes U+FFFD. ok is false for what encoding/json refuses (an unknown
// escape, a quote or a control byte).
func unquote(s []byte) (string, bool) {
	var b strings.Builder
	b.Grow(len(s))
	for r := 0; r < len(s); {
		switch c := s[r]; {
		case c == '\\':
			r++
			if r >= len(s) {
				return "", false
			}
			switch s[r] {
			case '"', '\\', '/', '\'':
				b.WriteByte(s[r])
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				rr := getu4(s[r-1:])
				if rr < 0 {
					return "", false
				}
				r += 5
				if utf16.IsSurrogate(rr) {
					if dec := utf16.DecodeRune(rr, getu4(s[r:])); dec != utf8.RuneError {
						r += 6
						b.WriteRune(dec)
						continue
					}
					rr = utf8.RuneError
				}
				b.WriteRune(rr)
				continue
			default:
				return "", false
			}
			r++
		case c == '"', c < ' ':
			return "", false
		case c < utf8.RuneSelf:
			// A run of plain ASCII at once.
			n := r + 1
			for n < len(s) && s[n] >= ' ' && s[n] < utf8.RuneSelf && s[n] != '\\' && s[n] != '"' {
				n++
			}
			b.Write(s[r:n])
			r = n
		default:
			rr, size := utf8.DecodeRune(s[r:])
			b.WriteRune(rr) // U+FFFD for a byte of invalid UTF-8
			r += size
		}
	}
	return b.String(), true
}

// getu4 decodes \uXXXX at the start of s, or returns -1.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
