package mcpstdio

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Quiet must read and write exactly as the descriptor's own Read and Write would: every byte in
// order across a pipe's buffer (a write that fills it waits in the poller), EOF at the writer's
// close, deadlines, and a Close that ends a wait.
func TestQuietPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	qr, qw := Quiet(r), Quiet(w)
	if _, ok := qr.(quiet); !ok {
		t.Fatalf("Quiet(pipe) = %T, want the quiet reader", qr)
	}
	// Four times a pipe's default buffer: the writer must wait for the reader, more than once.
	want := bytes.Repeat([]byte("0123456789abcdef"), 4*65536/16+3)
	done := make(chan error, 1)
	go func() {
		n, err := qw.Write(want)
		if err == nil && n != len(want) {
			err = io.ErrShortWrite
		}
		w.Close()
		done <- err
	}()
	got, err := io.ReadAll(qr)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("write: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, not the %d written in order", len(got), len(want))
	}
}

func TestQuietDeadlineAndClose(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	qr := Quiet(r)
	r.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if _, err := qr.Read(make([]byte, 8)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v, want os.ErrDeadlineExceeded", err)
	}
	r.SetReadDeadline(time.Time{})
	ended := make(chan error, 1)
	go func() {
		_, err := qr.Read(make([]byte, 8))
		ended <- err
	}()
	time.Sleep(20 * time.Millisecond)
	r.Close()
	select {
	case err := <-ended:
		if err == nil {
			t.Fatal("a read ended by Close returned no error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end a waiting read")
	}

	// A full pipe whose write deadline passes: the write returns what it wrote and the error.
	r2, w2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	defer w2.Close()
	w2.SetWriteDeadline(time.Now().Add(20 * time.Millisecond))
	n, err := Quiet(w2).Write(make([]byte, 1<<20))
	if !errors.Is(err, os.ErrDeadlineExceeded) || n <= 0 || n >= 1<<20 {
		t.Fatalf("write into a full pipe past its deadline: %d, %v", n, err)
	}
}

func TestQuietUnixSocketAndBrokenPipe(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.AcceptUnix()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Quiet(c).Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	n, err := Quiet(s).Read(buf)
	if err != nil || string(buf[:n]) != "hello\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	s.Close()
	if _, err := Quiet(c).Read(buf); err != io.EOF {
		t.Fatalf("read after the peer closed: %v, want io.EOF", err)
	}
	// Writing to a peer that is gone is an error (EPIPE), not a signal that ends the process.
	var werr error
	for range 100 {
		if _, werr = Quiet(c).Write([]byte("x")); werr != nil {
			break
		}
	}
	if !errors.Is(werr, syscall.EPIPE) && !errors.Is(werr, syscall.ECONNRESET) {
		t.Fatalf("write to a closed peer: %v, want EPIPE", werr)
	}
	c.Close()
}

// A descriptor in blocking mode is not the poller's: Quiet leaves it as it is.
func TestQuietLeavesBlockingDescriptors(t *testing.T) {
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fds[0]), "blocking")
	defer f.Close()
	syscall.Close(fds[1])
	if q := Quiet(f); q != io.ReadWriter(f) {
		t.Fatalf("Quiet(blocking pipe) = %T, want the file itself", q)
	}
}
