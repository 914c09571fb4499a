package realshell

import (
	"strconv"
	"strings"
)

// Completions returns what bash's compgen gives for word in the shell's state (its working
// directory, PATH, functions and aliases): command names when command is true and word holds
// no slash, else file names, those of directories ending with a slash. A terminal session's
// Tab asks for them at a prompt. ok is false once the shell has ended.
func (s *Shell) Completions(word string, command bool) (words []string, ok bool) {
	if !s.Sync() {
		return nil, false
	}
	q := shellQuote(word)
	// Each list in a command substitution of its own; || keeps an ERR trap out of a compgen
	// that finds nothing.
	files := `"$(` + bi + `compgen -f -- ` + q + ` || ` + bi + `:)"`
	dirs := `"$(` + bi + `compgen -d -- ` + q + ` || ` + bi + `:)"`
	if command && !strings.Contains(word, "/") {
		files, dirs = `"$(`+bi+`compgen -c -- `+q+` || `+bi+`:)"`, `""`
	}
	token := newToken()
	s.write(quiet(bi + `printf '%s %s\001%s\0' ` + token + " " + files + " " + dirs + " >&" + strconv.Itoa(replyFD)))
	rest, ok := s.reply(token)
	if !ok {
		return nil, false
	}
	found, dirList, _ := strings.Cut(rest, "\001")
	isDir := map[string]bool{}
	for _, d := range strings.Split(dirList, "\n") {
		isDir[d] = d != ""
	}
	seen := map[string]bool{}
	for _, w := range strings.Split(found, "\n") {
		if w == "" || seen[w] {
			continue
		}
		seen[w] = true
		if isDir[w] {
			w += "/"
		}
		words = append(words, w)
	}
	return words, true
}
