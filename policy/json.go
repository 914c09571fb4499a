package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// member is one key of a JSON object, in document order.
type member struct {
	key string
	val json.RawMessage
}

// errNotObject is returned by decodeObject for any other JSON value.
var errNotObject = errors.New("must be an object")

// dupKeyError is a key given twice in one object.
type dupKeyError struct{ key string }

func (e *dupKeyError) Error() string { return "given twice" }

// jsonKind names the type of a raw JSON value by its first byte (the value is valid JSON).
func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	default:
		return "number"
	}
}

// decodeObject splits a JSON object into its members, refusing duplicate keys
// (encoding/json would silently keep the last one).
func decodeObject(raw json.RawMessage) ([]member, error) {
	if jsonKind(raw) != "object" {
		return nil, errNotObject
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	var out []member
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("not valid JSON: %w", err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errors.New("not valid JSON: object key is not a string")
		}
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, fmt.Errorf("not valid JSON: %w", err)
		}
		if seen[key] {
			return nil, &dupKeyError{key}
		}
		seen[key] = true
		out = append(out, member{key, val})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	return out, nil
}

// wrongType is the message for a value of the wrong JSON type; it names the type
// found, never the value (which may be a secret).
func wrongType(want string, raw json.RawMessage) string {
	return fmt.Sprintf("must be %s, not %s", want, jsonKind(raw))
}

func asString(raw json.RawMessage) (string, string) {
	if jsonKind(raw) != "string" {
		return "", wrongType("a string", raw)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", "must be a valid string"
	}
	return s, ""
}

func asBool(raw json.RawMessage) (bool, string) {
	if jsonKind(raw) != "boolean" {
		return false, wrongType("true or false", raw)
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return false, "must be true or false"
	}
	return b, ""
}

// asStrings decodes an array whose every element is a string (encoding/json would
// turn a null element into "").
func asStrings(raw json.RawMessage) ([]string, string) {
	if jsonKind(raw) != "array" {
		return nil, wrongType("an array of strings", raw)
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, "must be an array of strings"
	}
	out := make([]string, 0, len(elems))
	for i, e := range elems {
		s, msg := asString(e)
		if msg != "" {
			return nil, fmt.Sprintf("element %d %s", i, msg)
		}
		out = append(out, s)
	}
	return out, ""
}

// asWholeSeconds decodes an integer number of seconds in [0, max].
func asWholeSeconds(raw json.RawMessage, max int64) (int64, string) {
	if jsonKind(raw) != "number" {
		return 0, wrongType("an integer number of seconds", raw)
	}
	var n int64
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, "must be an integer number of seconds"
	}
	if n < 0 || n > max {
		return 0, fmt.Sprintf("must be between 0 and %d seconds", max)
	}
	return n, ""
}

// asSeconds decodes a positive number of seconds (fractions allowed) within bounds.
func asSeconds(raw json.RawMessage) (time.Duration, string) {
	if jsonKind(raw) != "number" {
		return 0, wrongType("a number of seconds", raw)
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, "must be a finite number of seconds"
	}
	if f <= 0 {
		return 0, "must be a positive number of seconds"
	}
	if f > MaxTimeout.Seconds() {
		return 0, fmt.Sprintf("must be at most %g seconds", MaxTimeout.Seconds())
	}
	d := time.Duration(f * float64(time.Second))
	if d < MinTimeout {
		return 0, fmt.Sprintf("must be at least %g seconds", MinTimeout.Seconds())
	}
	return d, ""
}

// asBytes decodes a whole number of bytes within [lo, hi].
func asBytes(raw json.RawMessage, lo, hi int) (int, string) {
	if jsonKind(raw) != "number" {
		return 0, wrongType("a whole number of bytes", raw)
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
	switch {
	case err != nil && errors.Is(err, strconv.ErrRange):
		return 0, fmt.Sprintf("must be at most %d bytes", hi)
	case err != nil:
		return 0, "must be a whole number of bytes, written without a fraction or exponent"
	case n < int64(lo):
		return 0, fmt.Sprintf("must be at least %d bytes", lo)
	case n > int64(hi):
		return 0, fmt.Sprintf("must be at most %d bytes", hi)
	}
	return int(n), ""
}

// hasNUL reports a string no exec argument or environment entry can carry.
func hasNUL(s string) bool { return strings.IndexByte(s, 0) >= 0 }
