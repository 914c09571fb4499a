package main

import (
	"encoding/json"
	"strings"
	"testing"

	"go.uber.org/goleak"
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
