package capability

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"slices"
	"strings"

	"github.com/spear-shell/spear-shell/audit"
	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/capability/schema"
	"github.com/spear-shell/spear-shell/capability/search"
)

// searchFact holds the family's search index in the turn's state, built by the turn's first
// search: later processes rank a query without listing a provider (SPEC 13's targets). It
// holds ids and descriptions' first lines, nothing that decides: the offer, the classes and
// the providers left out are recomputed by every process, as for any answer.
const searchFact = "search-index"

// familyIndex is the family's index with, per document, its id and its description's first
// line (what a page shows) and its provider, kept as the bytes the state holds: a process reads
// the ids and lines of the hits it shows, nothing else.
type familyIndex struct {
	ix    *search.Index
	salt  string   // the family's fingerprint: cursors of one family only
	provs []string // the providers, by their number
	count []int    // documents per provider
	prov  []byte   // per document, its provider's number (uint16, little endian)
	offs  []byte   // per document, where its id starts in text (uint32, little endian); one more at the end
	text  []byte   // per document, its id, a NUL, its line
	n     int
}

func (fi *familyIndex) provider(doc int) int { return int(binary.LittleEndian.Uint16(fi.prov[2*doc:])) }

// idLine returns document doc's id and description line.
func (fi *familyIndex) idLine(doc int) (id, line string) {
	from, to := binary.LittleEndian.Uint32(fi.offs[4*doc:]), binary.LittleEndian.Uint32(fi.offs[4*doc+4:])
	id, line, _ = strings.Cut(string(fi.text[from:to]), "\x00")
	return id, line
}

const familyIndexMagic = "spear-family-index 3\n"

