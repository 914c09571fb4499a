// Package schema checks JSON values against JSON Schemas for the capability answers: a tool's
// arguments against its inputSchema, its structuredContent against its outputSchema. The native
// validator judges the 2020-12 subset that MCP tools use; the spear-shell-schema helper, which
// holds the schema library, judges the rest. It is layer 0 of the capability side
// (docs/layout.md): it imports nothing of ours, never capability, and never the schema library,
// whose package initialisation would reach every command the answers are linked into.
package schema

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"
)

// Checker checks JSON values against JSON Schemas, compiling each schema once, by the hash of
// its bytes: an answering process keeps one for its turn. Schemas are checked in two tiers
// (docs/capabilities.md): the native validator (validate.go) for the subset that MCP tools
// use, and the spear-shell-schema helper (helper.go), which holds the schema library, for
// every schema the native validator does not fully understand. Either way the verdict is the
// library's; the helper failing, or not being trusted, fails the check closed.
type Checker struct {
	// Helper is the spear-shell-schema helper's path; "" is HelperName beside the running
	// executable.
	Helper string
	// Trust is asked before the helper is started (it must not lie where the agent writes);
	// an error refuses it, and so does a nil Trust.
	Trust func(path string) error

	compiled map[string]*compiled
}

// compiled is a schema compiled once; native is nil when the schema is the helper's to judge.
type compiled struct {
	native *schemaNode
}

func (c *Checker) schema(raw json.RawMessage) *compiled {
	sum := sha256.Sum256(raw)
	key := string(sum[:])
	if s, ok := c.compiled[key]; ok {
		return s
	}
	if c.compiled == nil {
		c.compiled = map[string]*compiled{}
	}
	// Whatever the native compiler rejects, for whatever reason, is the helper's to judge.
	n, _ := compileNative(raw)
	s := &compiled{native: n}
	c.compiled[key] = s
	return s
}

// Check checks v, a value as Decode returns it, against the schema raw. unusable says why the
// schema cannot be used; otherwise failures lists what does not match (none: valid), each
// "at <JSON pointer>: <what>". Both may quote the schema and the value: the caller cleans and
// bounds them.
func (c *Checker) Check(raw json.RawMessage, v any) (unusable string, failures []string) {
	if s := c.schema(raw); s.native != nil {
		return "", s.native.validate(v)
	}
	path, err := helperPath(c.Helper)
	if err == nil {
		err = c.trust(path)
	}
	if err != nil {
		return "the schema checker cannot run: " + err.Error(), nil
	}
	a, err := helperAt(path).check(raw, Encode(v))
	switch {
	case err != nil:
		return "the schema checker cannot run: " + err.Error(), nil
	case a.Unusable != "":
		return a.Unusable, nil
	case a.OK:
		return "", nil
	}
	return "", a.Errors
}

func (c *Checker) trust(path string) error {
	if c.Trust == nil {
		return errors.New("program refused: no trust check was given")
	}
	return c.Trust(path)
}

// Problem says why the schema raw cannot be used, or "" when it can.
func (c *Checker) Problem(raw json.RawMessage) string {
	if c.schema(raw).native != nil {
		return ""
	}
	unusable, _ := c.Check(raw, nil)
	return unusable
}

// Declared are the keys of an input schema's top-level "properties", the names an
// invocation's arguments may hold. The key is matched exactly, as JSON Schema reads it:
// decoding into a struct field would also take "Properties" or "propertIes" (encoding/json
// matches field names without case).
func Declared(input json.RawMessage) map[string]bool {
	var top map[string]json.RawMessage
	var props map[string]json.RawMessage
	names := map[string]bool{}
	if json.Unmarshal(input, &top) == nil && json.Unmarshal(top["properties"], &props) == nil {
		for k := range props {
			names[k] = true
		}
	}
	return names
}

// Encode re-encodes a value decoded by Decode: numbers keep their text.
func Encode(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// PropertyNames are the keys of the input schema's top-level "properties", in the order the
// schema gives them, read by a scan of the bytes rather than by decoding the schema: the search
// index reads them for every tool of a family. The schema is JSON that was decoded whole
// before (a provider's listing); anything the scan does not expect falls back to Declared.
func PropertyNames(input json.RawMessage) []string {
	s := jsonScan{b: input}
	if !s.skipSpaceTo('{') {
		return slices.Sorted(maps.Keys(Declared(input)))
	}
	var names []string
	var seen map[string]bool
	found := false
	for !s.skipSpaceTo('}') {
		key, ok := s.key()
		if !ok {
			return slices.Sorted(maps.Keys(Declared(input)))
		}
		if key == "properties" {
			if found || !s.skipSpaceTo('{') {
				// twice, or not an object: as decoding reads it
				return slices.Sorted(maps.Keys(Declared(input)))
			}
			found = true
			for !s.skipSpaceTo('}') {
				k, ok := s.key()
				if !ok || !s.value() {
					return slices.Sorted(maps.Keys(Declared(input)))
				}
				if seen == nil && len(names) == 16 {
					seen = map[string]bool{} // a long list: no quadratic look-ups
					for _, n := range names {
						seen[n] = true
					}
				}
				if seen != nil && !seen[k] || seen == nil && !slices.Contains(names, k) {
					names = append(names, k)
					if seen != nil {
						seen[k] = true
					}
				}
				s.skipSpaceTo(',')
			}
		} else if !s.value() {
			return slices.Sorted(maps.Keys(Declared(input)))
		}
		s.skipSpaceTo(',')
	}
	return names
}

// jsonScan walks JSON text that is known to be valid.
type jsonScan struct {
	b []byte
	i int
}

// skipSpaceTo skips blanks and, when the next byte is c, it too, reporting whether it was.
func (s *jsonScan) skipSpaceTo(c byte) bool {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// key reads a member's name and its colon.
func (s *jsonScan) key() (string, bool) {
	if !s.skipSpaceTo('"') {
		return "", false
	}
	start := s.i - 1
	if !s.skipString() {
		return "", false
	}
	raw := s.b[start:s.i]
	if !s.skipSpaceTo(':') {
		return "", false
	}
	if !bytes.ContainsRune(raw, '\\') && utf8.Valid(raw) {
		return string(raw[1 : len(raw)-1]), true
	}
	var k string
	if json.Unmarshal(raw, &k) != nil {
		return "", false
	}
	return k, true
}

// skipString skips the rest of a string whose opening quote was read.
func (s *jsonScan) skipString() bool {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '\\':
			s.i += 2
			continue
		case '"':
			s.i++
			return true
		}
		s.i++
	}
	return false
}

// value skips one value.
func (s *jsonScan) value() bool {
	s.skipSpaceTo(0)
	if s.i >= len(s.b) {
		return false
	}
	switch s.b[s.i] {
	case '"':
		s.i++
		return s.skipString()
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				s.i++
				if !s.skipString() {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return true
				}
			}
			s.i++
		}
		return false
	}
	for s.i < len(s.b) && !strings.ContainsRune(",}] \t\n\r", rune(s.b[s.i])) {
		s.i++
	}
	return true
}
