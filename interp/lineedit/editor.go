package lineedit

import (
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// Editor reads the lines of a terminal session as readline reads them for bash -i, with
// golang.org/x/term's Terminal doing the editing (cursor keys, Home and End, Ctrl-A, -E, -B,
// -F, -K, -U, -W, -T, -L, Backspace and Delete) and the recall (Up and Down, Ctrl-P and
// Ctrl-N), the session's History behind it (Ctrl-R searches it) and Tab completing from the
// real shell; a line may be of any length (long.go). A terminal that does not echo
// is read by readQuiet, the prompt shown and nothing drawn.
type Editor struct {
	keys    *Keys
	out     io.Writer
	mode    *Mode
	history *History
	// complete gives the candidates for Tab, from the real shell; nil for none.
	complete completer
	mu       sync.Mutex
	editing  *sizedKeys // of the line being edited, for resized
}

// NewEditor returns the editor of a session's lines: keys from the terminal, drawn on out,
// with mode switching the terminal around each line; complete gives Tab's candidates (nil for
// none).
func NewEditor(keys *Keys, out io.Writer, mode *Mode, history *History, complete func(word string, command bool) []string) *Editor {
	return &Editor{keys: keys, out: out, mode: mode, history: history, complete: complete}
}

// ReadLine shows prompt (as ${PS1@P} gives it) and reads a line: see readLine.
func (e *Editor) ReadLine(prompt string) (string, error) {
	return e.readLine(parsePrompt(prompt))
}

// Resized tells the editor of a line being edited that the window's size changed: it draws
// the line again for the new width, as readline does on SIGWINCH.
func (e *Editor) Resized() {
	e.mu.Lock()
	k := e.editing
	e.mu.Unlock()
	if k != nil {
		k.fit()
	}
}

// standIn is what the editor is given as the prompt, one a column: the editor counts a
// prompt's width in characters and has no notion of its invisible parts, and editorScreen puts
// the real prompt where the editor draws it. U+FDD0 is a noncharacter: nobody types it.
const standIn = "\uFDD0"

// readLine shows the prompt and returns the line read, without its newline: io.EOF at Ctrl-D
// on an empty line or when the terminal hangs up, ErrInterrupted after Keys.Cancel.
func (e *Editor) readLine(p shownPrompt) (string, error) {
	if !e.mode.editing {
		io.WriteString(e.out, p.head+p.last)
		return e.readQuiet()
	}
	stand := strings.Repeat(standIn, p.width)
	if p.width == 0 {
		io.WriteString(e.out, p.head+p.last)
	} else {
		io.WriteString(e.out, p.head)
	}
	screen := &editorScreen{w: e.out, head: p.head, prompt: p.last}
	keys := &sizedKeys{keys: e.keys, screen: screen}
	t := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{keys, screen}, stand)
	t.History = e.history
	keys.hook = func(line string, pos int, key rune) (string, int, bool) {
		if key == '\t' {
			// Tab completes (it is never put in the line, as in readline).
			if e.complete != nil {
				if l, p, ok := e.complete.complete(line, pos); ok {
					return l, p, true
				}
			}
			return line, pos, true
		}
		if l, p, ok := e.history.search(line, pos, key); ok {
			return l, p, true
		}
		if key >= ' ' && (key < 0xd800 || key > 0xdbff) {
			n := utf8.RuneCountInString(line)
			keys.length = lineLength{n: n + 1, known: true}
			if n == editorLimit {
				return screen.pastLimit(line, pos, key)
			}
		}
		return "", 0, false
	}
	t.AutoCompleteCallback = keys.hook
	keys.t = t
	keys.fit()
	e.mu.Lock()
	e.editing = keys
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		e.editing = nil
		e.mu.Unlock()
	}()
	return t.ReadLine()
}

// sizedKeys gives the editor the terminal's keys and keeps it told of the window's width,
// which it needs to wrap a long line. It also spells the keys
// that the editor knows under one name only as it knows them: ESC O x (cursor keys, Home and
// End of a terminal in application mode) as ESC [ x, and Home and End as tmux and the Linux
// console send them (ESC [ 1 ~, ESC [ 7 ~; ESC [ 4 ~, ESC [ 8 ~) as ESC [ H and ESC [ F.
type sizedKeys struct {
	keys       *Keys
	t          *term.Terminal
	screen     *editorScreen
	hook       keyHook    // the editor's key hook, off while plain text goes onto a long line
	length     lineLength // of the line, as the hook last saw it and plain text made it
	mu         sync.Mutex // fit runs on the editor's reads and on SIGWINCH
	cols, rows int
	esc        int  // bytes of ESC [ seen
	held       byte // a byte read to tell where a key ends, not given yet
	hasHeld    bool
}

func (k *sizedKeys) fit() {
	k.mu.Lock()
	defer k.mu.Unlock()
	ws, err := unix.IoctlGetWinsize(k.keys.fd, unix.TIOCGWINSZ)
	if err != nil || ws.Col == 0 {
		return
	}
	if int(ws.Col) != k.cols || int(ws.Row) != k.rows {
		k.cols, k.rows = int(ws.Col), int(ws.Row)
		_ = k.t.SetSize(k.cols, k.rows)
	}
}

