package mcpstdio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
)

// lineReader reads a server's stdout a line at a time, straight into its own buffer: a line
// that fits is returned in place (valid until the next call), and a longer one (a tools/list
// page of thousands of tools) is gathered from full buffers set aside as they fill and copied
// once into a new slice of exactly its size, which the caller may keep. A long line thus costs
// one copy, not a copy out of a bufio.Reader plus the copies of a doubling slice plus a copy
// of the result. The buffers set aside go back to a pool shared by every server's reader: the
// servers of a turn answer their long tools/list one after another.
type lineReader struct {
	r     io.Reader
	max   int    // bytes of a line, line break excluded
	size  int    // bytes of each buffer
	buf   []byte // unread bytes are buf[start:end]
	start int
	end   int
	err   error // what the last read reported, once the bytes before it are used
}

func newLineReader(r io.Reader, max, size int) *lineReader {
	return &lineReader{r: r, max: max, size: size}
}

// spare holds buffers of spareSize bytes set aside by long lines, for the next long line.
var spare sync.Pool

const spareSize = 64 << 10

func (lr *lineReader) newBuffer() []byte {
	if lr.size == spareSize {
		if b, ok := spare.Get().(*[]byte); ok {
			return *b
		}
	}
	return make([]byte, lr.size)
}

func (lr *lineReader) release(parts [][]byte) {
	if lr.size != spareSize {
		return
	}
	for _, p := range parts {
		spare.Put(&p)
	}
}

// next returns the next line without its line break (and a '\r' before it), never holding
// more than max bytes of it plus one buffer. owned reports that the line is a slice of its
// own, which the caller may keep. A line over max is read through and discarded: the error is
// then an *oversized saying what it was (skipLong).
func (lr *lineReader) next() (line []byte, owned bool, err error) {
	var parts [][]byte // earlier pieces of this line, in order
	total := 0
	if lr.buf == nil {
		lr.buf = lr.newBuffer()
	}
	for {
		if i := bytes.IndexByte(lr.buf[lr.start:lr.end], '\n'); i >= 0 {
			if total+i > lr.max {
				return nil, false, lr.skipLong(parts)
			}
			piece := lr.buf[lr.start : lr.start+i]
			lr.start += i + 1
			if parts == nil {
				return trimCR(piece), false, nil
			}
			line = make([]byte, 0, total+len(piece))
			for _, p := range parts {
				line = append(line, p...)
			}
			line = append(line, piece...)
			lr.release(parts)
			return trimCR(line), true, nil
		}
		if total+lr.end-lr.start > lr.max {
			return nil, false, lr.skipLong(parts)
		}
		if lr.err != nil {
			return nil, false, lr.failure()
		}
		switch {
		case lr.start == lr.end:
			lr.start, lr.end = 0, 0
		case lr.end == len(lr.buf) && lr.start == 0:
			// The buffer holds nothing but this line: set it aside, read on into a new one.
			parts = append(parts, lr.buf)
			total += len(lr.buf)
			lr.buf = lr.newBuffer()
			lr.start, lr.end = 0, 0
		case lr.end == len(lr.buf):
			lr.end = copy(lr.buf, lr.buf[lr.start:lr.end])
			lr.start = 0
		}
		lr.fill()
	}
}

// fill reads once into the free end of the buffer.
func (lr *lineReader) fill() {
	n, err := lr.r.Read(lr.buf[lr.end:])
	lr.end += n
	if err != nil {
		lr.err = err
	} else if n == 0 {
		lr.err = io.ErrNoProgress
	}
}

// failure is what the last read reported, as next returns it.
func (lr *lineReader) failure() error {
	if errors.Is(lr.err, io.EOF) {
		return errEOF
	}
	return fmt.Errorf("read: %w", lr.err)
}

func trimCR(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == '\r' {
		return b[:len(b)-1]
	}
	return b
}
