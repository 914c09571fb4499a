package report

import (
	"bytes"
	"io"
	"os"
	"strings"

	"github.com/spear-shell/spear-shell/textclean"
)

// spool keeps each turn's rows in the order they were written, in memory up to a budget and
// then in one unlinked temporary file: a trail of any size, its turns interleaved or not, is
// reported in bounded memory, and the rows are read back (twice for a page: timeline and table)
// from there.
type spool struct {
	budget, held int
	streams      []*stream
	f            *os.File
	size         int64
	err          error
}

type stream struct {
	sp     *spool
	chunks []chunk // in the file, in order
	buf    []byte  // after the chunks
}

type chunk struct{ off, n int64 }

// spoolBudget is the rows a report holds in memory before it spills them (a variable for tests).
var spoolBudget = 4 << 20

func newSpool(budget int) *spool { return &spool{budget: budget} }

func (sp *spool) stream() *stream {
	st := &stream{sp: sp}
	sp.streams = append(sp.streams, st)
	return st
}

func (st *stream) write(b []byte) {
	sp := st.sp
	st.buf = append(st.buf, b...)
	sp.held += len(b)
	if sp.held > sp.budget {
		sp.spill()
	}
}

// file makes the spool's file on first use; false when there is none (the report then keeps
// everything in memory: still right, only larger).
func (sp *spool) file() bool {
	if sp.err != nil {
		return false
	}
	if sp.f == nil {
		f, err := os.CreateTemp("", "spear-report-*")
		if err != nil {
			sp.err = err
			return false
		}
		os.Remove(f.Name()) // nothing to clean up however the report ends
		sp.f = f
	}
	return true
}

// put appends b to the file as a chunk of its own.
func (sp *spool) put(b []byte) (chunk, bool) {
	if !sp.file() {
		return chunk{}, false
	}
	if _, err := sp.f.WriteAt(b, sp.size); err != nil {
		sp.err = err
		return chunk{}, false
	}
	c := chunk{sp.size, int64(len(b))}
	sp.size += c.n
	return c, true
}

func (sp *spool) get(c chunk) ([]byte, error) {
	b := make([]byte, c.n)
	_, err := sp.f.ReadAt(b, c.off)
	return b, err
}

// spill writes every stream's buffer to the file, one chunk each.
func (sp *spool) spill() {
	if !sp.file() {
		return
	}
	for _, st := range sp.streams {
		if len(st.buf) == 0 {
			continue
		}
		if _, err := sp.f.WriteAt(st.buf, sp.size); err != nil {
			sp.err = err
			return
		}
		st.chunks = append(st.chunks, chunk{sp.size, int64(len(st.buf))})
		sp.size += int64(len(st.buf))
		sp.held -= len(st.buf)
		st.buf = nil // not buf[:0:0], which would keep the array alive
	}
}

func (st *stream) reader() io.Reader {
	rs := make([]io.Reader, 0, len(st.chunks)+1)
	for _, c := range st.chunks {
		rs = append(rs, io.NewSectionReader(st.sp.f, c.off, c.n))
	}
	return io.MultiReader(append(rs, bytes.NewReader(st.buf))...)
}

func (sp *spool) close() {
	if sp != nil && sp.f != nil {
		sp.f.Close()
		sp.f = nil
	}
}

// excerpt is s as the report shows it: cleaned as SPEC 5 cleans a description (escape
// sequences, controls and bidi controls removed, invalid UTF-8 replaced), bounded to about n
// bytes with "…" marking a cut, and on one line.
func excerpt(s string, n int) string {
	s = textclean.Shown(s, n)
	if strings.ContainsAny(s, "\n\t") {
		s = strings.NewReplacer("\n", " ", "\t", " ").Replace(s)
	}
	return s
}
