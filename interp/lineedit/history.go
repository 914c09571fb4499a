package lineedit

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// History is a terminal session's list of the commands entered, which Up and Down recall and
// Ctrl-R searches: blank lines left out, at most size of them. A command over several lines is
// one entry, on one line, as bash's cmdhist makes it ("if true; then echo x; fi"), unless it
// cannot be written on one (a here-document, a quote holding a newline): then each line is one.
type History struct {
	entries   []string // oldest first
	size      int
	file      *historyFile
	searching historySearch
	unit      []string // the lines of the command being entered
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

// Add takes a line entered (term.History): it is kept with the command's other lines until
// Entered.
func (h *History) Add(line string) {
	h.unit = append(h.unit, line)
}

// Entered ends the command whose lines were added: it becomes an entry (or one a line), kept
// and appended to the file.
func (h *History) Entered() {
	lines := h.unit
	h.unit = nil
	if len(lines) > 1 {
		if one, ok := oneLine(strings.Join(lines, "\n")); ok {
			lines = []string{one}
		}
	}
	for _, line := range lines {
		if strings.TrimSpace(line) == "" {
			continue
		}
		h.keep(line)
		if h.file != nil {
			h.file.add(line)
		}
	}
}

// oneLine writes a command of several lines on one, if it can be.
func oneLine(text string) (string, bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(text), "")
	if err != nil {
		return "", false
	}
	var b strings.Builder
	if syntax.NewPrinter(syntax.SingleLine(true)).Print(&b, f) != nil {
		return "", false
	}
	one := strings.TrimSuffix(b.String(), "\n")
	return one, !strings.Contains(one, "\n")
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

// search serves Ctrl-R, a key the editor leaves to its caller: it puts in place of the line
// the newest line of the history that holds what was typed (again: the next older one that
// differs). Another key ends the search.
func (h *History) search(line string, pos int, key rune) (string, int, bool) {
	switch key {
	case 'R' - '@':
		from := 0
		if h.searching.found == "" || line != h.searching.found {
			h.searching = historySearch{query: line}
		} else {
			from = h.searching.at + 1
		}
		for i := from; i < h.Len(); i++ {
			if e := h.At(i); e != line && strings.Contains(e, h.searching.query) {
				h.searching.found, h.searching.at = e, i
				return e, len(e), true
			}
		}
		return line, pos, true
	}
	h.searching = historySearch{}
	return "", 0, false
}
