package search

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"strings"
)

// Limits of a page (SPEC 2.6 and 13).
const (
	DefaultLimit = 20
	MaxLimit     = 50
)

// Page is one bounded page of a ranked search.
type Page struct {
	Hits    []Hit
	First   int    // the position of the first hit among all matches
	Matched int    // documents that hold any word of the query
	Next    string // the cursor of the next page; "" on the last
}

// ErrCursor says a cursor is not one a page of this query printed.
var ErrCursor = errors.New("not a cursor of this search")

// ErrLimit says a limit is outside 1-50.
var ErrLimit = errors.New("limit must be 1-50")

// ErrNoWords says a query holds no word to search for.
var ErrNoWords = errors.New("at least one word is needed")

// Page ranks query and returns the page that starts at cursor ("" for the first), of the
// documents keep admits (nil: all). salt ties cursors to one family (the caller's
// fingerprint of it): a cursor of another query or of another family is refused, not read
// as a position in this one.
func (ix *Index) Page(query string, limit int, cursor, salt string, keep func(doc int) bool) (Page, error) {
	if limit < 1 || limit > MaxLimit {
		return Page{}, ErrLimit
	}
	if strings.TrimSpace(query) == "" {
		return Page{}, ErrNoWords
	}
	words := Words(query) // once: the ranking and the cursor's check both need them
	start := 0
	if cursor != "" {
		var err error
		if start, err = parseCursor(cursor, words, salt); err != nil {
			return Page{}, err
		}
	}
	hits := ix.score(words)
	if keep != nil {
		hits = slices.DeleteFunc(hits, func(h Hit) bool { return !keep(h.Doc) })
	}
	matched := len(hits)
	if start > matched {
		return Page{}, ErrCursor
	}
	end := min(start+limit, matched)
	top := best(hits, end)
	p := Page{Hits: slices.Clone(top[start:end]), First: start, Matched: matched}
	if end < matched {
		p.Next = makeCursor(end, words, salt)
	}
	return p, nil
}

// A cursor is the position of the next hit and a check of the query's words and the family:
// "20-3f9a1c0b".
func makeCursor(at int, words []string, salt string) string {
	return strconv.Itoa(at) + "-" + cursorCheck(at, words, salt)
}

func parseCursor(c string, words []string, salt string) (int, error) {
	pos, check, ok := strings.Cut(c, "-")
	at, err := strconv.Atoi(pos)
	if !ok || err != nil || at <= 0 || strconv.Itoa(at) != pos || check != cursorCheck(at, words, salt) {
		return 0, ErrCursor
	}
	return at, nil
}

func cursorCheck(at int, words []string, salt string) string {
	h := sha256.New()
	h.Write([]byte(strconv.Itoa(at) + "\x00" + salt + "\x00"))
	h.Write([]byte(strings.Join(words, " ")))
	return hex.EncodeToString(h.Sum(nil)[:4])
}
