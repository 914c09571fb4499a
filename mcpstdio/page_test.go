package mcpstdio

import (
	"encoding/json"
	"reflect"
	"testing"
)

// referencePage decodes a page the slow, obvious way, for comparison with decodePage.
func referencePage(raw []byte) ([]Tool, string, bool) {
	var page map[string]json.RawMessage
	if json.Unmarshal(raw, &page) != nil || page == nil {
		return nil, "", false
	}
	var items []json.RawMessage
	if json.Unmarshal(page["tools"], &items) != nil || items == nil {
		return nil, "", false
	}
	tools := []Tool{}
	for _, item := range items {
		var m map[string]json.RawMessage
		if json.Unmarshal(item, &m) != nil || m == nil {
			return nil, "", false
		}
		str := func(k string) string {
			var s string
			if v := m[k]; len(v) > 0 && v[0] == '"' {
				_ = json.Unmarshal(v, &s)
			}
			return s
		}
		tools = append(tools, Tool{Name: str("name"), Title: str("title"), Description: str("description"),
			InputSchema: m["inputSchema"], OutputSchema: nonNull(m["outputSchema"]), Annotations: nonNull(m["annotations"]), Raw: item})
	}
	var next string
	if rc := nonNull(page["nextCursor"]); rc != nil && json.Unmarshal(rc, &next) != nil {
		return nil, "", false
	}
	return tools, next, true
}

var pageCases = []string{
	`{"tools":[]}`,
	`{"tools":[{"name":"a","description":"d","inputSchema":{"type":"object"}}],"nextCursor":"c1"}`,
	` { "tools" : [ { "name" : "a\"b" , "inputSchema" : { "x" : [ 1 , "]" , {"}":"{"} ] } , "outputSchema" : null } ] , "nextCursor" : null } `,
	`{"tools":[{"name":"x","name":"y","description":"\u00e9\n","annotations":{"readOnlyHint":true}}]}`,
	`{"Tools":[]}`,
	`{"tools":null}`,
	`{"tools":[1]}`,
	`{"tools":[{"name":7,"inputSchema":"s"}]}`,
	`{"tools":[{"name":"é\u0000"}],"nextCursor":3}`,
	`{"tools":[{"name":"a"}],"tools":[{"name":"b"}]}`,
	`[]`,
	`{"tools":[{"inputSchema":{"a":"\\"}}]}`,
	`{"tools":[{"name":"t","title":"T","annotations":null},{"name":"u","title":3,"annotations":{"title":"x"}}]}`,
}

func FuzzDecodePage(f *testing.F) {
	for _, c := range pageCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !json.Valid([]byte(raw)) {
			return // pages reach decodePage only inside a message that decoded as JSON
		}
		c := &Client{opts: Options{MaxTools: DefaultMaxTools}}
		var got []Tool
		next, err := c.decodePage(json.RawMessage(raw), &got)
		want, wantNext, ok := referencePage([]byte(raw))
		if ok != (err == nil) {
			t.Fatalf("%s: decodePage error %v, reference ok %v", raw, err, ok)
		}
		if !ok {
			return
		}
		if got == nil {
			got = []Tool{}
		}
		if next != wantNext || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s:\n got %+v %q\nwant %+v %q", raw, got, next, want, wantNext)
		}
	})
}

// FuzzStringValue holds the hand-written string decoding to encoding/json's on every valid
// JSON string: escapes, surrogate pairs, lone surrogates and invalid UTF-8 alike.
func FuzzStringValue(f *testing.F) {
	for _, s := range []string{
		`""`, `"plain"`, `"a\nb\"c\\d\/e\bf\fg\rh\ti"`, `"\u00e9\u4e2d"`, `"\ud83d\ude00"`, `"\ud83d"`,
		`"\ude00\ud83d"`, `"\ud83dx"`, `"\ud83d\u0041"`, `"\ud83d\ud83d\ude00"`, `"\u0000"`, "\"\xff\xfeé\"",
		"\"a\xe2\x82\"", "\"\xed\xa0\x80\"", `"\uDBFF\uDFFF"`, "\"é\\n\xc3\"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' || !json.Valid([]byte(s)) {
			return // values reach stringValue as their exact bytes
		}
		var want string
		if err := json.Unmarshal([]byte(s), &want); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if got := stringValue([]byte(s)); got != want {
			t.Fatalf("stringValue(%q) = %q, want %q", s, got, want)
		}
	})
}
