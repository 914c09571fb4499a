package mcpstdio

import (
	"os"
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
	rest := strings.Repeat(" 0", 15) + " 4242 0 0" // fields 7 to 21, then the start time (22) and two more
	tests := []struct {
		in   string
		want ProcStat
		ok   bool
	}{
		{"123 (bash) S 1 123 120" + rest, ProcStat{'S', 123, 120, 4242}, true},
		{"9 (a) b (c) Z 1 77 77" + rest, ProcStat{'Z', 77, 77, 4242}, true},
		{"garbage", ProcStat{}, false},
		{"1 (x) R", ProcStat{}, false},
		{"123 (bash) S 1 123 123 0", ProcStat{}, false},
		{"123 (bash) S 1 x 123" + rest, ProcStat{}, false},
	}
	for _, tt := range tests {
		got, err := parseStat([]byte(tt.in))
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("parseStat(%q) = %+v, %v", tt.in, got, err)
		}
	}
	st, err := ReadProcStat(os.Getpid())
	if err != nil || st.State == 'Z' || st.Pgrp <= 0 || st.Start == 0 {
		t.Errorf("ReadProcStat(self) = %+v, %v", st, err)
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
