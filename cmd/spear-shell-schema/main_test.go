package main

import (
	"encoding/json"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/spear-shell/spear-shell/capability/schemaformat"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// One answer per request line, in order; blank lines are skipped; compiled schemas are reused.
func TestServe(t *testing.T) {
	t.Parallel()
	cases := []struct {
		req  string
		want answer
	}{
		{`{"schema":{"type":"integer"},"instance":1.0}`, answer{OK: true}},
		{`{"schema":{"type":"integer"},"instance":"x"}`, answer{Errors: []string{"at the top level: got string, want integer"}}},
		{`{"schema":{"properties":{"a/b":{"maximum":10}}},"instance":{"a/b":11}}`,
			answer{Errors: []string{"at /a~1b: maximum: got 11, want 10"}}},
		{`{"schema":{"$ref":"https://example.com/s.json"},"instance":1}`, answer{Unusable: "external reference"}},
		// A relative reference names another document, never this one.
		{`{"schema":{"properties":{"a":{"$ref":"other.json"}}},"instance":{"a":1}}`, answer{Unusable: "external reference"}},
		{`{"schema":{"$ref":"other.json#/x"},"instance":{}}`, answer{Unusable: "external reference"}},
		{`{"schema":{"$ref":"other.json"},"instance":{}}`, answer{Unusable: "external reference"}},
		{`{"schema":{"properties":{"a":{"$ref":"#/$defs/s"}},"$defs":{"s":{"type":"string"}}},"instance":{"a":1}}`,
			answer{Errors: []string{"at /a: got number, want string"}}},
		{`{"schema":{"type":"integr"},"instance":1}`, answer{Unusable: "schema: "}},
		{`{"schema":{"$id":"urn:x","required":["a","b"]},"instance":{}}`, answer{Errors: []string{"at the top level: missing properties 'a', 'b'"}}},
		// format is an annotation in every draft, draft-07 and earlier included (SPEC 5).
		{`{"schema":{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"to":{"type":"string","format":"email"}}},"instance":{"to":"not an address"}}`,
			answer{OK: true}},
		{`{"schema":{"$schema":"http://json-schema.org/draft-04/schema#","format":"date-time"},"instance":"yesterday"}`, answer{OK: true}},
		{`{"schema":{"$schema":"http://json-schema.org/draft-07/schema#","format":"regex"},"instance":"("}`, answer{OK: true}},
		{`{"schema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"string","format":"email","maxLength":3},"instance":"toolong"}`,
			answer{Errors: []string{"at the top level: maxLength: got 7, want 3"}}},
		// Patterns are still checked: a schema with an invalid one cannot be used.
		{`{"schema":{"$schema":"http://json-schema.org/draft-07/schema#","pattern":"("},"instance":"x"}`, answer{Unusable: "schema: "}},
		{`{"schema":{"$schema":"http://json-schema.org/draft-07/schema#","pattern":"^a+$"},"instance":"b"}`,
			answer{Errors: []string{"at the top level: 'b' does not match pattern '^a+$'"}}},
		{`{"instance":1}`, answer{Unusable: "the request is not"}},
		{`not json`, answer{Unusable: "the request is not"}},
	}
	var in strings.Builder
	for _, c := range cases {
		in.WriteString(c.req + "\n\n")
	}
	var out strings.Builder
	if err := serve(strings.NewReader(in.String()), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("%d answers for %d requests:\n%s", len(lines), len(cases), out.String())
	}
	for i, c := range cases {
		var got answer
		if err := json.Unmarshal([]byte(lines[i]), &got); err != nil {
			t.Fatalf("answer %q: %v", lines[i], err)
		}
		if got.OK != c.want.OK || !strings.Contains(got.Unusable, c.want.Unusable) || (c.want.Unusable == "") != (got.Unusable == "") ||
			strings.Join(got.Errors, "|") != strings.Join(c.want.Errors, "|") {
			t.Errorf("%s: got %+v, want %+v", c.req, got, c.want)
		}
	}
}

// No built-in format refuses a value under draft-07, where the library asserts formats unless
// told otherwise: every name it knows, given a value no format accepts.
func TestFormatsAreAnnotations(t *testing.T) {
	t.Parallel()
	for _, draft := range []string{"http://json-schema.org/draft-04/schema#", "http://json-schema.org/draft-06/schema#",
		"http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft/2019-09/schema", "https://json-schema.org/draft/2020-12/schema"} {
		for _, name := range append([]string{"regex"}, schemaformat.Builtin...) {
			schema, _ := json.Marshal(map[string]any{"$schema": draft, "format": name})
			sch, err := compile(schema)
			if err != nil {
				t.Fatalf("%s %s: %v", draft, name, err)
			}
			if err := sch.Validate("\\x \u0000 (["); err != nil {
				t.Errorf("%s: format %q refused a value: %v", draft, name, err)
			}
		}
	}
}
