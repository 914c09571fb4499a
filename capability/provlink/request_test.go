package provlink

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// A call as Conn writes it is read in one walk; it must read as json.Unmarshal reads it, and
// so must every line, whichever way it is read.
func FuzzDecodeRequest(f *testing.F) {
	for _, r := range []Request{
		{Op: OpCall, Name: "echo", Arguments: json.RawMessage(`{"message":"found"}`), Listing: "abc", TimeoutMS: 59999},
		{Op: OpCall, Name: "echo"},
		{Op: OpCall, Name: "é", Arguments: json.RawMessage(`[1,"a\"}b",{"x":[]}]`)},
		{Op: OpCall, Arguments: json.RawMessage(`"s,}"`), TimeoutMS: 1},
		{Op: OpCall, Arguments: json.RawMessage(`12.5e3`)},
		{Op: OpCall, Arguments: json.RawMessage(`null`)},
		{Op: OpTools, Names: []string{"a", "b"}},
		{Op: OpHello, Protocol: 3, Turn: "t", Key: "k"},
	} {
		line, err := json.Marshal(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(append(line, '\n'))
	}
	for _, s := range []string{
		`{"op":"call","name":"a\u0062"}`, `{"op":"call","name":"\xff"}`, `{"op":"call","arguments": {}}`,
		`{"op":"call","arguments":{} }`, `{"op":"call","arguments":1 ,"listing":"x"}`, `{"op":"call","timeout_ms":007}`,
		`{"op":"call","timeout_ms":1e3}`, `{"op":"call","timeout_ms":99999999999999999999}`, `{"op":"call","arguments":{"a":1}}}`,
		`{"op":"call","arguments":{"a":1},"arguments":2}`, `{"op":"call","name":"x"}` + "\n\n", `{"op":"call","Name":"x"}`,
		`{"op":"call","arguments":[1,2}`, `{"op":"call","arguments":"\"}"}`, `{"op":"calls"}`, `{"op":"call"} x`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var want Request
		werr := json.Unmarshal(line, &want)
		buf := bytes.Clone(line)
		got, err := DecodeRequest(buf)
		if (err == nil) != (werr == nil) {
			t.Fatalf("%q: error %v, json.Unmarshal's %v", line, err, werr)
		}
		if err != nil {
			return
		}
		for i := range buf {
			buf[i] = 'x' // the arguments are a copy, as json.Unmarshal's are
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: read as %+v, json.Unmarshal reads %+v", line, got, want)
		}
	})
}

// The call Conn writes is the one read in a walk: the fast path is taken, not only equal.
func TestCallsAreReadInOneWalk(t *testing.T) {
	line, err := json.Marshal(Request{Op: OpCall, Name: "echo", Arguments: json.RawMessage(`{"message":"found"}`), Listing: "h", TimeoutMS: 60000})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := quickCall(append(line, '\n')); !ok {
		t.Fatalf("%s: not read in one walk", line)
	}
}
