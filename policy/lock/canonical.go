package lock

// The canonical form of a JSON value, as RFC 8785 (JSON Canonicalization Scheme) writes it, with
// one deliberate difference: a number is kept as the server wrote it (RFC 8785 re-serialises
// numbers as ECMAScript does), so that "1.0" and "1" in a schema stay apart and nothing depends
// on floating point. Otherwise:
//   - no insignificant whitespace;
//   - object members sorted by their names' UTF-16 code units (RFC 8785 section 3.2.3), which
//     orders names outside the Basic Multilingual Plane before U+E000..U+FFFF, unlike a sort of
//     their UTF-8 bytes;
//   - strings escaped as RFC 8785 section 3.2.2.2 says: \" and \\, the five short escapes
//     \b \t \n \f \r, every other control character below U+0020 as \u00xx in lower-case hex,
//     everything else as itself in UTF-8 (U+007F, U+2028 and non-ASCII included);
//   - a member name repeated in one object is an error (RFC 8785 requires I-JSON).
// Strings are decoded as encoding/json decodes them, which is how every other part of
// spear-shell reads a provider's definitions: invalid UTF-8 and lone surrogate escapes become
// U+FFFD, where RFC 8785 would refuse them. What is locked is what the turn would be shown.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"unicode/utf16"
	"unicode/utf8"
)

// Canonical returns the canonical form of the one JSON value in raw.
func Canonical(raw []byte) (string, error) {
	c := canonicaliser{in: raw}
	out, err := c.value(nil, c.space(0), 0)
	if err != nil {
		return "", err
	}
	if end := c.space(c.pos); end != len(raw) {
		return "", fmt.Errorf("more than one JSON value (at byte %d)", end)
	}
	return string(out), nil
}

// maxDepth bounds nesting, as encoding/json's decoder does.
const maxDepth = 10000

// canonicaliser walks one JSON text once, writing its canonical form: a listing of thousands
// of tools is put in canonical form at each judgement under a lock, so no tokens or trees are
// made (canonical_test.go holds a reference built on encoding/json's tokens, and FuzzCanonical
// compares the two).
type canonicaliser struct {
	in  []byte
	pos int // where value and its helpers stopped
}

func (c *canonicaliser) space(i int) int {
	for i < len(c.in) && (c.in[i] == ' ' || c.in[i] == '\t' || c.in[i] == '\n' || c.in[i] == '\r') {
		i++
	}
	return i
}

func (c *canonicaliser) fail(i int, what string) error {
	if i >= len(c.in) {
		return fmt.Errorf("unexpected end of JSON input (%s)", what)
	}
	return fmt.Errorf("invalid character %q at byte %d (%s)", c.in[i], i, what)
}

// value appends the canonical form of the value at i to out; c.pos is where it ends.
func (c *canonicaliser) value(out []byte, i, depth int) ([]byte, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxDepth)
	}
	if i >= len(c.in) {
		return nil, errors.New("no JSON value")
	}
	switch b := c.in[i]; {
	case b == '{':
		return c.object(out, i, depth)
	case b == '[':
		out = append(out, '[')
		i = c.space(i + 1)
		if i < len(c.in) && c.in[i] == ']' {
			c.pos = i + 1
			return append(out, ']'), nil
		}
		for n := 0; ; n++ {
			if n > 0 {
				out = append(out, ',')
			}
			var err error
			if out, err = c.value(out, i, depth+1); err != nil {
				return nil, err
			}
			i = c.space(c.pos)
			if i < len(c.in) && c.in[i] == ',' {
				i = c.space(i + 1)
				continue
			}
			if i < len(c.in) && c.in[i] == ']' {
				c.pos = i + 1
				return append(out, ']'), nil
			}
			return nil, c.fail(i, "in an array")
		}
	case b == '"':
		s, end, err := c.str(i)
		if err != nil {
			return nil, err
		}
		c.pos = end
		return appendString(out, s), nil
	case b == '-' || b >= '0' && b <= '9':
		end, ok := numberEnd(c.in, i)
		if !ok {
			return nil, c.fail(end, "in a number")
		}
		c.pos = end
		return append(out, c.in[i:end]...), nil // as written
	}
	for _, lit := range []string{"true", "false", "null"} {
		if bytes.HasPrefix(c.in[i:], []byte(lit)) {
			c.pos = i + len(lit)
			return append(out, lit...), nil
		}
	}
	return nil, c.fail(i, "looking for a value")
}

// object appends the canonical form of the object at i: its members sorted by their names'
// UTF-16 code units, a repeated name an error.
func (c *canonicaliser) object(out []byte, i, depth int) ([]byte, error) {
	type member struct {
		key        string
		start, end int // the value's canonical form in vals
	}
	var ms []member
	var vals []byte
	i = c.space(i + 1)
	if i < len(c.in) && c.in[i] == '}' {
		c.pos = i + 1
		return append(out, '{', '}'), nil
	}
	for {
		if i >= len(c.in) || c.in[i] != '"' {
			return nil, c.fail(i, "looking for an object key")
		}
		key, end, err := c.str(i)
		if err != nil {
			return nil, err
		}
		i = c.space(end)
		if i >= len(c.in) || c.in[i] != ':' {
			return nil, c.fail(i, "after an object key")
		}
		start := len(vals)
		if vals, err = c.value(vals, c.space(i+1), depth+1); err != nil {
			return nil, err
		}
		ms = append(ms, member{key, start, len(vals)})
		i = c.space(c.pos)
		if i < len(c.in) && c.in[i] == ',' {
			i = c.space(i + 1)
			continue
		}
		if i < len(c.in) && c.in[i] == '}' {
			c.pos = i + 1
			break
		}
		return nil, c.fail(i, "in an object")
	}
	slices.SortStableFunc(ms, func(x, y member) int { return compareUTF16(x.key, y.key) })
	out = append(out, '{')
	for k, m := range ms {
		if k > 0 {
			if ms[k-1].key == m.key {
				return nil, fmt.Errorf("the member name %q is repeated in one object", m.key)
			}
			out = append(out, ',')
		}
		out = appendString(out, m.key)
		out = append(out, ':')
		out = append(out, vals[m.start:m.end]...)
	}
	return append(out, '}'), nil
}

