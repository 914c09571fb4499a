package provlink

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"testing"

	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/mcpstdio"
)

// A provider failure that happened in the keeper reads, in the answering process, as the same
// error: the same message, stage, stderr tail, and the same sentinels and error types, which are
// all that the reason told to the turn and the code of the answer are judged by.
func TestKeeperErrorsReadAsTheirOriginal(t *testing.T) {
	t.Parallel()
	rpc := &mcpstdio.RPCError{Code: -32602, Message: "no such tool", Data: json.RawMessage(`{"why":1}`)}
	tests := []struct {
		name string
		err  error
	}{
		{"start", fmt.Errorf("%w: fork/exec /x: no such file", mcpstdio.ErrStart)},
		{"version", &mcpstdio.VersionError{Offered: "2024-11-05"}},
		{"timeout", &mcpstdio.TimeoutError{Stage: mcpstdio.StageCall, Err: context.DeadlineExceeded}},
		{"eof at initialize", &mcpstdio.ProtocolError{Stage: mcpstdio.StageInitialize, Err: io.ErrUnexpectedEOF}},
		{"eof at call", &mcpstdio.ProtocolError{Stage: mcpstdio.StageCall, Err: io.ErrUnexpectedEOF}},
		{"protocol", &mcpstdio.ProtocolError{Stage: mcpstdio.StageList, Err: errors.New("cursor repeated")}},
		{"rpc", fmt.Errorf("%s: %w", mcpstdio.StageList, rpc)},
		{"too large", &mcpstdio.TooLargeError{Size: 100 << 20, Limit: 64 << 20}},
		{"cancelled", fmt.Errorf("call: %w", context.Canceled)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, err := json.Marshal(Response{Err: ToWire(tt.err, "last words")})
			if err != nil {
				t.Fatal(err)
			}
			var rep Response
			if err := json.Unmarshal(b, &rep); err != nil || rep.Err == nil {
				t.Fatalf("reply %s: %v", b, err)
			}
			got := rep.Err.Err()
			if got.Error() != tt.err.Error() {
				t.Errorf("message %q, want %q", got, tt.err)
			}
			if providers.StageOf(got) != mcpstdio.StageOf(tt.err) {
				t.Errorf("stage %q, want %q", providers.StageOf(got), mcpstdio.StageOf(tt.err))
			}
			if providers.StderrOf(got) != "last words" {
				t.Errorf("tail %q", providers.StderrOf(got))
			}
			for _, s := range sentinels {
				if errors.Is(got, s.err) != errors.Is(tt.err, s.err) {
					t.Errorf("errors.Is %s: %v, want %v", s.name, errors.Is(got, s.err), errors.Is(tt.err, s.err))
				}
			}
			var gr, wr *mcpstdio.RPCError
			if errors.As(got, &gr) != errors.As(tt.err, &wr) || gr != nil && (gr.Code != wr.Code || gr.Message != wr.Message) {
				t.Errorf("RPCError %+v, want %+v", gr, wr)
			}
			var gt, wt *mcpstdio.TooLargeError
			if errors.As(got, &gt) != errors.As(tt.err, &wt) || gt != nil && *gt != *wt {
				t.Errorf("TooLargeError %+v, want %+v", gt, wt)
			}
		})
	}
}

