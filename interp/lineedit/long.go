package lineedit

import "strings"

// editorLimit is the length of a line (in characters) that golang.org/x/term takes no key
// into: it drops what is typed there. A longer line it edits as any other (one recalled from
// history, or one made longer by pastLimit), so a line gets past the limit by one key put in
// by its caller.
const editorLimit = 4096

// pastLimit puts key into line at pos (byte offsets, as the editor's callback gives them) for
// a line the editor holds at its limit. The editor then draws the whole line again; for a
// key at the end, where an agent's long line is typed, the screen is told to show the key
// alone, as the editor shows a key it takes itself.
func (s *editorScreen) pastLimit(line string, pos int, key rune) (string, int, bool) {
	k := string(key)
	if pos == len(line) {
		s.mu.Lock()
		s.appended = k
		s.mu.Unlock()
	}
	return line[:pos] + k + line[pos:], pos + len(k), true
}

// drawn is what the screen shows of text the editor draws: for the key pastLimit put at the
// end of the line, the key (with the line end the editor adds at the window's edge) in place
// of the whole line drawn again. A resize may draw in between (the editor lets go of its lock
// around the hook): it draws the prompt too, and is left as it is.
func (s *editorScreen) drawn(text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.appended == "" || text == "" || strings.Contains(text, standIn) {
		return text
	}
	key := s.appended
	s.appended = ""
	line := strings.TrimSuffix(text, "\r\n")
	if !strings.HasSuffix(line, key) {
		return text
	}
	return key + text[len(line):]
}

// keyHook is golang.org/x/term's AutoCompleteCallback.
type keyHook = func(line string, pos int, key rune) (string, int, bool)

// lineLength follows the length of a line past editorLimit while plain text is typed onto it,
// so that the editor's key hook can be off: the editor copies the whole line for the hook at
// each key (a line of 100,000 characters took 19 s to type, bash -i's 0.15 s). Any other key
// (a control character, an escape sequence) may change the line in ways not followed here:
// the length is then unknown, and the hook on, until it sees the line again.
type lineLength struct {
	n     int // characters
	known bool
	cont  int // bytes of a UTF-8 character still to come
}

// plain takes the next byte given to the editor and tells whether the hook may be off for it:
// the line is known to be past the limit and the byte is text.
func (l *lineLength) plain(b byte) bool {
	if l.known && l.n > editorLimit {
		switch {
		case l.cont > 0 && b&0xc0 == 0x80:
			l.cont--
			return true
		case l.cont > 0:
		case b >= ' ' && b < 0x7f:
			l.n++
			return true
		case b >= 0xc2 && b <= 0xf4:
			// The first byte of a character of two, three or four.
			l.n++
			l.cont = 1
			if b >= 0xe0 {
				l.cont++
			}
			if b >= 0xf0 {
				l.cont++
			}
			return true
		}
	}
	*l = lineLength{}
	return false
}
