package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/spear-shell/spear-shell/capability/schemaformat"
)

// libraryVerdict is jsonschema/v6's verdict, compiled as spear-shell-schema compiles.
func libraryVerdict(t testing.TB, schema, instance string) (usable, valid bool) {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		return false, false
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(refuseLoader{t})
	c.DefaultDraft(jsonschema.Draft2020)
	// The oracle follows SPEC 5 as the helper does: "format" is an annotation in every draft.
	engine := schemaformat.AsAnnotations(c)
	if err := c.AddResource("https://spear-shell.invalid/schema.json", doc); err != nil {
		return false, false
	}
	sch, err := c.Compile("https://spear-shell.invalid/schema.json")
	if err != nil {
		return false, false
	}
	engine.Compiled()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(instance))
	if err != nil {
		t.Fatalf("instance %s: %v", instance, err)
	}
	return true, sch.Validate(v) == nil
}

type refuseLoader struct{ t testing.TB }

func (refuseLoader) Load(url string) (any, error) { return nil, fmt.Errorf("not loaded: %s", url) }

func nativeVerdict(t testing.TB, schema, instance string) (mine, valid bool, leaves []string) {
	t.Helper()
	n, err := compileNative([]byte(schema))
	if err != nil {
		return false, false, nil
	}
	v, err := Decode(strings.NewReader(instance))
	if err != nil {
		t.Fatalf("instance %s: %v", instance, err)
	}
	leaves = n.validate(v)
	return true, len(leaves) == 0, leaves
}

