package lineedit

import (
	"io"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// readQuiet reads a line of a terminal that does not echo, one byte at a time, drawing
// nothing. A CR ends a line too, as in readline: it reaches the session only when the terminal
// does not turn it into NL.
func (e *Editor) readQuiet() (string, error) {
	keys := quietKeys{}
	if e.mode.set {
		// The kernel edits no more (no canonical input): its keys are read here, as readline
		// reads them.
		keys = quietKeys{erase: e.mode.saved.Cc[unix.VERASE], kill: e.mode.saved.Cc[unix.VKILL],
			wordErase: e.mode.saved.Cc[unix.VWERASE], eof: e.mode.saved.Cc[unix.VEOF]}
	}
	var line []byte
	var b [1]byte
	for {
		if _, err := e.keys.Read(b[:]); err != nil {
			return string(line), err
		}
		switch c := b[0]; {
		case c == '\n' || c == '\r':
			e.history.Add(string(line))
			return string(line), nil
		case keys.eof != 0 && c == keys.eof:
			// Ctrl-D: the end on an empty line; within one, readline's delete-char at the end
			// deletes nothing.
			if len(line) == 0 {
				return "", io.EOF
			}
		case keys.erase != 0 && (c == keys.erase || c == '\b'):
			if _, n := utf8.DecodeLastRune(line); n > 0 {
				line = line[:len(line)-n]
			}
		case keys.kill != 0 && c == keys.kill:
			line = line[:0]
		case keys.wordErase != 0 && c == keys.wordErase:
			line = eraseWord(line)
		default:
			line = append(line, c)
		}
	}
}

// quietKeys are the terminal's editing keys (its erase, kill, word erase and end of file),
// zero when the terminal's line discipline takes them itself.
type quietKeys struct{ erase, kill, wordErase, eof byte }

// eraseWord drops the blanks at the end of line and the word before them, as Ctrl-W does.
func eraseWord(line []byte) []byte {
	i := len(line)
	for i > 0 && (line[i-1] == ' ' || line[i-1] == '\t') {
		i--
	}
	for i > 0 && line[i-1] != ' ' && line[i-1] != '\t' {
		i--
	}
	return line[:i]
}
