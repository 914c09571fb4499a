// Package search ranks a turn's family by the words of a query (SPEC 2.6): a BM25 index over
// each capability's id, tool name (split at `_`, `-`, `.` and case changes), description and
// argument names, built once per turn state and kept as bytes that a later process reads
// without building it again. Any word may match, and so may its synonyms, weighted below it
// (related.go); ties are broken by the family's order (the
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
	return appendWords(nil, s, nil)
}

// appendWords appends s's words to out; stems, when not nil, remembers each word's stem (a
// family repeats its words thousands of times, and stemming is most of the work).
func appendWords(out []string, s string, stems map[string]string) []string {
	eachPart(s, func(w string) {
		w = lower(w)
		if isStopWord(w) {
			return
		}
		st, ok := stems[w]
		if !ok {
			st = stem(w)
			if stems != nil {
				stems[w] = st
			}
		}
		out = append(out, st)
	})
	return out
}

// lower is strings.ToLower without an allocation for a word already in lower case.
func lower(w string) string {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c >= 'A' && c <= 'Z' || c >= 0x80 {
			return strings.ToLower(w)
		}
	}
	return w
}

// kind is what eachPart needs to know of a rune.
type kind uint8

const (
	other kind = iota
	lowerCase
	upperCase
	digit
	caseless // a letter with no case
)

func kindOf(r rune) kind {
	if r < 0x80 {
		switch c := byte(r); {
		case c >= 'a' && c <= 'z':
			return lowerCase
		case c >= 'A' && c <= 'Z':
			return upperCase
		case c >= '0' && c <= '9':
			return digit
		}
		return other
	}
	switch {
	case unicode.IsUpper(r):
		return upperCase
	case unicode.IsLower(r):
		return lowerCase
	case unicode.IsDigit(r):
		return digit
	case unicode.IsLetter(r):
		return caseless
	}
	return other
}

// eachPart calls f, in order and without allocating, with each run of letters and digits of s,
// cut again where case changes: a lower-case letter or digit followed by an upper-case one, or
// an upper-case letter followed by one upper and then a lower-case letter (the "P" of
// "HTTPServer" starts "Server").
func eachPart(s string, f func(string)) {
	start := -1
	var prev, prev2 kind
	prevLen := 0
	for i, r := range s {
		k := kindOf(r)
		if k == other {
			if start >= 0 {
				f(s[start:i])
				start = -1
			}
			prev, prev2 = other, other
			continue
		}
		if start < 0 {
			start = i
		} else if k == upperCase && (prev == lowerCase || prev == digit) {
			f(s[start:i])
			start = i
		} else if k == lowerCase && prev == upperCase && prev2 == upperCase {
			at := i - prevLen
			f(s[start:at])
			start = at
		}
		prev2, prev = prev, k
		prevLen = utf8.RuneLen(r)
	}
	if start >= 0 {
		f(s[start:])
	}
}

// isStopWord says whether w carries no meaning of its own in a tool's description or a
// query: Snowball's English stop list (with the parts of its contractions, as eachPart cuts
// them) and a few more ("can", "will", "without"; "every" and the indefinite pronouns, of the
// class of Snowball's "all", "each", "any" and "some": an agent's "every page", "dump
// everything" names no thing). A switch, not a map: nothing is initialised at start, which every spear-shell -c
// command would pay before its fast path runs (docs/layout.md).
func isStopWord(w string) bool {
	switch w {
	case "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "anyone", "anything", "are",
		"aren", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both",
		"but", "by", "can", "cannot", "could", "couldn", "d", "did", "didn", "do", "does", "doesn",
		"doing", "don", "down", "during", "each", "every", "everyone", "everything", "few", "for", "from", "further", "had", "hadn", "has",
		"hasn", "have", "haven", "having", "he", "her", "here", "hers", "herself", "him", "himself",
		"his", "how", "i", "if", "in", "into", "is", "isn", "it", "its", "itself", "let", "ll", "m",
		"me", "more", "most", "mustn", "my", "myself", "no", "nor", "not", "nothing", "of", "off", "on", "once",
		"only", "or", "other", "ought", "our", "ours", "ourselves", "out", "over", "own", "re", "s",
		"same", "shan", "she", "should", "shouldn", "so", "some", "someone", "something", "such", "t", "than", "that", "the",
		"their", "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those",
		"through", "to", "too", "under", "until", "up", "ve", "very", "was", "wasn", "we", "were",
		"weren", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with",
		"without", "won", "would", "wouldn", "you", "your", "yours", "yourself", "yourselves":
		return true
	}
	return false
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