// str decodes the string at i as encoding/json does (invalid UTF-8 and lone surrogates become
// U+FFFD) and returns where it ends. A string of valid UTF-8 without escapes is its own bytes.
func (c *canonicaliser) str(i int) (string, int, error) {
	plain := true
	for j := i + 1; j < len(c.in); j++ {
		switch b := c.in[j]; {
		case b == '"':
			seg := c.in[i+1 : j]
			if plain && utf8.Valid(seg) {
				return string(seg), j + 1, nil
			}
			var s string
			if err := json.Unmarshal(c.in[i:j+1], &s); err != nil {
				return "", 0, fmt.Errorf("a string at byte %d: %w", i, err)
			}
			return s, j + 1, nil
		case b == '\\':
			plain = false
			j++ // the escaped byte cannot end the string
		case b < 0x20:
			return "", 0, c.fail(j, "a control character in a string")
		}
	}
	return "", 0, c.fail(len(c.in), "in a string")
}

// numberEnd returns where the JSON number at i ends, and whether it is one (RFC 8259 section 6).
func numberEnd(b []byte, i int) (int, bool) {
	digits := func(i int) int {
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i
	}
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(i)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

// compareUTF16 orders two strings by their UTF-16 code units (RFC 8785 section 3.2.3): UTF-8
// byte order but for the code points above U+FFFF, whose surrogates (D800-DFFF) sort below
// U+E000..U+FFFF.
func compareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			return cmp.Compare(utf16Key(ra), utf16Key(rb))
		}
		a, b = a[na:], b[nb:]
	}
	return cmp.Compare(len(a), len(b))
}

// utf16Key is r's first UTF-16 code unit, widened so that equal first units of two code
// points above U+FFFF still compare by their second.
func utf16Key(r rune) int64 {
	if r <= 0xffff {
		return int64(r) << 16
	}
	hi, lo := utf16.EncodeRune(r)
	return int64(hi)<<16 | int64(lo)
}

const hexDigits = "0123456789abcdef"

// appendString appends s as RFC 8785 section 3.2.2.2 escapes it.
func appendString(out []byte, s string) []byte {
	out = append(out, '"')
	for i := 0; i < len(s); i++ {
		switch b := s[i]; b {
		case '"':
			out = append(out, '\\', '"')
		case '\\':
			out = append(out, '\\', '\\')
		case '\b':
			out = append(out, '\\', 'b')
		case '\t':
			out = append(out, '\\', 't')
		case '\n':
			out = append(out, '\\', 'n')
		case '\f':
			out = append(out, '\\', 'f')
		case '\r':
			out = append(out, '\\', 'r')
		default:
			if b < 0x20 {
				out = append(out, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
			} else {
				out = append(out, b) // s is valid UTF-8: its other bytes are itself
			}
		}
	}
	return append(out, '"')
}

// Def is a tool's definition as the lock keeps it: the six members of a tools/list entry that
// say what the tool is. Empty strings and nil values are left out, as if the server had not
// sent them.
type Def struct {
	Name, Title, Description               string
	InputSchema, OutputSchema, Annotations json.RawMessage
}

// Definition is the canonical text of d: one JSON object of its members, canonical. The
// members' names are ASCII, so their canonical order is fixed; each value is put in canonical
// form where it is written.
func Definition(d Def) (string, error) {
	out := make([]byte, 0, 64+len(d.Name)+len(d.Title)+len(d.Description)+len(d.InputSchema)+len(d.OutputSchema)+len(d.Annotations))
	out = append(out, '{')
	first := true
	key := func(k string) {
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, '"')
		out = append(out, k...)
		out = append(out, '"', ':')
	}
	raw := func(k string, v json.RawMessage) error {
		if v = bytes.TrimSpace(v); len(v) == 0 || string(v) == "null" {
			return nil
		}
		key(k)
		c := canonicaliser{in: v}
		var err error
		if out, err = c.value(out, 0, 0); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		if c.pos != len(v) {
			return fmt.Errorf("%s: more than one JSON value", k)
		}
		return nil
	}
	str := func(k, v string) {
		if v != "" || k == "name" {
			key(k)
			if !utf8.ValidString(v) {
				v = string([]rune(v)) // each invalid byte U+FFFD, as encoding/json writes it
			}
			out = appendString(out, v)
		}
	}
	// annotations < description < inputSchema < name < outputSchema < title
	if err := raw("annotations", d.Annotations); err != nil {
		return "", err
	}
	str("description", d.Description)
	if err := raw("inputSchema", d.InputSchema); err != nil {
		return "", err
	}
	str("name", d.Name)
	if err := raw("outputSchema", d.OutputSchema); err != nil {
		return "", err
	}
	str("title", d.Title)
	out = append(out, '}')
	return string(out), nil
}

// Pretty indents a canonical text two spaces per level, for a diff a reader can follow; the
// member order stays the canonical one.
func Pretty(canonical string) string {
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(canonical), "", "  "); err != nil {
		return canonical
	}
	return b.String()
}
