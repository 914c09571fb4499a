package lock

import (
	"encoding/json"
	"reflect"
	"testing"
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

func TestCanonicalRefuses(t *testing.T) {
	t.Parallel()
	for _, in := range []string{``, `{`, `{"a":1,"a":2}`, `[1,]`, `{"a":1} {}`, `01`, `{a:1}`, `"\x01"`, `NaN`} {
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

// FuzzCanonical: the canonical form is stable (canonical of canonical is itself), valid JSON,
// and the same value as its input.
func FuzzCanonical(f *testing.F) {
	for _, tc := range canonTests {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		c, err := Canonical([]byte(in))
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
