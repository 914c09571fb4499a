package mcpstdio

import (
	"bytes"
	"sync"
)

// tailBuffer keeps the last max bytes written to it. Its buffer grows as bytes arrive, so a
// quiet server costs nothing (a turn starts many), up to twice max, so that dropping old bytes
// costs one copy per max bytes written.
type tailBuffer struct {
	mu      sync.Mutex
	max     int
	buf     []byte
	dropped bool // bytes were discarded at the front
}

func newTailBuffer(max int) *tailBuffer {
	return &tailBuffer{max: max}
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		t.dropped = true
		return n, nil
	}
	if len(t.buf)+len(p) > 2*t.max {
		keep := t.max - len(p)
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-keep:]...)
		t.dropped = true
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// String returns at most the last max bytes, starting after a line break when older
// bytes were dropped and the tail holds more than one line.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b, dropped := t.buf, t.dropped
	if len(b) > t.max {
		b, dropped = b[len(b)-t.max:], true
	}
	if dropped {
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
	}
	return string(b)
}
