package capability

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// Schemas are checked in two tiers (docs/capabilities.md): the native validator for the subset
// that MCP tools use, and the spear-shell-schema helper, which holds the schema library, for
// every schema the native validator does not fully understand. Either way the verdict is the
// library's; the helper failing fails the check closed.

// compiled is a schema compiled once per turn, by the hash of its bytes; native is nil when
// the schema is the helper's to judge.
type compiled struct {
	native *schemaNode
}

func (e *turnEnv) schema(raw json.RawMessage) *compiled {
	sum := sha256.Sum256(raw)
	key := string(sum[:])
	if c, ok := e.schemas[key]; ok {
		return c
	}
	// Whatever the native compiler rejects, for whatever reason, is the helper's to judge.
	n, _ := compileNative(raw)
	c := &compiled{native: n}
	e.schemas[key] = c
	return c
}

// validate checks v against the schema raw. unusable says why the schema cannot be used;
// otherwise leaves lists the failures (none: valid), each "at <pointer>: <what>".
func (e *turnEnv) validate(raw json.RawMessage, v any) (unusable string, leaves []string) {
	if c := e.schema(raw); c.native != nil {
		return "", c.native.validate(v)
	}
	path, err := helperPath(e.s.SchemaHelper)
	if err == nil {
		err = e.TrustPrograms([]string{path}, nil)
	}
	if err != nil {
		return "the schema checker cannot run: " + err.Error(), nil
	}
	a, err := helperAt(path).check(raw, encodeExact(v))
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

// schemaProblem says why the schema raw cannot be used, or "" when it can.
func (e *turnEnv) schemaProblem(raw json.RawMessage) string {
	if e.schema(raw).native != nil {
		return ""
	}
	unusable, _ := e.validate(raw, nil)
	return unusable
}

// declaredNames are the keys of the input schema's top-level "properties".
// The key is matched exactly, as JSON Schema reads it: decoding into a struct field would also
// take "Properties" or "propertIes" (encoding/json matches field names without case).
func declaredNames(input json.RawMessage) map[string]bool {
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

// checkArguments decodes the arguments with exact numbers, checks the top-level names
// against inputSchema.properties, validates them, and re-encodes the validated value.
// reason is empty on success and otherwise says what to fix, with JSON pointers.
func (e *turnEnv) checkArguments(tl *tool, text string) (forward json.RawMessage, reason string) {
	v, err := decodeJSON(strings.NewReader(text))
	if err != nil {
		return nil, "the arguments are not JSON: " + err.Error()
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, "the arguments must be one JSON object"
	}
	if tl.declared == nil {
		tl.declared = declaredNames(tl.input) // a session invokes a tool many times
	}
	declared := tl.declared
	var undeclared []string
	for k := range obj {
		if !declared[k] {
			undeclared = append(undeclared, k)
		}
	}
	if len(undeclared) > 0 {
		sort.Strings(undeclared)
		names := make([]string, 0, len(declared))
		for k := range declared {
			names = append(names, k)
		}
		sort.Strings(names)
		q := make([]string, len(undeclared))
		for i, k := range undeclared {
			q[i] = quote(k)
		}
		dq := make([]string, len(names))
		for i, k := range names {
			dq[i] = quote(k)
		}
		allowed := "none"
		if len(dq) > 0 {
			allowed = strings.Join(dq, ", ")
		}
		return nil, fmt.Sprintf("argument %s is not declared in the tool's inputSchema properties (declared: %s)",
			strings.Join(q, ", "), allowed)
	}
	unusable, leaves := e.validate(tl.input, v)
	if unusable != "" {
		return nil, "the tool's schema cannot be used: " + shown(unusable, schemaMax)
	}
	if len(leaves) > 0 {
		return nil, "the arguments do not match the tool's inputSchema: " + joinLeaves(leaves)
	}
	return encodeExact(v), ""
}

// encodeExact re-encodes a value decoded with json.Number: numbers keep their text.
func encodeExact(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// joinLeaves names at most maxErrorLeaves failures, cleaned, and how many more there are.
func joinLeaves(leaves []string) string {
	more := ""
	if len(leaves) > maxErrorLeaves {
		more = fmt.Sprintf(" (and %d more)", len(leaves)-maxErrorLeaves)
		leaves = leaves[:maxErrorLeaves]
	}
	parts := make([]string, len(leaves))
	for i, l := range leaves {
		parts[i] = shown(l, schemaMax)
	}
	return strings.Join(parts, "; ") + more
}

// propertyNames are the keys of the input schema's top-level "properties", in the order the
// schema gives them, read by a scan of the bytes rather than by decoding the schema: the search
// index reads them for every tool of a family. The schema is JSON that was decoded whole
// before (a provider's listing); anything the scan does not expect falls back to declaredNames.
func propertyNames(input json.RawMessage) []string {
	s := jsonScan{b: input}
	if !s.skipSpaceTo('{') {
		return slices.Sorted(maps.Keys(declaredNames(input)))
	}
	var names []string
	var seen map[string]bool
	found := false
	for !s.skipSpaceTo('}') {
		key, ok := s.key()
		if !ok {
			return slices.Sorted(maps.Keys(declaredNames(input)))
		}
		if key == "properties" {
			if found || !s.skipSpaceTo('{') {
				// twice, or not an object: as decoding reads it
				return slices.Sorted(maps.Keys(declaredNames(input)))
			}
			found = true
			for !s.skipSpaceTo('}') {
				k, ok := s.key()
				if !ok || !s.value() {
					return slices.Sorted(maps.Keys(declaredNames(input)))
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
			return slices.Sorted(maps.Keys(declaredNames(input)))
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
