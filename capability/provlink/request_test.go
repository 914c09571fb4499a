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

// A call Conn writes by hand is the line json.Marshal writes, byte for byte, or is left to it.
func FuzzAppendCall(f *testing.F) {
	f.Add("echo", []byte(`{"message":"found"}`), "abc", int64(59999))
	f.Add("é", []byte(` [1, "a\"}b" ,{"x":[]}] `), "", int64(0))
	f.Add("a<b", []byte(`{"h":"<&>"}`), "\u2028", int64(-1))
	f.Add("", []byte(`"\u2028 x"`), "h", int64(1))
	f.Add("x", []byte(`{"a":`), "h", int64(1))
	f.Add("x", []byte("\"\xff\""), "h", int64(1))
	f.Add("x", []byte(nil), "", int64(0))
	f.Fuzz(func(t *testing.T, name string, args []byte, listing string, timeout int64) {
		r := Request{Op: OpCall, Name: name, Arguments: args, Listing: listing, TimeoutMS: timeout}
		want, werr := json.Marshal(r)
		prefix := []byte("before\n")
		got, ok := appendCall(bytes.Clone(prefix), r)
		if !ok {
			if !bytes.Equal(got, prefix) {
				t.Fatalf("%+v: left to json.Marshal, but %q written", r, got)
			}
			return
		}
		if werr != nil || !bytes.Equal(got, append(prefix, want...)) {
			t.Fatalf("%+v: written as %q, json.Marshal writes %q (%v)", r, got, want, werr)
		}
	})
}

// The face's call is written by hand: the fast path is taken, not only equal.
func TestCallsAreWrittenByHand(t *testing.T) {
	r := Request{Op: OpCall, Name: "echo", Arguments: json.RawMessage(`{"message":"found"}`), Listing: "h", TimeoutMS: 60000}
	if _, ok := appendCall(nil, r); !ok {
		t.Fatalf("%+v: left to json.Marshal", r)
	}
	r.Provider = "p"
	if _, ok := appendCall(nil, r); ok {
		t.Fatal("a request with more than a call's fields written as a call")
	}
}
