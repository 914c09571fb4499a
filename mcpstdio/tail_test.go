package mcpstdio

import (
	"strings"
	"testing"
)

func TestTailBuffer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		max    int
		writes []string
		want   string
	}{
		{"empty", 8, nil, ""},
		{"fits", 8, []string{"ab", "cd"}, "abcd"},
		{"exactly full", 4, []string{"ab", "cd"}, "abcd"},
		{"drops the front", 4, []string{"abc", "def"}, "cdef"},
		{"one huge write", 4, []string{"0123456789"}, "6789"},
		{"starts at a line", 8, []string{"aaaa\nbb", "b\ncc"}, "bbb\ncc"},
		{"a single long line is kept", 4, []string{"abcdefgh"}, "efgh"},
		{"many small writes", 5, strings.Split("abcdefghijklmnopqrstuvwxyz", ""), "vwxyz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := newTailBuffer(tt.max)
			for _, w := range tt.writes {
				if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if got := b.String(); got != tt.want {
				t.Errorf("String = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseStat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in    string
		state byte
		pgrp  int
		ok    bool
	}{
		{"123 (bash) S 1 123 123 0", 'S', 123, true},
		{"9 (a) b (c) Z 1 77 77", 'Z', 77, true},
		{"garbage", 0, 0, false},
		{"1 (x) R", 0, 0, false},
	}
	for _, tt := range tests {
		state, pgrp, ok := parseStat([]byte(tt.in))
		if state != tt.state || pgrp != tt.pgrp || ok != tt.ok {
			t.Errorf("parseStat(%q) = %c, %d, %v", tt.in, state, pgrp, ok)
		}
	}
}

// A quiet server's tail holds no memory, and a chatty one's stays within twice max: a turn
// starts many servers, and reserving the whole tail for each once cost a garbage collection.
func TestTailBufferGrowsAsWritten(t *testing.T) {
	t.Parallel()
	const limit = 1 << 10
	b := newTailBuffer(limit)
	if c := cap(b.buf); c != 0 {
		t.Fatalf("a new tail holds %d bytes", c)
	}
	b.Write([]byte("one line\n"))
	if c := cap(b.buf); c > limit {
		t.Errorf("after one line the tail holds %d bytes", c)
	}
	line := []byte(strings.Repeat("x", 99) + "\n")
	for range 1000 {
		b.Write(line)
		if len(b.buf) > 2*limit {
			t.Fatalf("the tail keeps %d bytes, over twice the limit", len(b.buf))
		}
	}
	if got := b.String(); len(got) > limit || !strings.HasSuffix(got, string(line)) {
		t.Errorf("String is %d bytes ending %q", len(got), got[max(0, len(got)-10):])
	}
}
