package interp

import (
	"strings"
)

// History is a terminal session's list of the lines entered, which Up and Down recall and
// Ctrl-R searches: the lines as typed (a command over several lines is recalled line by line),
// blank lines left out, at most Size of them.
type History struct {
	entries []string // oldest first
	size    int
	file    *historyFile
	search  historySearch
}

// NewHistory returns a history of at most size lines (bash's HISTSIZE; 500 when size is
// negative), loaded from and appended to file (bash's HISTFILE) unless file is "".
func NewHistory(size int, file string) *History {
	if size < 0 {
		size = 500
	}
	h := &History{size: size}
	if file != "" {
		h.file = &historyFile{path: file}
		for _, line := range h.file.load() {
			h.keep(line)
		}
	}
	return h
}

// Add keeps a line entered (term.History).
func (h *History) Add(line string) {
	if strings.TrimSpace(line) == "" {
		return
	}
	h.keep(line)
	if h.file != nil {
		h.file.add(line)
	}
}

func (h *History) keep(line string) {
	if h.size == 0 {
		return
	}
	h.entries = append(h.entries, line)
	if over := len(h.entries) - h.size; over > 0 {
		h.entries = append(h.entries[:0], h.entries[over:]...)
	}
}

// Len returns the number of lines kept (term.History).
func (h *History) Len() int { return len(h.entries) }

// At returns a line, 0 being the newest (term.History).
func (h *History) At(i int) string { return h.entries[len(h.entries)-1-i] }

// historySearch is where Ctrl-R is: what it looks for, and the last line it found.
type historySearch struct {
	query, found string
	at           int
}

// complete serves the keys the editor leaves to its caller: Ctrl-R puts in place of the line
// the newest line of the history that holds what was typed (again: the next older one that
// differs), and
// Tab is kept in the line as typed (there is no completion).
func (h *History) complete(line string, pos int, key rune) (string, int, bool) {
	switch key {
	case '\t':
		return line[:pos] + "\t" + line[pos:], pos + 1, true
	case 'R' - '@':
		from := 0
		if h.search.found == "" || line != h.search.found {
			h.search = historySearch{query: line}
		} else {
			from = h.search.at + 1
		}
		for i := from; i < h.Len(); i++ {
			if e := h.At(i); e != line && strings.Contains(e, h.search.query) {
				h.search.found, h.search.at = e, i
				return e, len(e), true
			}
		}
		return line, pos, true
	}
	h.search = historySearch{}
	return "", 0, false
}
