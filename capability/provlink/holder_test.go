package provlink

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spear-shell/spear-shell/mcpstdio"
)

// pair is a connected pair of unix sockets: the holder's end and the caller's.
func pair(t *testing.T) (holder, caller *net.UnixConn) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	conns := make([]*net.UnixConn, 2)
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "pair")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c.(*net.UnixConn)
	}
	return conns[0], conns[1]
}

// A holder's connection opens only with hello: any other first request is refused "hello first"
// and the connection is not served; a caller that goes away first gets nothing; a hello is handed
// to the holder, which answers it and then reads the requests that follow.
func TestOpen(t *testing.T) {
	t.Run("not hello", func(t *testing.T) {
		h, c := pair(t)
		defer c.Close()
		c.Write([]byte(`{"op":"list"}` + "\n"))
		if s := Open(h); s != nil {
			s.Close()
			t.Fatal("a connection that began with list was served")
		}
		line, err := bufio.NewReader(c).ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		r, err := DecodeResponse(line)
		if err != nil || r.Err == nil || !strings.Contains(r.Err.Msg, "hello first") {
			t.Fatalf("answer %q (%v), want a refusal saying hello first", line, err)
		}
	})
	t.Run("gone", func(t *testing.T) {
		h, c := pair(t)
		c.Close()
		if s := Open(h); s != nil {
			s.Close()
			t.Fatal("a connection closed before its hello was served")
		}
	})
	t.Run("hello", func(t *testing.T) {
		h, c := pair(t)
		defer c.Close()
		c.Write([]byte(`{"op":"hello","protocol":7,"turn":"t1"}` + "\n" + `{"op":"list"}` + "\n"))
		s := Open(h)
		if s == nil {
			t.Fatal("a hello was not served")
		}
		defer s.Close()
		if s.Hello.Op != OpHello || s.Hello.Protocol != 7 || s.Hello.Turn != "t1" {
			t.Fatalf("hello %+v", s.Hello)
		}
		if req := <-s.Reqs; req.Op != OpList {
			t.Fatalf("next request %+v, want list", req)
		}
	})
}

// A listing answers each name as listed: how many tools carry it and the first of them (a name
// listed twice counts 2, an absent one 0); a tools request of no name or too many is refused;
// no listing guards no call and moves it with no definition.
func TestListing(t *testing.T) {
	tools := []mcpstdio.Tool{{Name: "a", Description: "first"}, {Name: "b"}, {Name: "a", Description: "second"}}
	l := NewListing(tools, ToWireTools(tools))
	r := l.Answer([]string{"a", "b", "c"})
	if r.Hash == "" || r.Hash != l.Hash || len(r.Defs) != 3 {
		t.Fatalf("answer %+v", r)
	}
	if d := r.Defs[0]; d.Count != 2 || d.Tool == nil || d.Tool.Description != "first" {
		t.Errorf("a: %+v, want the first of two", d)
	}
	if d := r.Defs[1]; d.Count != 1 || d.Tool == nil || d.Tool.Name != "b" {
		t.Errorf("b: %+v", d)
	}
	if d := r.Defs[2]; d.Count != 0 || d.Tool != nil {
		t.Errorf("c: %+v, want absent", d)
	}
	if !l.Guards(l.Hash) || l.Guards("other") {
		t.Error("a listing guards exactly its own hash")
	}
	if !l.Fresh(func() bool { return false }) || l.Fresh(func() bool { return true }) {
		t.Error("a new listing is fresh until a change is announced")
	}
	var none *Listing
	if none.Guards("") || none.Fresh(func() bool { return false }) {
		t.Error("no listing guards nothing and is never fresh")
	}
	if m := none.Moved("a"); !m.Moved || len(m.Defs) != 1 || m.Defs[0].Tool != nil {
		t.Errorf("moved without a listing: %+v", m)
	}
	if BadNames(nil) == nil || BadNames(make([]string, MaxNames+1)) == nil || BadNames([]string{"a"}) != nil {
		t.Error("a tools request asks 1 to MaxNames names")
	}
}

// A call whose deadline passes is still read while its holder answers within Grace (the holder
// says the provider's timeout itself), and the bound armed for it does not outlive it: the next
// call, answered later than that bound would allow, is read too. A cancel is sent on as cancel.
func TestConnWaitsGraceAfterTheDeadline(t *testing.T) {
	t.Parallel()
	holder, caller := pair(t)
	defer holder.Close()
	rw := mcpstdio.Quiet(caller)
	kp := &Conn{conn: caller, rw: rw, r: bufio.NewReader(rw), Lost: func(stage string, err error) error { return err }}
	defer kp.Close()
	served := make(chan []string, 1)
	go func() {
		var ops []string
		defer func() { served <- ops }()
		r, a := bufio.NewReader(holder), NewAnswerer(holder)
		for i := 0; ; i++ {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return
			}
			req, _ := DecodeRequest(line)
			ops = append(ops, req.Op)
			if req.Op == OpCancel {
				continue
			}
			time.Sleep([]time.Duration{150 * time.Millisecond, Grace, 300 * time.Millisecond}[min(i, 2)])
			a.Answer(Response{Result: json.RawMessage(`{"content":[]}`)})
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := kp.CallTool(ctx, "late", nil); err != nil {
		t.Fatalf("an answer within Grace of the deadline: %v", err)
	}
	if _, err := kp.CallTool(context.Background(), "later", nil); err != nil {
		t.Fatalf("the next call, with no deadline, past the first one's bound: %v", err)
	}
	cctx, ccancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, ccancel)
	_, err := kp.CallTool(cctx, "cancelled", nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled call: %v", err)
	}
	kp.Close()
	if ops := <-served; strings.Join(ops, " ") != "call call call cancel" {
		t.Fatalf("the holder read %v", ops)
	}
}
