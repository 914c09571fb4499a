package lineedit

import (
	"strings"
	"unicode/utf8"
)

// completer completes the word before the cursor at Tab, as readline does for bash -i with no
// completion functions: a command name in a command's first word, else a file name, as the
// real shell's compgen finds them (its directory, PATH, functions). One candidate is put in
// whole, followed by a space (a slash for a directory); several put in what they share.
// Candidates are not listed. A word with quotes, backslashes or expansions is left alone.
type completer func(word string, command bool) []string

// wordBreaks end the word being completed, as readline's rl_completer_word_break_characters.
const wordBreaks = " \t\n\"'@><=;|&("

// commandBreaks end a command, so that the next word is a command's name.
const commandBreaks = ";|&("

// complete returns the line with the word before pos completed, or ok false.
func (c completer) complete(line string, pos int) (string, int, bool) {
	start := strings.LastIndexAny(line[:pos], wordBreaks) + 1
	word := line[start:pos]
	if strings.ContainsAny(word, "\\$`*?[{~") {
		return "", 0, false
	}
	before := strings.TrimRight(line[:start], " \t")
	command := before == "" || strings.ContainsAny(before[len(before)-1:], commandBreaks)
	found := c(word, command)
	if len(found) == 0 {
		return "", 0, false
	}
	common := commonPrefix(found)
	if !strings.HasPrefix(common, word) {
		return "", 0, false
	}
	add, end := common[len(word):], ""
	if len(found) == 1 {
		// A name in whole ends the word; a directory's leaves it open for what is in it.
		if strings.HasSuffix(add, "/") {
			add, end = strings.TrimSuffix(add, "/"), "/"
		} else {
			end = " "
		}
	}
	add = escapeWord(add) + end
	if add == "" {
		return "", 0, false
	}
	return line[:pos] + add + line[pos:], pos + len(add), true
}

// commonPrefix returns what all of words begin with (whole UTF-8 characters).
func commonPrefix(words []string) string {
	p := words[0]
	for _, w := range words[1:] {
		n := 0
		for n < len(p) && n < len(w) && p[n] == w[n] {
			n++
		}
		p = p[:n]
	}
	for !utf8.ValidString(p) {
		p = p[:len(p)-1]
	}
	return p
}

// escapeWord puts a backslash before each character of s that the shell would take apart.
func escapeWord(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(" \t\"'\\$`|&;()<>*?[]{}!#", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
