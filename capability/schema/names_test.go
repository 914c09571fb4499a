package schema

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"testing"
)

// PropertyNames reads what Declared decodes, for any schema.
func TestPropertyNames(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{"type":"object","properties":{"a":{"type":"string"},"b":{"enum":["}",{"x":[1,2]}]}},"required":["a"]}`,
		` { "properties" : { "k\"ey" : { } , "é" : 1 } , "x" : "properties" } `,
		`{"type":"object"}`,
		`{"properties":{}}`,
		`{"description":"{\"properties\":{\"fake\":1}}","properties":{"real":true}}`,
		`{"properties":[1,2]}`,
		`{"a":[{"properties":{"nested":1}}],"properties":{"top":null}}`,
		`{"Properties":{"a":1},"propertIes":{"b":1}}`, // JSON Schema keys are case-sensitive
	} {
		got := PropertyNames([]byte(in))
		want := slices.Sorted(maps.Keys(Declared([]byte(in))))
		if !reflect.DeepEqual(slices.Sorted(slices.Values(got)), want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("PropertyNames(%s) = %q, want %q", in, got, want)
		}
	}
}

func FuzzPropertyNames(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"type":"string"},"b":{}}}`)
	f.Add(`{"properties":{"x\u0041":1},"properties2":{}}`)
	f.Fuzz(func(t *testing.T, in string) {
		if !json.Valid([]byte(in)) {
			return
		}
		got := PropertyNames([]byte(in))
		want := slices.Sorted(maps.Keys(Declared([]byte(in))))
		got = slices.Sorted(slices.Values(got))
		if len(got) != len(want) || (len(got) > 0 && !reflect.DeepEqual(got, want)) {
			t.Fatalf("PropertyNames(%s) = %q, want %q", in, got, want)
		}
	})
}
