package lock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"testing"
	"unicode/utf16"
)

var canonTests = []struct{ in, want string }{
	{`{"b":1,"a":2}`, `{"a":2,"b":1}`},
	{" { \"a\" : [ 1 , 2 ,\n3 ] } ", `{"a":[1,2,3]}`},
	// numbers as written: no re-serialisation
	{`[1.0,1e2,-0,0.10,1E-7,12345678901234567890]`, `[1.0,1e2,-0,0.10,1E-7,12345678901234567890]`},
	{`[true,false,null]`, `[true,false,null]`},
	// escapes as RFC 8785 3.2.2.2: short forms, \u00xx lower case, the rest literal
	{`"\u0008\u0009\u000a\u000c\u000d"`, `"\b\t\n\f\r"`},
	{`"\u0000\u001f\u000B"`, `"\u0000\u001f\u000b"`},
	{`"\"\\\/"`, `"\"\\/"`},
	{`"\u007f\u2028\u2029<>&é\u20ac"`, "\"\x7f\u2028\u2029<>&é€\""},
	{`"\ud83d\ude00"`, `"😀"`},
	// key order by UTF-16 code units (RFC 8785 3.2.3): U+1F600 (D83D DE00) sorts before U+FB33
	{`{"\ufb33":1,"😀":2,"a":3,"":4}`, `{"":4,"a":3,"😀":2,"דּ":1}`},
	// RFC 8785's own sort example (section 3.2.3), numbers kept as written
	{`{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}`,
		"{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"ö\":\"Latin Small Letter O With Diaeresis\",\"€\":\"Euro Sign\",\"😀\":\"Emoji: Grinning Face\",\"דּ\":\"Hebrew Letter Dalet With Dagesh\"}"},
	{`{"a":{"z":[],"y":{}}}`, `{"a":{"y":{},"z":[]}}`},
	// invalid UTF-8 and lone surrogates decode as encoding/json decodes them
	{"\"a\xffb\"", "\"a\uFFFDb\""},
	{`"\ud800"`, "\"\uFFFD\""},
}

