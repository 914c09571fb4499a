package mcpstdio

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// A tools/list page can hold thousands of tools. It arrives inside a message that dispatch has
// already decoded as valid JSON, so the page is walked once here, by hand, rather than decoded
// again per tool: keys are matched exactly, the last of a repeated key wins, and every value is
// kept as the bytes the server sent.

var errNotObject = errors.New("not a JSON object")

// decodePage appends a tools/list page to tools and returns its nextCursor ("" at the end).
func (c *Client) decodePage(raw json.RawMessage, tools *[]Tool) (string, error) {
	var list, cursor []byte
	err := members(raw, func(key string, val []byte) {
		switch key {
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
	err = elements(list, func(item []byte) error {
		if len(*tools) >= c.opts.MaxTools {
			return fmt.Errorf("more than %d tools", c.opts.MaxTools)
		}
		t := Tool{Raw: item}
		if err := members(item, func(key string, val []byte) {
			switch key {
			case "name":
				t.Name = stringValue(val)
			case "description":
				t.Description = stringValue(val)
			case "inputSchema":
				t.InputSchema = val
			case "outputSchema":
				t.OutputSchema = nonNull(val)
			}
		}); err != nil {
			return fmt.Errorf("tool %d: %w: %s", len(*tools), err, snippet(item))
		}
		*tools = append(*tools, t)
		return nil
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

// members calls f with each key of the JSON object in b and its value's bytes.
func members(b []byte, f func(key string, val []byte)) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return errNotObject
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return errNotObject
		}
		end, err := skipValue(b, i)
		if err != nil {
			return err
		}
		key := stringValue(b[i:end])
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return errNotObject
		}
		i = skipSpace(b, i+1)
		end, err = skipValue(b, i)
		if err != nil {
			return err
		}
		f(key, b[i:end])
		i = skipSpace(b, end)
		if i >= len(b) {
			return errNotObject
		}
		if b[i] == '}' {
			return nil
		}
		if b[i] != ',' {
			return errNotObject
		}
		i = skipSpace(b, i+1)
	}
}

// elements calls f with the bytes of each element of the JSON array in b.
func elements(b []byte, f func(item []byte) error) error {
	errArray := errors.New("not a JSON array")
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return errArray
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return nil
	}
	for {
		end, err := skipValue(b, i)
		if err != nil {
			return err
		}
		if err := f(b[i:end]); err != nil {
			return err
		}
		i = skipSpace(b, end)
		if i >= len(b) {
			return errArray
		}
		if b[i] == ']' {
			return nil
		}
		if b[i] != ',' {
			return errArray
		}
		i = skipSpace(b, i+1)
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value starting at b[i]. The bytes were validated as
// JSON before, so it only needs to find where a value ends: strings (with escapes), nested
// objects and arrays, and the bare words of numbers and literals.
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errors.New("unexpected end of JSON")
	}
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1, nil
			}
		}
		return 0, errors.New("unterminated string")
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, err := skipValue(b, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
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

// stringValue decodes a JSON string; a value of another kind is "" (the caller judges it).
// Plain strings (no escapes, valid UTF-8, no control bytes) are taken as they are.
func stringValue(v []byte) string {
	if len(v) < 2 || v[0] != '"' {
		return ""
	}
	body := v[1 : len(v)-1]
	plain := utf8.Valid(body)
	for _, c := range body {
		if c == '\\' || c < 0x20 {
			plain = false
			break
		}
	}
	if plain {
		return string(body)
	}
	var s string
	_ = json.Unmarshal(v, &s)
	return s
}