func (fi *familyIndex) encode() []byte {
	var b []byte
	b = append(b, familyIndexMagic...)
	b = appendString(b, fi.salt)
	b = binary.AppendUvarint(b, uint64(len(fi.provs)))
	for i, p := range fi.provs {
		b = appendString(b, p)
		b = binary.AppendUvarint(b, uint64(fi.count[i]))
	}
	b = binary.AppendUvarint(b, uint64(fi.n))
	b = append(b, fi.prov...)
	b = append(b, fi.offs...)
	b = binary.AppendUvarint(b, uint64(len(fi.text)))
	b = append(b, fi.text...)
	return append(b, fi.ix.Encode()...)
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

var errIndexCorrupt = errors.New("the turn's search index is damaged")

// decodeFamilyIndex reads what encode wrote, checking every bound; the ids and lines stay bytes.
func decodeFamilyIndex(b []byte) (*familyIndex, error) {
	if !strings.HasPrefix(string(b[:min(len(b), len(familyIndexMagic))]), familyIndexMagic) {
		return nil, errIndexCorrupt
	}
	r := search.NewReader(b[len(familyIndexMagic):])
	fi := &familyIndex{}
	fi.salt = string(r.Bytes(r.Uvarint()))
	np := r.Uvarint()
	if r.Err() != nil || np > 1<<16 {
		return nil, errIndexCorrupt
	}
	counts := make([]uint64, 0, np) // as written; held to the documents' providers below
	for range np {
		fi.provs = append(fi.provs, string(r.Bytes(r.Uvarint())))
		counts = append(counts, r.Uvarint())
	}
	n := r.Uvarint()
	if r.Err() != nil || n > uint64(len(r.Rest()))/6 {
		return nil, errIndexCorrupt
	}
	fi.n = int(n)
	fi.prov = r.Bytes(2 * n)
	fi.offs = r.Bytes(4 * (n + 1))
	fi.text = r.Bytes(r.Uvarint())
	if r.Err() != nil {
		return nil, errIndexCorrupt
	}
	last := uint32(0)
	fi.count = make([]int, len(fi.provs))
	for doc := 0; doc <= fi.n; doc++ {
		o := binary.LittleEndian.Uint32(fi.offs[4*doc:])
		if o < last || int(o) > len(fi.text) || doc < fi.n && fi.provider(doc) >= len(fi.provs) {
			return nil, errIndexCorrupt
		}
		if doc < fi.n {
			fi.count[fi.provider(doc)]++
		}
		last = o
	}
	for k, c := range fi.count {
		if uint64(c) != counts[k] {
			return nil, errIndexCorrupt // a provider's count that is not its documents' (admitted would be wrong)
		}
	}
	ix, err := search.Decode(r.Rest())
	if err != nil || ix.Len() != fi.n {
		return nil, errIndexCorrupt
	}
	fi.ix = ix
	return fi, nil
}

// buildFamilyIndex indexes the family as this process listed it (visible, sorted by id).
func (e *turnEnv) buildFamilyIndex() *familyIndex { return familyIndexOf(e.visible()) }

// familyIndexOf indexes tools, sorted by id.
func familyIndexOf(tools []*tool) *familyIndex {
	docs := make([]search.Doc, len(tools))
	fi := &familyIndex{n: len(tools)}
	number := map[string]int{}
	h := sha256.New()
	for i, tl := range tools {
		docs[i] = search.Doc{ID: tl.id, Name: tl.name, Description: tl.desc, Args: tl.argNames()}
		p := tl.prov.cfg.ID
		k, ok := number[p]
		if !ok {
			k = len(fi.provs)
			number[p] = k
			fi.provs = append(fi.provs, p)
			fi.count = append(fi.count, 0)
		}
		fi.count[k]++
		fi.prov = binary.LittleEndian.AppendUint16(fi.prov, uint16(k))
		fi.offs = binary.LittleEndian.AppendUint32(fi.offs, uint32(len(fi.text)))
		line, _ := firstLineCut(tl.desc, indexLineMax)
		fi.text = append(append(append(fi.text, tl.id...), 0), line...)
		h.Write([]byte(tl.id + " " + tl.hash + "\n"))
	}
	fi.offs = binary.LittleEndian.AppendUint32(fi.offs, uint32(len(fi.text)))
	fi.ix = search.Build(docs)
	fi.salt = hex.EncodeToString(h.Sum(nil)[:8])
	return fi
}

// familyIndex returns the turn's search index: from the state when the family was selected
// and indexed before, else built (selecting the family first, as a listing does) and kept.
func (t *Turn) familyIndex(ctx context.Context, a *answer) (*familyIndex, string) {
	e := t.env
	if e.index != nil {
		return e.index, ""
	}
	if mode, ok, err := e.State.Read(providers.FamilyFact); err == nil && ok {
		if b, ok, err := e.State.Map(searchFact); err == nil && ok { // a query reads little of it
			if fi, err := decodeFamilyIndex(b); err == nil {
				e.mode, e.familyKnown = modeOf(mode), true
				e.index = fi
				return fi, ""
			}
		}
	}
	if !t.family(ctx, a, e.order, nil) {
		return nil, t.interrupted(a, "", "")
	}
	fi := e.buildFamilyIndex()
	_, _ = e.State.Create(searchFact, fi.encode()) // another process may have kept the same first
	e.index = fi
	return fi, ""
}

// search answers `search` (SPEC 2.6): one ranked page of the family, decided into a.page.
func (t *Turn) search(ctx context.Context, a *answer, words []string, limit int, cursor string) string {
	if code := t.prelude(a); code != "" {
		return code
	}
	e := t.env
	fi, code := t.familyIndex(ctx, a)
	if fi == nil {
		return code
	}
	// What list would show now: an offered provider not left out; the class from the
	// configuration; a read-only offer's WRITE tools hidden (the index was built from what this
	// offer shows, so that check is for the hits alone).
	showing := make([]*prov, len(fi.provs))
	for k, id := range fi.provs {
		p := e.provs[id]
		if p == nil {
			continue
		}
		if !e.leftTheTurn(p) {
			showing[k] = p
		}
	}
	entry := func(doc int) (Entry, bool) {
		p := showing[fi.provider(doc)]
		if p == nil {
			return Entry{}, false
		}
		id, line := fi.idLine(doc)
		_, name, _ := strings.Cut(id, "/")
		class := p.cfg.Class(name)
		if p.readOnly && class != "READ" {
			return Entry{}, false
		}
		return Entry{ID: id, Provider: p.cfg.ID, Tool: name, Class: class, Description: line,
			PermissionMode: e.Manifest.PermissionMode}, true
	}
	admitted := 0
	readOnly := false
	for k, p := range showing {
		if p != nil {
			admitted += fi.count[k]
			readOnly = readOnly || p.readOnly
		}
	}
	if readOnly { // a WRITE tool may have to be hidden: count one by one
		admitted = 0
		for doc := range fi.n {
			if _, ok := entry(doc); ok {
				admitted++
			}
		}
	}
	var keep func(doc int) bool // nil: every document is shown
	switch {
	case readOnly:
		keep = func(doc int) bool { _, ok := entry(doc); return ok }
	case slices.Contains(showing, nil):
		keep = func(doc int) bool { return showing[fi.provider(doc)] != nil }
	}
	query := strings.Join(words, " ")
	pg, err := fi.ix.Page(query, limit, cursor, fi.salt, keep)
	if err != nil {
		reason := "search: " + err.Error()
		if errors.Is(err, search.ErrCursor) {
			reason = "search: the cursor is not one a page of this search printed in this turn; pass --cursor exactly as the previous page printed it, with the same words"
		}
		return a.refuse(CodeMalformed, reason)
	}
	page := &SearchPage{Words: words, Limit: limit, First: pg.First, Admitted: admitted, Matched: pg.Matched,
		Next: pg.Next, Down: e.downList()}
	for _, h := range pg.Hits {
		en, _ := entry(h.Doc)
		page.Entries = append(page.Entries, en)
	}
	if err := e.Log(audit.Event{Name: audit.EventSearched, Mode: e.mode, Fields: map[string]any{
		"words": query, "admitted": admitted, "matched": pg.Matched, "shown": len(page.Entries), "first": pg.First,
	}}); err != nil {
		return a.auditUnavailable(err)
	}
	a.page = page
	return ""
}

// argNames are the input schema's top-level property names.
func (tl *tool) argNames() []string {
	return schema.PropertyNames(tl.input)
}