func (k *sizedKeys) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	b, err := k.next()
	if err != nil {
		return 0, err
	}
	switch {
	case b == '\x1b':
		k.esc = 1
	case k.esc == 1 && (b == '[' || b == 'O'):
		b, k.esc = '[', 2
	case k.esc == 2 && strings.IndexByte(homeEnd, b) >= 0:
		// Home or End if ~ comes next: the byte after the digit belongs to the same key.
		k.esc = 0
		if next, err := k.next(); err == nil && next == '~' {
			b = "HF"[strings.IndexByte(homeEnd, b)/2]
		} else if err == nil {
			k.held, k.hasHeld = next, true
		}
	default:
		k.esc = 0
	}
	// Read runs on the editor's goroutine, between its keys.
	if k.length.plain(b) {
		k.t.AutoCompleteCallback = nil
	} else {
		k.t.AutoCompleteCallback = k.hook
	}
	p[0] = b
	return 1, nil
}

// homeEnd are the digits of ESC [ n ~ that mean Home (the first two) and End.
const homeEnd = "1748"

func (k *sizedKeys) next() (byte, error) {
	if k.hasHeld {
		k.hasHeld = false
		return k.held, nil
	}
	k.fit()
	if !k.keys.Ready() {
		// Nothing more typed for now: the line is drawn as it stands.
		k.screen.endWrap()
	}
	var b [1]byte
	if _, err := k.keys.Read(b[:]); err != nil {
		return 0, err
	}
	return b[0], nil
}

// editorScreen is where the editor draws: it writes the real prompt where the editor draws
// the stand-in (a prompt wider than the window comes in pieces with line ends between them,
// which the terminal does itself), the prompt's first lines too after a clear screen (Ctrl-L),
// and ends lines with \n, which the terminal turns into \r\n as it does for readline.
type editorScreen struct {
	w            io.Writer
	head, prompt string
	mu           sync.Mutex // the editor draws from its reads and on SIGWINCH
	appended     string     // a key pastLimit put at the end of the line, not drawn yet
	wrapMu       sync.Mutex
	wrapHeld     bool // the line end the editor put at the window's edge, not written yet
}

// clearScreen is how the editor clears the screen.
const clearScreen = "\x1b[2J\x1b[H"

func (s *editorScreen) Write(p []byte) (int, error) {
	text := s.wraps(s.drawn(string(p)))
	if i := strings.Index(text, standIn); i >= 0 {
		j := strings.LastIndex(text, standIn) + len(standIn)
		head := text[:i]
		if strings.HasSuffix(head, clearScreen) {
			head += s.head
		}
		text = strings.ReplaceAll(head, "\r\n", "\n") + s.prompt + strings.ReplaceAll(text[j:], "\r\n", "\n")
	} else {
		text = strings.ReplaceAll(text, "\r\n", "\n")
	}
	_, err := io.WriteString(s.w, text)
	return len(p), err
}

// wraps leaves out the line end the editor writes when text reaches the window's edge (it moves
// its cursor there, the next line's start, since a terminal that wraps leaves the cursor at the
// edge until the next character): readline writes a line longer than the window as it is, and
// the terminal wraps it, so that what is typed is echoed as typed, which a harness reading the
// raw output strips from the command's output (OpenHands). A line end the editor put after text
// and before more text goes; one at the end of what it writes is held, and goes if text comes
// next (the terminal wraps before that text, where the editor has its cursor), else it is
// written before what comes (a cursor move, a line's end, a redraw), or when nothing more is
// typed for now (endWrap), as readline moves to the next line at the edge.
func (s *editorScreen) wraps(text string) string {
	if text == "" {
		return text
	}
	s.wrapMu.Lock()
	defer s.wrapMu.Unlock()
	var b strings.Builder
	if s.wrapHeld {
		s.wrapHeld = false
		if !textFirst(text) {
			b.WriteString("\r\n")
		}
	}
	afterText := false
	for i := 0; i < len(text); {
		c := text[i]
		if c == '\x1b' {
			end := escapeEnd(text, i)
			b.WriteString(text[i:end])
			i, afterText = end, false
			continue
		}
		if c == '\r' && afterText && strings.HasPrefix(text[i:], "\r\n") {
			rest := text[i+2:]
			if rest == "" {
				s.wrapHeld = true
				break
			}
			if textFirst(rest) {
				i += 2
				continue
			}
		}
		afterText = c >= ' ' && c != 0x7f
		b.WriteByte(c)
		i++
	}
	return b.String()
}

// textFirst tells whether text starts with a character that takes a column (no control
// character, no escape sequence).
func textFirst(text string) bool { return text != "" && text[0] >= ' ' && text[0] != 0x7f }

// endWrap writes a held line end: the cursor goes to the next line's start, where the editor
// has it.
func (s *editorScreen) endWrap() {
	s.wrapMu.Lock()
	held := s.wrapHeld
	s.wrapHeld = false
	s.wrapMu.Unlock()
	if held {
		io.WriteString(s.w, "\n")
	}
}