// Tools cross the socket whole: what the answering process judges is what the provider listed.
func TestKeeperToolsCrossWhole(t *testing.T) {
	t.Parallel()
	in := []mcpstdio.Tool{
		{Name: "a", Title: "A", Description: "d", InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"object"}`),
			Annotations: json.RawMessage(`{"readOnlyHint":true}`)},
		{Name: "b", InputSchema: json.RawMessage(`null`)},
		{Name: "", InputSchema: nil},
	}
	b, err := json.Marshal(Response{Tools: ToWireTools(in)})
	if err != nil {
		t.Fatal(err)
	}
	var rep Response
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	out := FromWireTools(rep.Tools)
	if len(out) != len(in) {
		t.Fatalf("%d tools, want %d", len(out), len(in))
	}
	for i := range in {
		if out[i].Name != in[i].Name || out[i].Description != in[i].Description || out[i].Title != in[i].Title ||
			string(out[i].Annotations) != string(in[i].Annotations) ||
			string(out[i].InputSchema) != string(in[i].InputSchema) || string(out[i].OutputSchema) != string(in[i].OutputSchema) {
			t.Errorf("tool %d: %+v, want %+v", i, out[i], in[i])
		}
	}
}

// Every answer reads back as what it said: a call's result alone, written around the
// provider's bytes and read from between them, exactly (those bytes kept as they came, HTML
// characters and spacing included); any other answer as json.Marshal writes it, a result
// followed by more members included.
func TestResponsesReadBackAsSent(t *testing.T) {
	t.Parallel()
	raw := json.RawMessage(`{"content":[{"type":"text","text":"<a> & b"}], "isError" :false}`)
	tests := []Response{
		{Result: raw},
		{Result: json.RawMessage(`{}`)},
		{Result: raw, Tail: "last words"},
		{Result: json.RawMessage(`{"a":1}`), Err: &WireError{Msg: "x"}},
		{Moved: true, Defs: []WireDef{{Name: "echo", Count: 1, Tool: &WireTool{Name: "echo"}}}, Hash: "h", AgeMS: 3},
		{Err: &WireError{Msg: "gone", Is: []string{"closed"}}},
		{Tools: []WireTool{{Name: "echo", Input: json.RawMessage(`{"type":"object"}`)}}},
		{},
	}
	for _, r := range tests {
		line, err := EncodeResponse(r)
		if err != nil {
			t.Fatal(err)
		}
		if len(line) == 0 || line[len(line)-1] != '\n' || bytes.Count(line, []byte("\n")) != 1 {
			t.Fatalf("%q is not one line", line)
		}
		got, err := DecodeResponse(line)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if r.Result != nil && r.Tail == "" && !bytes.Equal(got.Result, r.Result) {
			t.Errorf("result %s came back as %s", r.Result, got.Result)
		}
		want, _ := json.Marshal(r)
		again, _ := json.Marshal(got)
		if !bytes.Equal(want, again) {
			t.Errorf("%s came back as %s", want, again)
		}
	}
}

// A line that starts as a result alone but is not one is read whole, or refused.
func TestResponsesThatOnlyLookLikeAResult(t *testing.T) {
	t.Parallel()
	for line, want := range map[string]string{
		`{"result":{"a":1},"tail":"t"}` + "\n": `{"result":{"a":1},"tail":"t"}`,
		`{"result":{"a":1}}` + "\n":            `{"result":{"a":1}}`,
		`{"result":{"a":1} }` + "\n":           `{"result":{"a":1}}`,
		`{"result":{"a":}` + "\n":              "",
		`{"result":1}}` + "\n":                 "",
	} {
		got, err := DecodeResponse([]byte(line))
		if want == "" {
			if err == nil {
				t.Errorf("%q was read as %+v", line, got)
			}
			continue
		}
		b, _ := json.Marshal(got)
		if err != nil || string(b) != want {
			t.Errorf("%q read as %s, %v; want %s", line, b, err, want)
		}
	}
}

// TestResultAloneSeesEveryField: EncodeResponse writes a result around its bytes only when
// nothing else is set; every other field of Response, set, makes it encode the whole answer.
func TestResultAloneSeesEveryField(t *testing.T) {
	base := Response{Result: json.RawMessage(`{"content":[]}`)}
	if !resultAlone(base) {
		t.Fatal("a result alone is not seen as alone")
	}
	typ := reflect.TypeOf(base)
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Name == "Result" {
			continue
		}
		r := base
		v := reflect.ValueOf(&r).Elem().Field(i)
		switch v.Kind() {
		case reflect.Pointer:
			v.Set(reflect.New(f.Type.Elem()))
		case reflect.Slice:
			v.Set(reflect.MakeSlice(f.Type, 0, 0))
		case reflect.String:
			v.SetString("x")
		case reflect.Int64:
			v.SetInt(1)
		case reflect.Bool:
			v.SetBool(true)
		default:
			t.Fatalf("field %s: kind %s not covered here", f.Name, v.Kind())
		}
		if resultAlone(r) {
			t.Errorf("field %s set, but the result is seen as alone", f.Name)
		}
		line, err := EncodeResponse(r)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeResponse(line)
		if err != nil || !reflect.DeepEqual(back.Result, r.Result) {
			t.Errorf("field %s: %s read back as %+v, %v", f.Name, line, back, err)
		}
	}
}
