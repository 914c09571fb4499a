package invocation

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// maxJSONDepth matches encoding/json's nesting limit, so what passes here decodes.
const maxJSONDepth = 10000

// CheckObject validates that s is exactly one JSON object (RFC 8259) with no
// duplicate keys at any depth and nothing after it but white space. It only
// validates: the caller keeps the text, so numbers keep their precision.
func CheckObject(s string) error {
	if !utf8.ValidString(s) {
		return errors.New("it is not valid UTF-8")
	}
	c := jsonChecker{s: s}
	c.space()
	if c.i == len(s) {
		return errors.New("it is empty")
	}
	if s[c.i] != '{' {
		if k := c.kind(); k != "" {
			return fmt.Errorf("it is %s, not an object", k)
		}
		return fmt.Errorf("invalid character %q at the start (words are not expanded: write the object itself)", s[c.i])
	}
	if err := c.value(0); err != nil {
		return err
	}
	c.space()
	if c.i != len(s) {
		return fmt.Errorf("unexpected data after the object at byte %d", c.i)
	}
	return nil
}

type jsonChecker struct {
	s string
	i int
}

func (c *jsonChecker) space() {
	for c.i < len(c.s) {
		switch c.s[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

// kind names the JSON value starting at c.i, for messages, or "" if none does.
func (c *jsonChecker) kind() string {
	switch b := c.s[c.i]; {
	case b == '[':
		return "an array"
	case b == '"':
		return "a string"
	case b == 'n':
		return "null"
	case b == 't' || b == 'f':
		return "a boolean"
	case b == '-' || b >= '0' && b <= '9':
		return "a number"
	}
	return ""
}

func (c *jsonChecker) errorf(format string, args ...any) error {
	return fmt.Errorf("byte %d: %s", c.i, fmt.Sprintf(format, args...))
}

func (c *jsonChecker) value(depth int) error {
	if depth >= maxJSONDepth {
		return c.errorf("nested too deeply")
	}
	c.space()
	if c.i == len(c.s) {
		return c.errorf("unexpected end of input")
	}
	switch b := c.s[c.i]; {
	case b == '{':
		return c.object(depth)
	case b == '[':
		return c.array(depth)
	case b == '"':
		_, err := c.str()
		return err
	case b == '-' || b >= '0' && b <= '9':
		return c.number()
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(c.s)-c.i >= len(lit) && c.s[c.i:c.i+len(lit)] == lit {
			c.i += len(lit)
			return nil
		}
	}
	return c.errorf("invalid character %q", c.s[c.i])
}

func (c *jsonChecker) object(depth int) error {
	c.i++ // {
	c.space()
	if c.i < len(c.s) && c.s[c.i] == '}' {
		c.i++
		return nil
	}
	seen := make(map[string]struct{})
	for {
		c.space()
		if c.i == len(c.s) || c.s[c.i] != '"' {
			return c.errorf("expected a string key")
		}
		key, err := c.str()
		if err != nil {
			return err
		}
		if _, dup := seen[key]; dup {
			return fmt.Errorf("duplicate key %s", strconv.Quote(key))
		}
		seen[key] = struct{}{}
		c.space()
		if c.i == len(c.s) || c.s[c.i] != ':' {
			return c.errorf("expected ':' after a key")
		}
		c.i++
		if err := c.value(depth + 1); err != nil {
			return err
		}
		c.space()
		if c.i == len(c.s) {
			return c.errorf("unexpected end of input in an object")
		}
		switch c.s[c.i] {
		case ',':
			c.i++
		case '}':
			c.i++
			return nil
		default:
			return c.errorf("expected ',' or '}' in an object")
		}
	}
}

func (c *jsonChecker) array(depth int) error {
	c.i++ // [
	c.space()
	if c.i < len(c.s) && c.s[c.i] == ']' {
		c.i++
		return nil
	}
	for {
		if err := c.value(depth + 1); err != nil {
			return err
		}
		c.space()
		if c.i == len(c.s) {
			return c.errorf("unexpected end of input in an array")
		}
		switch c.s[c.i] {
		case ',':
			c.i++
		case ']':
			c.i++
			return nil
		default:
			return c.errorf("expected ',' or ']' in an array")
		}
	}
}

// str reads a string and returns its decoded value (for duplicate detection:
// "a" and "\u0061" are the same key to a decoder).
func (c *jsonChecker) str() (string, error) {
	c.i++ // opening quote
	var out []byte
	start := c.i
	for c.i < len(c.s) {
		b := c.s[c.i]
		switch {
		case b == '"':
			if out == nil {
				v := c.s[start:c.i]
				c.i++
				return v, nil
			}
			out = append(out, c.s[start:c.i]...)
			c.i++
			return string(out), nil
		case b < 0x20:
			return "", c.errorf("control character in a string")
		case b == '\\':
			out = append(out, c.s[start:c.i]...)
			if c.i+1 == len(c.s) {
				return "", c.errorf("unexpected end of input in a string")
			}
			e := c.s[c.i+1]
			c.i += 2
			switch e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, err := c.hex4()
				if err != nil {
					return "", err
				}
				out = utf8.AppendRune(out, r)
			default:
				return "", c.errorf("invalid escape %q", "\\"+string(e))
			}
			start = c.i
		default:
			c.i++
		}
	}
	return "", c.errorf("unexpected end of input in a string")
}

// hex4 reads the four hex digits of a \u escape, joining surrogate pairs as
// encoding/json does (a lone surrogate decodes to U+FFFD).
func (c *jsonChecker) hex4() (rune, error) {
	read := func() (rune, bool) {
		if len(c.s)-c.i < 4 {
			return 0, false
		}
		v, err := strconv.ParseUint(c.s[c.i:c.i+4], 16, 32)
		if err != nil {
			return 0, false
		}
		c.i += 4
		return rune(v), true
	}
	r, ok := read()
	if !ok {
		return 0, c.errorf("invalid \\u escape")
	}
	if r < 0xd800 || r > 0xdbff {
		if r >= 0xdc00 && r <= 0xdfff {
			return utf8.RuneError, nil
		}
		return r, nil
	}
	// A high surrogate: a low one must follow for a pair.
	if len(c.s)-c.i >= 6 && c.s[c.i] == '\\' && c.s[c.i+1] == 'u' {
		save := c.i
		c.i += 2
		lo, ok := read()
		if ok && lo >= 0xdc00 && lo <= 0xdfff {
			return (r-0xd800)<<10 | (lo - 0xdc00) + 0x10000, nil
		}
		c.i = save
	}
	return utf8.RuneError, nil
}

func (c *jsonChecker) number() error {
	start := c.i
	if c.s[c.i] == '-' {
		c.i++
	}
	digits := func() int {
		n := 0
		for c.i < len(c.s) && c.s[c.i] >= '0' && c.s[c.i] <= '9' {
			c.i++
			n++
		}
		return n
	}
	if c.i < len(c.s) && c.s[c.i] == '0' {
		c.i++
	} else if digits() == 0 {
		c.i = start
		return c.errorf("invalid number")
	}
	if c.i < len(c.s) && c.s[c.i] == '.' {
		c.i++
		if digits() == 0 {
			return c.errorf("invalid number: digits expected after '.'")
		}
	}
	if c.i < len(c.s) && (c.s[c.i] == 'e' || c.s[c.i] == 'E') {
		c.i++
		if c.i < len(c.s) && (c.s[c.i] == '+' || c.s[c.i] == '-') {
			c.i++
		}
		if digits() == 0 {
			return c.errorf("invalid number: digits expected in the exponent")
		}
	}
	return nil
}
