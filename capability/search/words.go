// Package search ranks a turn's family by the words of a query (SPEC 2.6): a BM25 index over
// each capability's id, tool name (split at `_`, `-`, `.` and case changes), description and
// argument names, built once per turn state and kept as bytes that a later process reads
// without building it again. Any word may match; ties are broken by the family's order (the
// ids, sorted), so a page and its cursor are stable for the turn. docs/mcp.md says why this
// index and not a library's.
//
// Layer 0 under capability/: it imports nothing of ours, and must never learn what the turn
// may reach; it ranks exactly the documents it is given.
package search

import (
	"strings"

	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/english"
	"unicode"
	"unicode/utf8"
)

// Words are the index terms of s: split at anything not a letter or digit and at case
// changes (readFile, HTTPServer, get-sum, read_text_file), lower-cased and stemmed; stop
// words are dropped. A query and a document go through the same function.
func Words(s string) []string {
	var out []string
	for _, w := range split(s) {
		w = strings.ToLower(w)
		if stopWords[w] {
			continue
		}
		out = append(out, stem(w))
	}
	return out
}

// split cuts s into runs of letters and digits, and each run again where case changes: a
// lower-case letter or digit followed by an upper-case one, or an upper-case letter followed
// by one upper and then a lower-case letter (the "P" of "HTTPServer" starts "Server").
func split(s string) []string {
	var out []string
	start := -1
	var prev, prev2 rune
	for i, r := range s {
		word := unicode.IsLetter(r) || unicode.IsDigit(r)
		if !word {
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
			prev, prev2 = 0, 0
			continue
		}
		if start < 0 {
			start = i
		} else if unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)) {
			out = append(out, s[start:i])
			start = i
		} else if unicode.IsLower(r) && unicode.IsUpper(prev) && unicode.IsUpper(prev2) {
			at := i - utf8.RuneLen(prev)
			out = append(out, s[start:at])
			start = at
		}
		prev2, prev = prev, r
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

// stopWords carry no meaning of their own in a tool's description or a query.
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be by can for from has have how i in into
		is it its me my no not of on or so than that the their them then there these this those to
		was we what when where which who will with without you your`) {
		stopWords[w] = true
	}
}

// stem folds a word to its English stem with the Snowball (Porter 2) stemmer, so that
// "erases", "erased", "erasing" and "erase" are one word, as are "invite" and "invitation".
// Words of other scripts, or holding digits, stay as they are.
func stem(w string) string {
	if len(w) < 3 || !isASCIILetters(w) {
		return w
	}
	env := snowballstem.NewEnv(w)
	english.Stem(env)
	return env.Current()
}

func isASCIILetters(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}
