package capability

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"testing"
)

// FuzzCompactJSON holds compactJSON's quick test ("already compact?") to json.Compact: on any
// valid JSON the result is what json.Compact writes.
func FuzzCompactJSON(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"type":"object"}`, `{"description":"text with spaces"}`, `{ "a" : 1 }`,
		`{"a":"\" }"}`, `{"a":"\\\\"}`, "{\"a\":\"\\\\\",\n\"b\":1}", `["x y",  "z"]`, `"a b"`, ` 1 `,
		"{\"k\":\"\\u0020\",\t\"v\":[1,\r\n2]}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return // schemas reach compactJSON from a message validated as JSON
		}
		var want bytes.Buffer
		if err := json.Compact(&want, raw); err != nil {
			t.Fatal(err)
		}
		if got := compactJSON(raw); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("compactJSON(%q) = %q, want %q", raw, got, want.Bytes())
		}
	})
}

// TestDefinitionHash holds the pin to its definition: SHA-256 over name, description, input
// and output schema, each preceded by its length as 8 big-endian bytes.
func TestDefinitionHash(t *testing.T) {
	want := func(parts ...[]byte) string {
		h := sha256.New()
		var n [8]byte
		for _, p := range parts {
			binary.BigEndian.PutUint64(n[:], uint64(len(p)))
			h.Write(n[:])
			h.Write(p)
		}
		return hex.EncodeToString(h.Sum(nil))
	}
	var scratch []byte
	for _, c := range []struct {
		name, desc string
		in, out    json.RawMessage
	}{
		{"echo", "Echo it.", json.RawMessage(`{"type":"object"}`), nil},
		{"a", "", json.RawMessage(`{}`), json.RawMessage(`{"type":"object"}`)},
		{"ab", "c", json.RawMessage(`{}`), nil},
		{"a", "bc", json.RawMessage(`{}`), nil},
	} {
		got := definitionHash(&scratch, c.name, c.desc, c.in, c.out)
		if w := want([]byte(c.name), []byte(c.desc), c.in, c.out); got != w {
			t.Errorf("definitionHash(%q, %q, %s, %s) = %s, want %s", c.name, c.desc, c.in, c.out, got, w)
		}
	}
}
