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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf16"
)

// Canonical returns the canonical form of the one JSON value in raw.
func Canonical(raw []byte) (string, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var b strings.Builder
	if err := canonValue(d, &b); err != nil {
		return "", err
	}
	if _, err := d.Token(); err != io.EOF {
		return "", errors.New("more than one JSON value")
	}
	return b.String(), nil
}

type member struct {
	key   string
	units []uint16 // key in UTF-16, the sort order
	text  string   // the value's canonical form
}

func canonValue(d *json.Decoder, b *strings.Builder) error {
	tok, err := d.Token()
	if err != nil {
		if err == io.EOF {
			return errors.New("no JSON value")
		}
		return err
	}
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '[':
			b.WriteByte('[')
			for i := 0; d.More(); i++ {
				if i > 0 {
					b.WriteByte(',')
				}
				if err := canonValue(d, b); err != nil {
					return err
				}
			}
			if _, err := d.Token(); err != nil { // ']'
				return err
			}
			b.WriteByte(']')
		case '{':
			var ms []member
			seen := map[string]bool{}
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return err
				}
				key, ok := kt.(string)
				if !ok {
					return fmt.Errorf("object key %v is not a string", kt)
				}
				if seen[key] {
					return fmt.Errorf("the member name %q is repeated in one object", key)
				}
				seen[key] = true
				var vb strings.Builder
				if err := canonValue(d, &vb); err != nil {
					return err
				}
				ms = append(ms, member{key, utf16.Encode([]rune(key)), vb.String()})
			}
			if _, err := d.Token(); err != nil { // '}'
				return err
			}
			slices.SortFunc(ms, func(x, y member) int { return slices.Compare(x.units, y.units) })
			b.WriteByte('{')
			for i, m := range ms {
				if i > 0 {
					b.WriteByte(',')
				}
				writeString(b, m.key)
				b.WriteByte(':')
				b.WriteString(m.text)
			}
			b.WriteByte('}')
		default:
			return fmt.Errorf("unexpected %v", v)
		}
	case string:
		writeString(b, v)
	case json.Number:
		b.WriteString(string(v)) // as written: a valid JSON number, the decoder checked it
	case bool:
		if v {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case nil:
		b.WriteString("null")
	default:
		return fmt.Errorf("unexpected token %v", tok)
	}
	return nil
}

const hexDigits = "0123456789abcdef"

// writeString writes s as RFC 8785 section 3.2.2.2 escapes it.
func writeString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hexDigits[r>>4])
				b.WriteByte(hexDigits[r&0xf])
			} else {
				b.WriteRune(r) // a string decoded by encoding/json is valid UTF-8
			}
		}
	}
	b.WriteByte('"')
}

// Def is a tool's definition as the lock keeps it: the six members of a tools/list entry that
// say what the tool is. Empty strings and nil values are left out, as if the server had not
// sent them.
type Def struct {
	Name, Title, Description               string
	InputSchema, OutputSchema, Annotations json.RawMessage
}

// Definition is the canonical text of d: one JSON object of its members, canonical.
func Definition(d Def) (string, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	add := func(key string, val []byte) {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(val)
	}
	str := func(s string) []byte { v, _ := json.Marshal(s); return v }
	add("name", str(d.Name))
	if d.Title != "" {
		add("title", str(d.Title))
	}
	if d.Description != "" {
		add("description", str(d.Description))
	}
	for _, m := range []struct {
		key string
		val json.RawMessage
	}{{"inputSchema", d.InputSchema}, {"outputSchema", d.OutputSchema}, {"annotations", d.Annotations}} {
		if v := bytes.TrimSpace(m.val); len(v) > 0 && string(v) != "null" {
			add(m.key, v)
		}
	}
	b.WriteByte('}')
	return Canonical(b.Bytes())
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