// The native validator's verdicts on the subset, checked against the expected verdict and the library's.
func TestValidateNative(t *testing.T) {
	t.Parallel()
	cases := []struct {
		schema, instance string
		valid            bool
		leaf             string // a substring of the first failure, when invalid
	}{
		{`true`, `{"a":1}`, true, ""},
		{`false`, `1`, false, "at the top level: false schema"},
		{`{}`, `[1,"x",null]`, true, ""},
		{`{"type":"integer"}`, `1.0`, true, ""},
		{`{"type":"integer"}`, `1e2`, true, ""},
		{`{"type":"integer"}`, `1.5`, false, "got number, want integer"},
		{`{"type":["string","null"]}`, `null`, true, ""},
		{`{"type":["string","null"]}`, `0`, false, "want null or string"},
		{`{"properties":{"count":{"type":"integer"}}}`, `{"count":"3"}`, false, "at /count: got string, want integer"},
		{`{"required":["title"]}`, `{}`, false, "at the top level: missing property 'title'"},
		{`{"required":["a","b"]}`, `{"c":1}`, false, "missing properties 'a', 'b'"},
		// Big integers are compared exactly, not as float64.
		{`{"maximum":9007199254740993}`, `9007199254740992`, true, ""},
		{`{"maximum":9007199254740993}`, `9007199254740993`, true, ""},
		{`{"maximum":9007199254740993}`, `9007199254740994`, false, "maximum: got 9007199254740994, want 9007199254740993"},
		{`{"exclusiveMinimum":9007199254740993}`, `9007199254740993`, false, "exclusiveMinimum"},
		{`{"minimum":0.1}`, `0.10000000000000000000000001`, true, ""},
		{`{"minimum":0.1}`, `0.09999999999999999999999999`, false, "minimum"},
		{`{"multipleOf":0.01}`, `0.07`, true, ""},
		{`{"multipleOf":0.01}`, `0.075`, false, "multipleOf: got 0.075, want 0.01"},
		{`{"multipleOf":3}`, `9.0`, true, ""},
		{`{"const":1}`, `1.0`, true, ""},
		{`{"const":{"a":[1,2]}}`, `{"a":[1,2.0]}`, true, ""},
		{`{"const":{"a":[1,2]}}`, `{"a":[2,1]}`, false, "value must be"},
		{`{"enum":["x",2,null]}`, `2.00`, true, ""},
		{`{"enum":["x",2,null]}`, `"y"`, false, "value must be one of 'x', 2, null"},
		{`{"enum":[]}`, `1`, false, ""},
		// Lengths count code points.
		{`{"minLength":2,"maxLength":2}`, `"é漢"`, true, ""},
		{`{"maxLength":1}`, `"é漢"`, false, "maxLength: got 2, want 1"},
		{`{"minLength":3}`, `"😀😀"`, false, "minLength: got 2, want 3"},
		{`{"minLength":1.0}`, `""`, false, "minLength"},
		{`{"pattern":"^[a-z]+$"}`, `"abc"`, true, ""},
		{`{"pattern":"b"}`, `"abc"`, true, ""},
		{`{"pattern":"^\\d+$"}`, `"12a"`, false, "does not match pattern"},
		{`{"pattern":"^x$"}`, `5`, true, ""},
		{`{"items":{"type":"string"}}`, `["a",1]`, false, "at /1: got number, want string"},
		{`{"prefixItems":[{"type":"integer"}],"items":false}`, `[1]`, true, ""},
		{`{"prefixItems":[{"type":"integer"}],"items":false}`, `[1,2]`, false, "at /1: false schema"},
		{`{"minItems":1,"maxItems":2}`, `[]`, false, "minItems: got 0, want 1"},
		{`{"uniqueItems":true}`, `[1,{"a":1},1.0]`, false, "items at 0 and 2 are equal"},
		{`{"uniqueItems":true}`, `[1,"1",[1]]`, true, ""},
		{`{"contains":{"type":"string"}}`, `[1,2]`, false, "no items match contains schema"},
		{`{"contains":{"type":"string"},"minContains":2}`, `["a",1,"b"]`, true, ""},
		{`{"contains":{"type":"string"},"maxContains":1}`, `["a",1,"b"]`, false, "max 1 items"},
		{`{"contains":{"type":"string"},"minContains":0}`, `[1]`, true, ""},
		{`{"minContains":5}`, `[1]`, true, ""},
		{`{"additionalProperties":false,"properties":{"a":{}}}`, `{"a":1,"b":2,"c":3}`, false, "additional properties 'b', 'c' not allowed"},
		{`{"patternProperties":{"^x":{"type":"integer"}},"additionalProperties":false}`, `{"x1":1,"xy":2}`, true, ""},
		{`{"patternProperties":{"^x":{"type":"integer"}}}`, `{"x1":"a"}`, false, "at /x1"},
		{`{"propertyNames":{"maxLength":2}}`, `{"abc":1}`, false, "invalid propertyName 'abc'"},
		{`{"minProperties":1}`, `{}`, false, "minProperties"},
		{`{"maxProperties":1}`, `{"a":1,"b":2}`, false, "maxProperties"},
		{`{"dependentRequired":{"a":["b"]}}`, `{"a":1}`, false, "properties 'b' required, if 'a' exists"},
		{`{"dependentRequired":{"a":["b"]}}`, `{"b":1}`, true, ""},
		{`{"dependentSchemas":{"a":{"required":["c"]}}}`, `{"a":1}`, false, "missing property 'c'"},
		{`{"allOf":[{"minimum":1},{"maximum":3}]}`, `4`, false, "maximum"},
		{`{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `true`, false, "want string"},
		{`{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `3`, true, ""},
		{`{"oneOf":[{"minimum":1},{"maximum":3}]}`, `2`, false, "'oneOf' failed, subschemas 0, 1 matched"},
		{`{"oneOf":[{"minimum":1},{"maximum":3}]}`, `5`, true, ""},
		{`{"not":{"type":"null"}}`, `null`, false, "'not' failed"},
		{`{"if":{"type":"string"},"then":{"minLength":2},"else":{"type":"integer"}}`, `"a"`, false, "minLength"},
		{`{"if":{"type":"string"},"then":{"minLength":2},"else":{"type":"integer"}}`, `1.5`, false, "want integer"},
		{`{"if":{"type":"string"},"then":{"minLength":2},"else":{"type":"integer"}}`, `"ab"`, true, ""},
		{`{"then":false}`, `1`, true, ""},
		// Annotations and unknown keywords are not assertions.
		{`{"format":"date","title":"t","description":"d","default":5,"examples":[1],"deprecated":true,"readOnly":false,
		   "writeOnly":false,"$comment":"c","contentMediaType":"application/json","contentEncoding":"base64",
		   "contentSchema":{"type":"object"},"x-unknown":{"type":"integer"}}`, `"not a date"`, true, ""},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`, `{}`, true, ""},
		// Local references, cycles that consume input, cycles that do not.
		{`{"$defs":{"n":{"type":"integer"}},"properties":{"a":{"$ref":"#/$defs/n"}}}`, `{"a":"x"}`, false, "at /a: got string, want integer"},
		{`{"definitions":{"n":{"minimum":2}},"$ref":"#/definitions/n"}`, `1`, false, "minimum"},
		{`{"properties":{"a":{"type":"string"},"b":{"$ref":"#/properties/a"}}}`, `{"b":1}`, false, "at /b"},
		{`{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#"}}},"additionalProperties":false}`,
			`{"kids":[{"kids":[]},{"kids":[{"kids":[]}]}]}`, true, ""},
		{`{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#"}}},"additionalProperties":false}`,
			`{"kids":[{"kids":[{"x":1}]}]}`, false, "at /kids/0/kids/0"},
		{`{"$ref":"#"}`, `1`, false, "reference cycle"},
		{`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`, `1`, false, "reference cycle"},
		{`{"not":{"$ref":"#"}}`, `1`, true, ""},
		{`{"type":"string","$ref":"#"}`, `1`, false, "want string"},
		{`{"$defs":{"a~b":{"type":"null"},"c/d":{"type":"null"}},"allOf":[{"$ref":"#/$defs/a~0b"},{"$ref":"#/$defs/c~1d"}]}`, `null`, true, ""},
		// A number too large to expand exactly fails every comparison instead of taking minutes.
		{`{"type":"integer"}`, `1e999999999`, false, "want integer"},
		{`{"maximum":1}`, `1e-999999999`, false, "too large to compare exactly"},
		// Pointers name the failing value, escaped.
		{`{"properties":{"a/b":{"type":"null"},"c~d":{"type":"null"}}}`, `{"a/b":1}`, false, "at /a~1b: "},
	}
	for _, c := range cases {
		mine, valid, leaves := nativeVerdict(t, c.schema, c.instance)
		if !mine {
			_, err := compileNative([]byte(c.schema))
			t.Errorf("%s: not native: %v", c.schema, err)
			continue
		}
		if valid != c.valid {
			t.Errorf("%s on %s: valid %v, want %v (%q)", c.schema, c.instance, valid, c.valid, leaves)
		}
		if !c.valid && c.leaf != "" && (len(leaves) == 0 || !strings.Contains(strings.Join(leaves, "; "), c.leaf)) {
			t.Errorf("%s on %s: failures %q lack %q", c.schema, c.instance, leaves, c.leaf)
		}
		if strings.Contains(c.instance, "e999999999") || strings.Contains(c.instance, "e-999999999") {
			continue // the library would expand the number
		}
		if usable, lib := libraryVerdict(t, c.schema, c.instance); !usable || lib != valid {
			t.Errorf("%s on %s: native %v, library usable %v valid %v", c.schema, c.instance, valid, usable, lib)
		}
	}
}

// Everything outside the subset, or of an unexpected shape, is "not mine".
func TestValidateNotMine(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		`{"$id":"http://x/y"}`, `{"$anchor":"a"}`, `{"$dynamicRef":"#a"}`, `{"$dynamicAnchor":"a"}`,
		`{"$vocabulary":{}}`, `{"unevaluatedProperties":false}`, `{"unevaluatedItems":false}`,
		`{"dependencies":{"a":["b"]}}`, `{"$recursiveRef":"#"}`, `{"$recursiveAnchor":true}`, `{"$other":1}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#"}`, `{"properties":{"a":{"$schema":"https://json-schema.org/draft/2020-12/schema"}}}`,
		`{"$ref":"https://example.com/s.json"}`, `{"$ref":"file:///etc/passwd"}`, `{"$ref":"s.json"}`, `{"$ref":"#a"}`,
		`{"$ref":"#/$defs/a%20b","$defs":{"a b":{}}}`, `{"$ref":"#/$defs/missing"}`, `{"$ref":"#/properties"}`,
		`{"$ref":"#/$defs/x~2"}`, `{"$ref":5}`,
		`{"type":"integr"}`, `{"type":[]}`, `{"type":["string","string"]}`, `{"type":5}`,
		`{"minLength":-1}`, `{"minLength":1.5}`, `{"maxItems":"3"}`, `{"minProperties":1e40}`,
		`{"pattern":"("}`, `{"pattern":5}`, `{"patternProperties":{"[":{}}}`,
		`{"multipleOf":0}`, `{"multipleOf":-1}`, `{"maximum":"1"}`, `{"minimum":1e999}`,
		`{"required":["a","a"]}`, `{"required":"a"}`, `{"dependentRequired":{"a":"b"}}`,
		`{"allOf":[]}`, `{"anyOf":{}}`, `{"oneOf":[5]}`, `{"prefixItems":[]}`, `{"items":[{}]}`, `{"not":"x"}`,
		`{"properties":{"a":3}}`, `{"$defs":{"a":null}}`, `{"title":5}`, `{"examples":{}}`, `{"deprecated":"yes"}`,
		`{"uniqueItems":1}`, `5`, `null`, `"x"`, `{} {}`, `{`,
	} {
		if n, err := compileNative([]byte(s)); err == nil || n != nil {
			t.Errorf("%s: native accepted it", s)
		}
	}
}

