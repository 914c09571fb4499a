package lineedit

import "strings"

// shownPrompt is a prompt as ${PS1@P} gives it, made ready for the terminal: \001 and \002
// (what \[ and \] become) are dropped, as readline drops them, and the last line, the one the
// line editor draws again when it redraws the line, is kept apart with its width on the screen.
type shownPrompt struct {
	head  string // the lines before the last, each with its newline: written once
	last  string // the last line, with its invisible parts
	width int    // the columns the last line takes
}

// parsePrompt reads a prompt: text between \001 and \002 takes no columns, nor does an escape
// sequence outside them (CSI such as colours, OSC such as a window title, or a two-byte one),
// nor a control character; a newline or carriage return starts the count again.
func parsePrompt(p string) shownPrompt {
	var text strings.Builder
	lastStart, width := 0, 0
	invisible := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\001':
			invisible = true
			continue
		case c == '\002':
			invisible = false
			continue
		case invisible:
		case c == '\n':
			text.WriteByte(c)
			lastStart, width = text.Len(), 0
			continue
		case c == '\r':
			width = 0
		case c == '\x1b':
			end := escapeEnd(p, i)
			text.WriteString(p[i:end])
			i = end - 1
			continue
		case c < ' ' || c == 0x7f:
		case c < 0x80 || c >= 0xc0:
			// One column a character: the first byte of each counts, the rest of it does not.
			width++
		}
		text.WriteByte(c)
	}
	s := text.String()
	return shownPrompt{head: s[:lastStart], last: s[lastStart:], width: width}
}

// escapeEnd returns where the escape sequence starting at p[i] (an ESC) ends.
func escapeEnd(p string, i int) int {
	if i+1 >= len(p) {
		return len(p)
	}
	switch p[i+1] {
	case '[':
		// CSI: parameters, then one final byte from @ to ~.
		for j := i + 2; j < len(p); j++ {
			if p[j] >= '@' && p[j] <= '~' {
				return j + 1
			}
		}
		return len(p)
	case ']':
		// OSC: ended by BEL or by ESC \.
		for j := i + 2; j < len(p); j++ {
			if p[j] == '\a' {
				return j + 1
			}
			if p[j] == '\x1b' && j+1 < len(p) && p[j+1] == '\\' {
				return j + 2
			}
		}
		return len(p)
	}
	return i + 2
}
