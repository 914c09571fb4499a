package mcpstdio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// resultByMaps is how a result was read before decodeResult walked it once (encoding/json into
// maps, each content item again): kept as the oracle decodeResult is held to.
func resultByMaps(raw json.RawMessage) (*CallResult, error) {
	field := func(m map[string]json.RawMessage, key string) string {
		var s string
		if v, ok := m[key]; ok && len(v) > 0 && v[0] == '"' {
			_ = json.Unmarshal(v, &s)
		}
		return s
	}
	m, err := object(raw)
	if err != nil {
		return nil, err
	}
	res := &CallResult{StructuredContent: nonNull(m["structuredContent"]), Meta: nonNull(m["_meta"]), Raw: raw}
	if v := nonNull(m["isError"]); v != nil {
		if err := json.Unmarshal(v, &res.IsError); err != nil {
			return nil, fmt.Errorf("isError is not a boolean: %s", snippet(v))
		}
	}
	if v := nonNull(m["content"]); v != nil {
		var items []json.RawMessage
		if err := json.Unmarshal(v, &items); err != nil {
			return nil, fmt.Errorf("content is not an array: %s", snippet(v))
		}
		res.Content = make([]Content, 0, len(items))
		for i, item := range items {
			im, err := object(item)
			if err != nil {
				return nil, fmt.Errorf("content item %d: %w", i, err)
			}
			res.Content = append(res.Content, Content{Type: field(im, "type"), Text: field(im, "text"), MimeType: field(im, "mimeType"), Raw: item})
		}
	}
	return res, nil
}

var resultSeeds = []string{
	`{"content":[{"type":"text","text":"hi"}]}`,
	`{"content":[{"type":"text","text":"a\u00e9\ud83d\ude00\n"},{"type":"image","data":"AA==","mimeType":"image/png"}],"isError":false}`,
	`{"content":[],"isError":true,"structuredContent":{"a":1},"_meta":{"k":"v"}}`,
	` { "content" : [ { "type" : "text" , "text" : "x" } ] , "isError" : null } `,
	`{"content":null,"structuredContent":null,"_meta":null}`,
	`{"content":[{"type":"text","type":5,"text":"x"}],"content":[{"type":"text","text":"last"}]}`,
	`{"c\u006fntent":[{"t\u0079pe":"text","text":"escaped keys"}],"isErr\u006fr":true}`,
	`{"Content":[{"type":"text"}],"ISERROR":"yes"}`,
	"{\"content\":[{\"type\":\"text\",\"text\":\"\xff\xfe bad utf-8\"}]}",
	`{"content":[{"type":"text","text":"\x41 not an escape"}]}`,
	`{"content":[{"type":"text","text":"\udc00 lone surrogate"}]}`,
	`{"isError":1}`,
	`{"isError":"true"}`,
	`{"content":{}}`,
	`{"content":"text"}`,
	`{"content":[null]}`,
	`{"content":[{"type":"text"},[1]]}`,
	`{"content":[{"type":"text"},"x"]}`,
	`[]`,
	`null`,
	`"x"`,
	`{}`,
}

func TestDecodeResultReadsAsTheMapsDid(t *testing.T) {
	for _, s := range resultSeeds {
		checkDecodeResult(t, []byte(s))
	}
}

// checkDecodeResult holds decodeResult to resultByMaps on valid JSON, and DecodeResult to
// refusing anything else.
func checkDecodeResult(t *testing.T, raw []byte) {
	t.Helper()
	if !json.Valid(raw) {
		if _, err := DecodeResult(raw); err == nil {
			t.Fatalf("%q is not JSON, and was read as a result", raw)
		}
		return
	}
	sameAsMaps(t, raw)
}

func FuzzDecodeResult(f *testing.F) {
	for _, s := range resultSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkDecodeResult)
}

func sameAsMaps(t *testing.T, raw []byte) {
	t.Helper()
	want, werr := resultByMaps(raw)
	got, gerr := decodeResult(raw)
	if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
		t.Fatalf("%s: error %v, want %v", raw, gerr, werr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %+v\nwant %+v", raw, got, want)
	}
	judged, jerr := readResult(raw, false) // CallToolRaw's: judged alike, content not kept
	if (jerr == nil) != (gerr == nil) || jerr != nil && jerr.Error() != gerr.Error() {
		t.Fatalf("%s: judged without its content: error %v, want %v", raw, jerr, gerr)
	}
	if jerr == nil && (!bytes.Equal(judged.Raw, got.Raw) || judged.IsError != got.IsError || judged.Content != nil) {
		t.Fatalf("%s: judged without its content as %+v, want Raw and IsError of %+v", raw, judged, got)
	}
	if _, err := DecodeResult(raw); (err == nil) != (werr == nil) {
		t.Fatalf("%s: DecodeResult's error %v, want %v", raw, err, werr)
	}
}

// A tools/call request written by hand is the line json.Marshal writes, byte for byte, or is
// left to it.
func FuzzAppendCall(f *testing.F) {
	f.Add(int64(1), "echo", []byte(`{"message":"found"}`))
	f.Add(int64(-7), "é", []byte(` [1, "a\"}b" ,{"x":[]}] `))
	f.Add(int64(1<<62), "a<b", []byte(`{"h":"<&>"}`))
	f.Add(int64(0), "", []byte(`"\u2028 x"`))
	f.Add(int64(3), "x", []byte(`{"a":`))
	f.Add(int64(3), "x", []byte("\"\xff\""))
	f.Add(int64(3), "x", []byte(nil))
	f.Fuzz(func(t *testing.T, id int64, name string, args []byte) {
		params := callParams{Name: name, Arguments: args}
		want, werr := json.Marshal(outRequest{JSONRPC: "2.0", ID: id, Method: "tools/call", Params: params})
		prefix := []byte("before\n")
		got, ok := appendCall(bytes.Clone(prefix), id, "tools/call", params)
		if !ok {
			if !bytes.Equal(got, prefix) {
				t.Fatalf("%+v: left to json.Marshal, but %q written", params, got)
			}
			return
		}
		if werr != nil || !bytes.Equal(got, append(prefix, want...)) {
			t.Fatalf("%+v: written as %q, json.Marshal writes %q (%v)", params, got, want, werr)
		}
	})
}

// A call is written by hand (the fast path is taken, not only equal); other requests are not.
func TestCallsAreWrittenByHand(t *testing.T) {
	if _, ok := appendCall(nil, 1, "tools/call", callParams{Name: "echo", Arguments: json.RawMessage(`{"message":"found"}`)}); !ok {
		t.Fatal("a call left to json.Marshal")
	}
	if _, ok := appendCall(nil, 1, "tools/list", callParams{Name: "echo"}); ok {
		t.Fatal("a tools/list written as a call")
	}
}
