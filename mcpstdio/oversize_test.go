package mcpstdio

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A tools/call result over the limit is read through and discarded: that call fails with a
// TooLargeError and the session goes on, whether the server writes "id" before or after the
// result, and however the result nests braces inside strings. Any other message over the limit
// is a protocol fault that says so.
func TestOversize(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20
	c := startFake(t, "ok", Options{MaxMessage: limit})
	ctx := callCtx(t, 20*time.Second)
	for _, name := range []string{"big", "big-id-first", "big-error"} {
		res, err := c.CallTool(ctx, name, nil)
		var tl *TooLargeError
		if res != nil || !errors.As(err, &tl) || tl.Limit != limit || tl.Size <= 2<<20 || tl.Size > 3<<20 {
			t.Fatalf("%s: %+v, %v; want a TooLargeError over %d bytes", name, res, err, limit)
		}
		if errors.Is(err, ErrProtocol) || errors.Is(err, ErrClosed) || StageOf(err) != "" {
			t.Errorf("%s: %v is a fault", name, err)
		}
		if !strings.Contains(err.Error(), "tools/call: message of") || !strings.Contains(err.Error(), "exceeds the limit of 1048576 bytes") {
			t.Errorf("%s: %v", name, err)
		}
		res, err = c.CallTool(ctx, "echo", json.RawMessage(`{"message":"after `+name+`"}`))
		if err != nil || res.Content[0].Text != "after "+name {
			t.Fatalf("after %s: %+v, %v", name, res, err)
		}
	}
}

func TestOversizeFaults(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"big-notify", "big-unknown", "big-request", "big-unended"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := startFake(t, "ok", Options{MaxMessage: 1 << 20})
			timeout := 20 * time.Second
			if name == "big-unended" {
				timeout = 500 * time.Millisecond // nothing ends it but the deadline
			}
			_, err := c.CallTool(callCtx(t, timeout), name, nil)
			if name == "big-unended" {
				isTimeout(StageCall)(t, err)
			} else {
				isProtocol(StageCall, "exceeds the limit of 1048576 bytes")(t, err)
				if tl := (*TooLargeError)(nil); !errors.As(err, &tl) || tl.Size <= 2<<20 {
					t.Errorf("err = %v, want a TooLargeError inside", err)
				}
			}
			if _, err := c.CallTool(callCtx(t, 5*time.Second), "echo", nil); !errors.Is(err, ErrClosed) {
				t.Errorf("next call: %v, want ErrClosed", err)
			}
		})
	}
	t.Run("tools/list", func(t *testing.T) {
		t.Parallel()
		c := startFake(t, "big-list", Options{MaxMessage: 1 << 20})
		_, err := c.ListTools(callCtx(t, 20*time.Second))
		isProtocol(StageList, "exceeds the limit")(t, err)
	})
}

// topMembers finds the same response id as splitMessage, fed in any pieces; in valid JSON it
// never finds one that splitMessage does not.
func FuzzTopMembers(f *testing.F) {
	for _, s := range dispatchSeeds {
		f.Add([]byte(s), 3)
	}
	f.Add([]byte(`{"result":{"id":7,"s":"}\"{"},"jsonrpc":"2.0","id":12}`), 5)
	f.Add([]byte(`{"id" : 3 , "error":{"code":1,"message":"x"},"jsonrpc":"2.0"}`), 1)
	f.Add([]byte(`{"id":[1],"result":{}}`), 2)
	f.Add([]byte(`{"id":"1","result":{}}`), 2)
	f.Add([]byte(`{"method":"x","id":1,"result":{}}`), 4)
	f.Fuzz(func(t *testing.T, line []byte, piece int) {
		if piece <= 0 {
			piece = 1
		}
		var m topMembers
		for rest := line; len(rest) > 0; {
			n := min(piece, len(rest))
			m.feed(rest[:n])
			rest = rest[n:]
		}
		got, gotOK := m.responseID()
		msg, valid := splitMessage(line)
		var want int64
		wantOK := false
		if valid && msg.hasID && !msg.hasMethod && msg.hasResult != msg.hasErr {
			var err error
			want, err = strconv.ParseInt(string(msg.id), 10, 64)
			wantOK = err == nil
		}
		switch {
		case gotOK && valid && (!wantOK || got != want): // it need not judge what is not JSON
			t.Fatalf("found id %d in %q; splitMessage: valid %v, id %d (%v)", got, line, valid, want, wantOK)
		case wantOK && !gotOK && !bytes.Contains(line, []byte(`\`)):
			t.Fatalf("missed id %d in %q", want, line)
		}
	})
}
