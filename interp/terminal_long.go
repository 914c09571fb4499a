package interp

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
// of the whole line drawn again.
func (s *editorScreen) drawn(text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.appended == "" || text == "" {
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
