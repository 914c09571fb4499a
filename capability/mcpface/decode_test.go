package mcpface

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

var decodeSeeds = []string{
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"spear_invoke","arguments":{"id":"bench/echo","arguments":{"message":"found"}}}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","id":"a-1","method":"tools/list"}`,
	` { "params" : [1, {"a":"}"}] , "method":"x", "id":-3 , "jsonrpc" : "2.0" } `,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":null}`,
	`{"jsonrpc":"2.0","id":1.5,"method":"x"}`,
	`{"jsonrpc":"2.0","id":1e3,"method":"x"}`,
	`{"jsonrpc":"2.0","id":12345678901234567890,"method":"x"}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","method":"y"}`,
	`{"jsonrpc":"2.0","id":1,"Method":"x"}`,
	`{"jsonrpc":"2.0","id":1,"method":"\u0078"}`,
	`{"jsonrpc":"2.0","id":"\u0031","method":"x"}`,
	`{"jsonrpc":"1.0","id":1,"method":"x"}`,
	`{"jsonrpc":"2.0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":null,"method":"x"}`,
	`{"jsonrpc":"2.0","id":true,"method":"x"}`,
	`{"jsonrpc":"2.0","id":1,"method":null}`,
	`{"jsonrpc":"2.0","id":1,"method":""}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":"s"}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":{}}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","extra":1}`,
	`[{"jsonrpc":"2.0","id":1,"method":"x"}]`,
	`{"jsonrpc":"2.0","id":-0,"method":"x"}`,
	`{}`, `{`, `"x"`, `null`,
}

// The fast reading answers exactly as the SDK's decoder wherever it answers at all.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		sameAsSDK(t, line)
	})
}

func TestDecodeMessageIsTheSDKs(t *testing.T) {
	t.Parallel()
	fast := 0
	for _, s := range decodeSeeds {
		if sameAsSDK(t, []byte(s)) {
			fast++
		}
	}
	if fast < 6 {
		t.Fatalf("only %d of the seeds read without the SDK's decoder", fast)
	}
	if decodeRequest([]byte(decodeSeeds[0])) == nil {
		t.Fatal("a tools/call as agent terminals send it is left to the SDK's decoder")
	}
}

// sameAsSDK checks decodeMessage against jsonrpc.DecodeMessage and says whether the fast
// reading answered.
func sameAsSDK(t *testing.T, line []byte) bool {
	t.Helper()
	want, werr := jsonrpc.DecodeMessage(line)
	got, gerr := decodeMessage(line)
	fast := decodeRequest(line) != nil
	if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
		t.Fatalf("%q: error %v, SDK's %v", line, gerr, werr)
	}
	if werr != nil {
		return fast
	}
	wr, wok := want.(*jsonrpc.Request)
	gr, gok := got.(*jsonrpc.Request)
	if wok != gok {
		t.Fatalf("%q: %T, SDK's %T", line, got, want)
	}
	if !wok {
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: %#v, SDK's %#v", line, got, want)
		}
		return fast
	}
	if gr.Method != wr.Method || gr.ID != wr.ID || !bytes.Equal(gr.Params, wr.Params) || (gr.Params == nil) != (wr.Params == nil) {
		t.Fatalf("%q: request %q %#v %q, SDK's %q %#v %q", line, gr.Method, gr.ID, gr.Params, wr.Method, wr.ID, wr.Params)
	}
	return fast
}