// The fallback: a schema the native validator leaves alone reaches the helper, which gives the
// library's verdict and reason; a remote $ref there is refused and never fetched.
func TestValidateHelper(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte(`{"type":"string"}`))
	}))
	defer srv.Close()
	ck := trusted(helperBin)
	cases := []struct {
		schema, instance string
		unusable, leaf   string // substrings; both empty = valid
	}{
		{`{"$id":"urn:x","type":"integer"}`, `5`, "", ""},
		{`{"$id":"urn:x","type":"integer"}`, `"5"`, "", "at the top level: got string, want integer"},
		{`{"unevaluatedProperties":false,"properties":{"a":{}}}`, `{"a":1,"b":2}`, "", "at /b: false schema"},
		{`{"$ref":"` + srv.URL + `/s.json"}`, `"x"`, "external reference", ""},
		{`{"properties":{"a":{"$ref":"` + srv.URL + `/s.json"}}}`, `{"a":1}`, "external reference", ""},
		{`{"$ref":"s.json"}`, `1`, "external reference", ""}, // another document, never this one
		{`{"type":"integr"}`, `1`, "schema", ""},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"string"}]}`, `[1]`, "", "at /0: got number, want string"},
	}
	for _, c := range cases {
		before := helperRequests.Load()
		v, err := Decode(strings.NewReader(c.instance))
		if err != nil {
			t.Fatal(err)
		}
		unusable, leaves := ck.Check(json.RawMessage(c.schema), v)
		if helperRequests.Load() == before {
			t.Errorf("%s: the helper was not asked", c.schema)
		}
		switch {
		case c.unusable != "":
			if !strings.Contains(unusable, c.unusable) {
				t.Errorf("%s: unusable %q, want %q", c.schema, unusable, c.unusable)
			}
		case unusable != "":
			t.Errorf("%s: unusable %q", c.schema, unusable)
		case c.leaf == "" && len(leaves) > 0:
			t.Errorf("%s on %s: failures %q, want valid", c.schema, c.instance, leaves)
		case c.leaf != "" && !strings.Contains(strings.Join(leaves, "; "), c.leaf):
			t.Errorf("%s on %s: failures %q lack %q", c.schema, c.instance, leaves, c.leaf)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("a remote $ref was fetched %d times", n)
	}
	// Native schemas never reach the helper.
	before := helperRequests.Load()
	if u, l := ck.Check(json.RawMessage(`{"type":"object","required":["a"]}`), map[string]any{}); u != "" || len(l) != 1 {
		t.Errorf("native: %q %q", u, l)
	}
	if helperRequests.Load() != before {
		t.Errorf("a native schema reached the helper")
	}
}

// A helper that is missing, or that dies, fails the check closed.
func TestValidateHelperFailsClosed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dies := filepath.Join(dir, "dies")
	if err := os.WriteFile(dies, []byte("#!/bin/sh\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, []byte("#!/bin/sh\nwhile read l; do echo 'not json'; done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(dir, "absent"), dies, garbage} {
		ck := trusted(path)
		for range 2 { // the second need starts it again
			unusable, leaves := ck.Check(json.RawMessage(`{"$id":"urn:x"}`), float64(1))
			if !strings.HasPrefix(unusable, "the schema checker cannot run: ") || leaves != nil {
				t.Errorf("%s: unusable %q, failures %q", filepath.Base(path), unusable, leaves)
			}
		}
	}
}

// The helper is never started when the trust check refuses it, or when there is none: the
// schema is then unusable, never judged by an untrusted program.
func TestValidateHelperUntrusted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	planted := filepath.Join(dir, HelperName)
	ran := filepath.Join(dir, "ran")
	if err := os.WriteFile(planted, []byte("#!/bin/sh\ntouch "+ran+"\nwhile read l; do echo '{\"ok\":true}'; done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	refuse := func(path string) error { return fmt.Errorf("program refused: %s lies where the agent writes", path) }
	for _, ck := range []*Checker{{Helper: planted, Trust: refuse}, {Helper: planted}} {
		unusable, failures := ck.Check(json.RawMessage(`{"$id":"urn:x"}`), float64(1))
		if !strings.HasPrefix(unusable, "the schema checker cannot run: program refused: ") || failures != nil {
			t.Errorf("unusable %q, failures %q", unusable, failures)
		}
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the untrusted helper ran")
	}
}

// The differential test: random schemas from the subset (and some outside it) and random
// instances; wherever the native validator takes a schema, its verdict is the library's.
func TestValidateDifferential(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(8))
	ck := trusted(helperBin)
	mine, total := 0, 0
	for i := range 3000 {
		data := make([]byte, 64+rng.Intn(192))
		rng.Read(data)
		total++
		if differential(t, data, ck, i%10 == 0) {
			mine++
		}
	}
	// The generator must mostly stay inside the subset, or the test proves little.
	if mine < total/2 {
		t.Errorf("only %d of %d generated schemas were native", mine, total)
	}
}

func FuzzValidateDifferential(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10"))
	f.Add(bytes.Repeat([]byte{0x5a, 0xc3, 0x11, 0x80}, 32))
	ck := trusted(helperBin)
	f.Fuzz(func(t *testing.T, data []byte) {
		differential(t, data, ck, true)
	})
}

// differential checks one generated schema on a few generated instances; it reports whether
// the schema was native. withHelper also checks the helper's verdicts on schemas that are not.
func differential(t testing.TB, data []byte, ck *Checker, withHelper bool) bool {
	g := &gen{data: data}
	schema := g.schemaText()
	n, nerr := compileNative([]byte(schema))
	for range 4 {
		instance := g.instanceText()
		usable, lib := libraryVerdict(t, schema, instance)
		v, err := Decode(strings.NewReader(instance))
		if err != nil {
			t.Fatalf("instance %s: %v", instance, err)
		}
		if n != nil {
			if !usable {
				t.Fatalf("native accepted a schema the library rejects: %s", schema)
			}
			if leaves := n.validate(v); (len(leaves) == 0) != lib {
				t.Fatalf("schema %s\ninstance %s\nnative valid %v (%q), library valid %v", schema, instance, len(leaves) == 0, leaves, lib)
			}
			continue
		}
		if !withHelper {
			return false
		}
		before := helperRequests.Load()
		unusable, leaves := ck.Check(json.RawMessage(schema), v)
		if helperRequests.Load() == before {
			t.Fatalf("not native (%v) but the helper was not asked: %s", nerr, schema)
		}
		if (unusable == "") != usable || (usable && (len(leaves) == 0) != lib) {
			t.Fatalf("schema %s\ninstance %s\nhelper unusable %q failures %q; library usable %v valid %v", schema, instance, unusable, leaves, usable, lib)
		}
	}
	return n != nil
}

// gen draws choices from fuzz data (zeros once it runs out). A strict generator stays inside
// the subset; the others also write what the native validator must leave to the helper.
type gen struct {
	data   []byte
	i      int
	depth  int
	strict bool
}

// pickValid picks among the first n options when strict, among all of them otherwise.
func (g *gen) pickValid(n int, options ...string) string {
	if g.strict {
		return options[g.next(n)]
	}
	return g.pick(options...)
}

func (g *gen) next(n int) int {
	if g.i >= len(g.data) {
		return 0
	}
	b := g.data[g.i]
	g.i++
	return int(b) % n
}

func (g *gen) pick(options ...string) string { return options[g.next(len(options))] }

var (
	genNumbers = []string{"0", "1", "-1", "1.0", "1.5", "2", "3", "0.07", "0.01", "10", "1e2", "-0.5",
		"9007199254740992", "9007199254740993", "9007199254740994", "123456789012345678901234567890"}
	genStrings = []string{`""`, `"a"`, `"ab"`, `"abc"`, `"é漢"`, `"😀"`, `"x1"`, `"12"`, `"a/b"`, `"b~"`}
	genNames   = []string{"a", "b", "c", "x1", "a/b"}
	genTypes   = []string{"null", "boolean", "number", "integer", "string", "array", "object"}
)

func (g *gen) value() string {
	g.depth++
	defer func() { g.depth-- }()
	k := g.next(10)
	if g.depth > 3 && k >= 7 {
		k = g.next(7)
	}
	switch k {
	case 0:
		return g.pick("null", "true", "false")
	case 1, 2, 3:
		return genNumbers[g.next(len(genNumbers))]
	case 4, 5, 6:
		return genStrings[g.next(len(genStrings))]
	case 7, 8:
		items := make([]string, g.next(4))
		for i := range items {
			items[i] = g.value()
		}
		return "[" + strings.Join(items, ",") + "]"
	default:
		var parts []string
		for i, name := range genNames {
			if g.next(3) == 0 || (i == 0 && g.next(2) == 0) {
				parts = append(parts, fmt.Sprintf("%q:%s", name, g.value()))
			}
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
}

func (g *gen) instanceText() string { return g.value() }

func (g *gen) schemaText() string {
	g.strict = g.next(3) != 0
	defs := ""
	if g.strict || g.next(3) == 0 {
		defs = fmt.Sprintf(`"$defs":{"d0":%s,"d1":%s}`, g.schema(), g.schema())
	}
	s := g.schema()
	if defs != "" && strings.HasPrefix(s, "{") {
		if s == "{}" {
			return "{" + defs + "}"
		}
		return "{" + defs + "," + s[1:]
	}
	return s
}

func (g *gen) schema() string {
	g.depth++
	defer func() { g.depth-- }()
	if g.depth > 3 || g.next(8) == 0 {
		return g.pick("true", "false", "{}")
	}
	var kw []string
	add := func(k, v string) { kw = append(kw, fmt.Sprintf("%q:%s", k, v)) }
	for range 1 + g.next(3) {
		k := g.next(34)
		if g.strict && k >= 28 {
			k = 23 // a $ref in place of what is outside the subset
		}
		switch k {
		case 0:
			add("type", `"`+genTypes[g.next(len(genTypes))]+`"`)
		case 1:
			a, b := g.next(len(genTypes)), g.next(len(genTypes))
			if g.strict && a == b {
				b = (a + 1) % len(genTypes)
			}
			add("type", fmt.Sprintf(`["%s","%s"]`, genTypes[a], genTypes[b]))
		case 2:
			add("const", g.value())
		case 3:
			add("enum", fmt.Sprintf("[%s,%s]", g.value(), g.value()))
		case 4:
			add(g.pick("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"), genNumbers[g.next(len(genNumbers))])
		case 5:
			add("multipleOf", g.pickValid(5, "0.01", "2", "0.5", "3", "1e-2", "0", "-1"))
		case 6:
			add(g.pick("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains", "maxContains"),
				g.pickValid(5, "0", "1", "2", "1.0", "3", "-1", "1.5"))
		case 7:
			add("pattern", g.pickValid(6, `"^a"`, `"b$"`, `"^[a-z]+$"`, `"\\d"`, `"é"`, `""`, `"("`))
		case 8:
			add("items", g.schema())
		case 9:
			add("prefixItems", fmt.Sprintf("[%s,%s]", g.schema(), g.schema()))
		case 10:
			add("uniqueItems", g.pick("true", "false"))
		case 11:
			add("contains", g.schema())
		case 12, 13:
			add("properties", fmt.Sprintf(`{"%s":%s,"%s":%s}`, g.pick(genNames...), g.schema(), g.pick(genNames...), g.schema()))
		case 14:
			add("required", g.pickValid(4, `["a"]`, `["a","b"]`, `[]`, `["c","x1"]`, `["a","a"]`))
		case 15:
			add("additionalProperties", g.schema())
		case 16:
			add("patternProperties", fmt.Sprintf(`{"%s":%s}`, g.pickValid(3, "^a", "1$", "b", "["), g.schema()))
		case 17:
			add("propertyNames", g.schema())
		case 18:
			add("dependentRequired", g.pick(`{"a":["b"]}`, `{"b":["a","c"]}`, `{"a":[]}`))
		case 19:
			add("dependentSchemas", fmt.Sprintf(`{"%s":%s}`, g.pick(genNames...), g.schema()))
		case 20:
			add(g.pick("allOf", "anyOf", "oneOf"), fmt.Sprintf("[%s,%s]", g.schema(), g.schema()))
		case 21:
			add("not", g.schema())
		case 22:
			add("if", g.schema())
			add("then", g.schema())
			if g.next(2) == 0 {
				add("else", g.schema())
			}
		case 23, 24:
			add("$ref", g.pickValid(3, `"#"`, `"#/$defs/d0"`, `"#/$defs/d1"`, `"#/properties/a"`, `"#/items"`, `"#/$defs/missing"`,
				`"#/allOf/0"`, `"#/$defs/d0/properties/a"`))
		case 25:
			add(g.pick("title", "description", "$comment", "format"), g.pickValid(2, `"date"`, `"x"`, `5`))
		case 26:
			k, v := g.pick("default", "examples", "x-unknown", "deprecated", "readOnly"), g.pick(`[1]`, `true`, `{"type":"string"}`)
			if g.strict {
				v = map[string]string{"default": v, "x-unknown": v, "examples": `[1]`, "deprecated": `true`, "readOnly": `false`}[k]
			}
			add(k, v)
		case 27:
			add("contentSchema", g.schema())
		case 28:
			// Outside the subset: these go to the helper.
			add(g.pick("$id", "$anchor", "unevaluatedProperties", "dependencies", "$dynamicRef", "additionalItems"),
				g.pick(`"urn:x"`, `false`, `{"a":["b"]}`, `"a"`))
		case 29:
			add("$schema", g.pick(`"https://json-schema.org/draft/2020-12/schema"`, `"http://json-schema.org/draft-07/schema#"`))
		case 30:
			add("type", g.pick(`"integr"`, `[]`, `["string","string"]`))
		case 31:
			add("$ref", g.pick(`"http://127.0.0.1:1/x.json"`, `"#foo"`, `"other.json"`))
		case 32:
			add("definitions", fmt.Sprintf(`{"x":%s}`, g.schema()))
		default:
			add("$ref", `"#/definitions/x"`)
		}
	}
	return "{" + strings.Join(kw, ",") + "}"
}

// The fuzzer's find (CI, 2026-12-01): two "$schema" keys, the last draft-07, with a "format".
// The library takes the last key and, by default, asserts formats before 2019-09; the oracle
// must judge as SPEC 5 says, where a format never refuses a value, and so must the helper.
func TestDifferentialFormatUnderDraft07(t *testing.T) {
	t.Parallel()
	ck := trusted(helperBin)
	for _, schema := range []string{
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","$schema":"http://json-schema.org/draft-07/schema#","format":"date"}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","format":"email"}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"a":{"format":"regex"}}}`,
	} {
		for _, instance := range []string{`""`, `"(["`, `{"a":"(["}`} {
			usable, valid := libraryVerdict(t, schema, instance)
			if !usable || !valid {
				t.Errorf("oracle: %s refused %s (usable %v)", schema, instance, usable)
			}
			v, _ := Decode(strings.NewReader(instance))
			if unusable, leaves := ck.Check(json.RawMessage(schema), v); unusable != "" || len(leaves) > 0 {
				t.Errorf("helper: %s on %s: unusable %q failures %q", schema, instance, unusable, leaves)
			}
		}
	}
}
