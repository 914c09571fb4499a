package capability

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/spear-shell/spear-shell/audit"
	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/capability/search"
)

// searchFact holds the family's search index in the turn's state, built by the turn's first
// search: later processes rank a query without listing a provider (SPEC 13's targets). It
// holds ids and descriptions' first lines, nothing that decides: the offer, the classes and
// the providers left out are recomputed by every process, as for any answer.
const searchFact = "search-index"

// familyIndex is the family's index with, per document, its id and its description's first
// line (what a page shows).
type familyIndex struct {
	ix    *search.Index
	ids   []string
	lines []string
	salt  string // the family's fingerprint: cursors of one family only
}

const familyIndexMagic = "spear-family-index 1\n"

func (fi *familyIndex) encode() []byte {
	var b []byte
	b = append(b, familyIndexMagic...)
	b = appendString(b, fi.salt)
	b = binary.AppendUvarint(b, uint64(len(fi.ids)))
	for i := range fi.ids {
		b = appendString(b, fi.ids[i])
		b = appendString(b, fi.lines[i])
	}
	return append(b, fi.ix.Encode()...)
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

var errIndexCorrupt = errors.New("the turn's search index is damaged")

func decodeFamilyIndex(b []byte) (*familyIndex, error) {
	if !strings.HasPrefix(string(b[:min(len(b), len(familyIndexMagic))]), familyIndexMagic) {
		return nil, errIndexCorrupt
	}
	b = b[len(familyIndexMagic):]
	str := func() (string, bool) {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return "", false
		}
		s := string(b[k : k+int(n)])
		b = b[k+int(n):]
		return s, true
	}
	fi := &familyIndex{}
	var ok bool
	if fi.salt, ok = str(); !ok {
		return nil, errIndexCorrupt
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, errIndexCorrupt
	}
	b = b[k:]
	fi.ids, fi.lines = make([]string, n), make([]string, n)
	for i := range fi.ids {
		if fi.ids[i], ok = str(); !ok {
			return nil, errIndexCorrupt
		}
		if fi.lines[i], ok = str(); !ok {
			return nil, errIndexCorrupt
		}
	}
	ix, err := search.Decode(b)
	if err != nil || ix.Len() != len(fi.ids) {
		return nil, errIndexCorrupt
	}
	fi.ix = ix
	return fi, nil
}

// buildFamilyIndex indexes the family as this process listed it (visible, sorted by id).
func (e *turnEnv) buildFamilyIndex() *familyIndex {
	tools := e.visible()
	docs := make([]search.Doc, len(tools))
	fi := &familyIndex{ids: make([]string, len(tools)), lines: make([]string, len(tools))}
	h := sha256.New()
	for i, tl := range tools {
		docs[i] = search.Doc{ID: tl.id, Name: tl.name, Description: tl.desc, Args: tl.argNames()}
		fi.ids[i] = tl.id
		fi.lines[i], _ = firstLineCut(tl.desc, indexLineMax)
		h.Write([]byte(tl.id + " " + tl.hash + "\n"))
	}
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
		if b, ok, err := e.State.Read(searchFact); err == nil && ok {
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
	// configuration; a read-only offer's WRITE tools hidden.
	down := map[string]bool{}
	for _, id := range e.order {
		p := e.provs[id]
		if p.down != "" {
			down[id] = true
		} else if p.client == nil {
			if reason, ok, err := e.State.Read(providers.DownFact(id)); err == nil && ok {
				p.down = shown(string(reason), reasonMax)
				if p.down == "" {
					p.down = "it failed earlier in this turn"
				}
				down[id] = true
			}
		}
	}
	entry := func(doc int) (Entry, bool) {
		id := fi.ids[doc]
		prov, name, _ := strings.Cut(id, "/")
		p := e.provs[prov]
		if p == nil || down[prov] {
			return Entry{}, false
		}
		class := p.cfg.Class(name)
		if p.readOnly && class != "READ" {
			return Entry{}, false
		}
		en := Entry{ID: id, Provider: prov, Tool: name, Class: class, Description: fi.lines[doc],
			PermissionMode: e.Manifest.PermissionMode}
		return en, true
	}
	admitted := 0
	for doc := range fi.ids {
		if _, ok := entry(doc); ok {
			admitted++
		}
	}
	query := strings.Join(words, " ")
	pg, err := fi.ix.Page(query, limit, cursor, fi.salt, func(doc int) bool { _, ok := entry(doc); return ok })
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

// argNames are the input schema's top-level property names, sorted.
func (tl *tool) argNames() []string {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(tl.input, &s) != nil {
		return nil
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