func TestCanonical(t *testing.T) {
	t.Parallel()
	for _, tc := range canonTests {
		got, err := Canonical([]byte(tc.in))
		if err != nil {
			t.Errorf("Canonical(%q): %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("Canonical(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

var canonRefusals = []string{``, ` `, `{`, `{"a":1,"a":2}`, `{"\u0061":1,"a":2}`, `[1,]`, `[,1]`, `{"a":1} {}`, `01`, `-01`, `-`, `1.`, `.5`,
	`1e`, `1e+`, `{a:1}`, "\"\x01\"", `NaN`, `tru`, `nul`, `[`, `{"a"}`, `{"a":}`, `{,}`, `"\q"`, `"\u12"`, `"abc`}

func TestCanonicalRefuses(t *testing.T) {
	t.Parallel()
	for _, in := range canonRefusals {
		if got, err := Canonical([]byte(in)); err == nil {
			t.Errorf("Canonical(%q) = %q, want an error", in, got)
		}
	}
}

func TestDefinition(t *testing.T) {
	t.Parallel()
	got, err := Definition(Def{Name: "echo", Description: "Echo <it>.", InputSchema: json.RawMessage(` {"type" : "object", "properties":{}} `),
		Annotations: json.RawMessage(`{"readOnlyHint":true}`), OutputSchema: json.RawMessage(`null`)})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"annotations":{"readOnlyHint":true},"description":"Echo <it>.","inputSchema":{"properties":{},"type":"object"},"name":"echo"}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if _, err := Definition(Def{Name: "x", InputSchema: json.RawMessage(`{"a":1,"a":1}`)}); err == nil {
		t.Error("a repeated member name was put in canonical form")
	}
}

// FuzzCanonical: Canonical agrees with a reference built on encoding/json's tokens (the same
// text, or both an error), and the canonical form is stable (canonical of canonical is
// itself), valid JSON, and the same value as its input.
func FuzzCanonical(f *testing.F) {
	for _, tc := range canonTests {
		f.Add(tc.in)
	}
	for _, in := range canonRefusals {
		f.Add(in)
	}
	f.Add(`{"é\u00e9":[1.5e-3,{"z":null,"\ud83d\ude00":"\u2028"}],"\ufb33":"\u0000\ud800x"}`)
	f.Fuzz(func(t *testing.T, in string) {
		c, err := Canonical([]byte(in))
		ref, refErr := referenceCanonical([]byte(in))
		if (err == nil) != (refErr == nil) || c != ref {
			t.Fatalf("%q: Canonical %q (%v), the reference %q (%v)", in, c, err, ref, refErr)
		}
		if err != nil {
			return
		}
		c2, err := Canonical([]byte(c))
		if err != nil || c2 != c {
			t.Fatalf("not stable: %q -> %q -> %q (%v)", in, c, c2, err)
		}
		if !json.Valid([]byte(c)) {
			t.Fatalf("not JSON: %q", c)
		}
		var a, b any
		if json.Unmarshal([]byte(in), &a) != nil {
			return // a number out of float64's range: kept as written, but not comparable here
		}
		if json.Unmarshal([]byte(c), &b) != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("another value: %q -> %q", in, c)
		}
	})
}

// referenceCanonical is the canonical form built the obvious way, on encoding/json's tokens:
// FuzzCanonical holds Canonical to it.
func referenceCanonical(raw []byte) (string, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var b []byte
	var value func() error
	value = func() error {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		switch v := tok.(type) {
		case json.Delim:
			if v == '[' {
				b = append(b, '[')
				for n := 0; d.More(); n++ {
					if n > 0 {
						b = append(b, ',')
					}
					if err := value(); err != nil {
						return err
					}
				}
				b = append(b, ']')
				_, err := d.Token()
				return err
			}
			type kv struct{ k, v string }
			var ms []kv
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return err
				}
				outer := b
				b = nil
				if err := value(); err != nil {
					return err
				}
				ms = append(ms, kv{kt.(string), string(b)})
				b = outer
			}
			if _, err := d.Token(); err != nil {
				return err
			}
			sort.SliceStable(ms, func(i, j int) bool {
				return slices.Compare(utf16.Encode([]rune(ms[i].k)), utf16.Encode([]rune(ms[j].k))) < 0
			})
			b = append(b, '{')
			for i, m := range ms {
				if i > 0 {
					if ms[i-1].k == m.k {
						return errors.New("repeated")
					}
					b = append(b, ',')
				}
				b = appendString(b, m.k)
				b = append(b, ':')
				b = append(b, m.v...)
			}
			b = append(b, '}')
		case string:
			b = appendString(b, v)
		case json.Number:
			b = append(b, v...)
		case bool:
			b = strconv.AppendBool(b, v)
		case nil:
			b = append(b, "null"...)
		}
		return nil
	}
	if err := value(); err != nil {
		return "", err
	}
	if _, err := d.Token(); err != io.EOF {
		return "", errors.New("more than one value")
	}
	return string(b), nil
}

// definitionByReference is Definition built the obvious way: the members marshalled into one
// object, then put in canonical form by the reference.
func definitionByReference(d Def) (string, error) {
	m := map[string]json.RawMessage{}
	str := func(k, v string) {
		if v != "" || k == "name" {
			b, _ := json.Marshal(v)
			m[k] = b
		}
	}
	str("name", d.Name)
	str("title", d.Title)
	str("description", d.Description)
	for k, v := range map[string]json.RawMessage{"inputSchema": d.InputSchema, "outputSchema": d.OutputSchema, "annotations": d.Annotations} {
		if v = bytes.TrimSpace(v); len(v) > 0 && string(v) != "null" {
			if !json.Valid(v) {
				return "", errors.New("not JSON")
			}
			m[k] = v
		}
	}
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	for _, k := range []string{"annotations", "description", "inputSchema", "name", "outputSchema", "title"} {
		if v, ok := m[k]; ok {
			if !first {
				b.WriteByte(',')
			}
			first = false
			fmt.Fprintf(&b, "%q:", k)
			b.Write(v)
		}
	}
	b.WriteByte('}')
	return referenceCanonical(b.Bytes())
}

// FuzzDefinition: Definition writes what the reference makes of the same members.
func FuzzDefinition(f *testing.F) {
	f.Add("echo", "", "Echo <it> & \x7f\u2028.", `{"type":"object","b":1.50,"a":[true,null]}`, ``, `{"readOnlyHint":true}`)
	f.Add("t\xff", "T\x01", "", ` { } `, `null`, `{"a":1,"a":2}`)
	f.Add("", "", "", `[`, `{}`, `"x"`)
	f.Fuzz(func(t *testing.T, name, title, desc, in, out, ann string) {
		d := Def{Name: name, Title: title, Description: desc, InputSchema: []byte(in), OutputSchema: []byte(out), Annotations: []byte(ann)}
		got, err := Definition(d)
		want, refErr := definitionByReference(d)
		if (err == nil) != (refErr == nil) || got != want {
			t.Fatalf("%+v:\nDefinition %q (%v)\nreference  %q (%v)", d, got, err, want, refErr)
		}
	})
}
