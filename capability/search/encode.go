package search

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
)

// The index is built once per turn state and kept in the turn's state directory, so that a
// later -c process ranks a query without reading the family's definitions: Encode writes it,
// Decode reads the terms table and leaves the postings as bytes, decoded only for the terms a
// query holds.

const magic = "spear-search 2\n"

// Encode returns the index as bytes for Decode.
func (ix *Index) Encode() []byte {
	n := len(magic) + 16 + 4*len(ix.lens) + len(ix.posts) + 12*len(ix.terms)
	for _, t := range ix.terms {
		n += len(t)
	}
	b := make([]byte, 0, n)
	b = append(b, magic...)
	b = binary.AppendUvarint(b, uint64(ix.n))
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(ix.avgLen))
	for _, l := range ix.lens {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(l))
	}
	b = binary.AppendUvarint(b, uint64(len(ix.terms)))
	for i, t := range ix.terms {
		b = binary.AppendUvarint(b, uint64(len(t)))
		b = append(b, t...)
		b = binary.AppendUvarint(b, uint64(ix.mids[i]-ix.offs[i]))
		b = binary.AppendUvarint(b, uint64(ix.offs[i+1]-ix.mids[i]))
	}
	return append(b, ix.posts...)
}

// ErrCorrupt says the bytes are not an index Encode wrote (a truncated or foreign file).
var ErrCorrupt = errors.New("search: not a search index")

// Decode reads what Encode wrote. It checks every bound, so that a damaged file is an
// error, never a panic or a wrong page.
func Decode(b []byte) (*Index, error) {
	if len(b) < len(magic) || string(b[:len(magic)]) != magic {
		return nil, ErrCorrupt
	}
	r := Reader{b: b[len(magic):]}
	ix := &Index{}
	n := r.Uvarint()
	if r.err != nil || n > uint64(len(r.b)/4) {
		return nil, ErrCorrupt
	}
	ix.n = int(n)
	ix.avgLen = math.Float32frombits(r.Uint32())
	ix.lens = make([]float32, ix.n)
	for i := range ix.lens {
		ix.lens[i] = math.Float32frombits(r.Uint32())
	}
	nt := r.Uvarint()
	if r.err != nil || nt > uint64(len(r.b)) {
		return nil, ErrCorrupt
	}
	ix.terms = make([]string, nt)
	ix.offs = make([]uint32, 0, nt+1)
	ix.mids = make([]uint32, 0, nt)
	total := uint64(0)
	for i := range ix.terms {
		l := r.Uvarint()
		ix.terms[i] = string(r.Bytes(l))
		ix.offs = append(ix.offs, uint32(total))
		strong := r.Uvarint()
		ix.mids = append(ix.mids, uint32(min(total+strong, math.MaxUint32)))
		total += strong + r.Uvarint()
		if r.err != nil || strong > math.MaxUint32 || total > math.MaxUint32 || (i > 0 && ix.terms[i] <= ix.terms[i-1]) {
			return nil, ErrCorrupt
		}
	}
	ix.offs = append(ix.offs, uint32(total))
	if r.err != nil || uint64(len(r.b)) != total {
		return nil, ErrCorrupt
	}
	ix.posts = r.b
	if ix.n > 0 && !(ix.avgLen > 0) || slices.ContainsFunc(ix.lens, func(l float32) bool { return !(l >= 0) || math.IsInf(float64(l), 0) }) {
		return nil, ErrCorrupt
	}
	return ix, nil
}

// Reader reads an encoding field by field, each read checked against what is left; after the
// first that fails, every read gives zero and Err says so. The family's index around this one
// (capability) is read with it too.
type Reader struct {
	b   []byte
	err error
}

// NewReader reads b.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// Err is ErrCorrupt once a read failed.
func (r *Reader) Err() error { return r.err }

// Rest is what is left to read.
func (r *Reader) Rest() []byte { return r.b }

// Uvarint reads a uvarint.
func (r *Reader) Uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = ErrCorrupt
		return 0
	}
	r.b = r.b[n:]
	return v
}

// Uint32 reads four bytes, little-endian.
func (r *Reader) Uint32() uint32 {
	if r.err != nil || len(r.b) < 4 {
		r.err = ErrCorrupt
		return 0
	}
	v := binary.LittleEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

// Bytes reads n bytes (not copied).
func (r *Reader) Bytes(n uint64) []byte {
	if r.err != nil || n > uint64(len(r.b)) {
		r.err = ErrCorrupt
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}
