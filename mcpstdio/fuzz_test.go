package mcpstdio

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"testing"
	"testing/iotest"
)

// dispatchSeeds are lines a server may send; the fuzzer mutates them.
var dispatchSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad","data":[1]}}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":"1","method":"roots/list","params":{}}`,
	`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}`,
	`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
	`{"jsonrpc":"2.0","id":"1","result":{}}`,
	`{"jsonrpc":"1.0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`,
	`[{"jsonrpc":"2.0","id":1,"result":{}}]`,
	`null`, ``, `   `, `not json`,
}

// FuzzDispatch checks that no line makes the reader panic, and that a line it accepts
// as the answer to our pending request 1 is delivered exactly once.
func FuzzDispatch(f *testing.F) {
	for _, s := range dispatchSeeds {
		f.Add([]byte(s))
	}
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		f.Fatal(err)
	}
	defer devNull.Close()
	f.Fuzz(func(t *testing.T, line []byte) {
		ch := make(chan response, 1)
		c := &Client{
			stdin:   devNull, // answers to server requests go nowhere
			in:      devNull,
			wsem:    make(chan struct{}, 1),
			closing: make(chan struct{}),
			pending: map[int64]waiter{1: {ch: ch, method: "tools/call"}},
		}
		owned := len(line)%2 == 0 // either way, what is delivered must not change
		err := c.dispatch(line, owned)
		_, stillPending := c.pending[1]
		select {
		case r := <-ch:
			if err != nil || stillPending || (r.err == nil) == (r.result == nil) {
				t.Errorf("delivered %+v with err %v, pending %v", r, err, stillPending)
			}
			if r.result != nil && !json.Valid(r.result) {
				t.Errorf("result %q is not JSON", r.result)
			}
		default:
			if !stillPending {
				t.Errorf("request 1 taken but nothing delivered (err %v)", err)
			}
		}
	})
}

// FuzzReadLine checks the line reader against splitting the input at line breaks: the same
// lines, each without its break and one '\r' before it; a line over the limit is read through
// and reported as oversized with its size, and reading goes on after it; at the end of the
// input, errEOF (an unfinished line dropped, whatever its size).
func FuzzReadLine(f *testing.F) {
	f.Add([]byte("a\nbb\r\nccc\n"), 2, 4)
	f.Add([]byte("no newline"), 100, 16)
	f.Add([]byte("\n\n\r\n\r\r\nx"), 1, 1)
	f.Add(append(bytes.Repeat([]byte("x"), 70000), '\n'), 65536, 16)
	f.Add(append(bytes.Repeat([]byte("y"), 70000), "\nz\n"...), 70000, 4096)
	f.Add(append(bytes.Repeat([]byte("y"), 70000), "\nz\n"...), 1000, 4096)
	f.Fuzz(func(t *testing.T, in []byte, max, size int) {
		if max <= 0 || max > 1<<20 || size <= 0 || size > 1<<16 {
			return
		}
		lr := newLineReader(iotest.OneByteReader(bytes.NewReader(in)), max, size)
		if size%2 == 0 {
			lr = newLineReader(bytes.NewReader(in), max, size)
		}
		rest := in
		for {
			line, owned, err := lr.next()
			i := bytes.IndexByte(rest, '\n')
			var over *oversized
			switch {
			case i < 0:
				if err != errEOF {
					t.Fatalf("at the end: %q, %v; want errEOF", line, err)
				}
				return
			case i > max:
				if !errors.As(err, &over) || over.Size != int64(i) || over.Limit != max || line != nil {
					t.Fatalf("line of %d bytes over %d: %q, %v", i, max, line, err)
				}
				rest = rest[i+1:]
				continue
			case err != nil:
				t.Fatalf("line %q: %v", rest[:i], err)
			}
			want := bytes.TrimSuffix(rest[:i], []byte("\r"))
			if !bytes.Equal(line, want) {
				t.Fatalf("line %q, want %q", line, want)
			}
			if owned && cap(line) > i {
				t.Fatalf("an owned line of %d bytes has room for %d", len(line), cap(line))
			}
			rest = rest[i+1:]
		}
	})
}

// FuzzSplitMessage holds splitMessage to what decoding the line into a map gives: the same
// verdict on any input, and for each member the client reads, the same presence and bytes.
func FuzzSplitMessage(f *testing.F) {
	for _, s := range dispatchSeeds {
		f.Add([]byte(s))
	}
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"id":2,"result":{"a":[1,2]},"result":null}`,
		`{"json\u0072pc":"2.0","\u0069d":1,"Result":{},"result":{}}`,
		` { "jsonrpc" : "2.0" , "id" : 1 , "error" : { "code" : 1 , "message" : "m" } } `,
		`{"jsonrpc":"2.0","id":1,"result":{"x":"\u00"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"x":[1,2}}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}x`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"\x01\"}",
		"{\"\xff\":1,\"method\":\"\xfe\"}",
		`{}`, `{} `, `{,}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		got, ok := splitMessage(line)
		var want map[string]json.RawMessage
		wantOK := json.Unmarshal(line, &want) == nil && want != nil
		if ok != wantOK {
			t.Fatalf("%q: splitMessage ok %v, decoding into a map ok %v", line, ok, wantOK)
		}
		if !ok {
			return
		}
		for _, m := range []struct {
			key string
			val []byte
			has bool
		}{
			{"jsonrpc", got.jsonrpc, got.jsonrpc != nil},
			{"id", got.id, got.hasID},
			{"method", got.method, got.hasMethod},
			{"result", got.result, got.hasResult},
			{"error", got.err, got.hasErr},
		} {
			w, has := want[m.key]
			if has != m.has || !bytes.Equal(w, m.val) {
				t.Fatalf("%q: member %q is %q (present %v), want %q (present %v)", line, m.key, m.val, m.has, w, has)
			}
		}
	})
}
