package interp

import (
	"io"
	"strings"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// lineEditor reads the lines of a terminal session as readline reads them for bash -i, with
// golang.org/x/term's Terminal doing the editing (cursor keys, Home and End, Ctrl-A, -E, -B,
// -F, -K, -U, -W, -T, -L, Backspace and Delete) and the recall (Up and Down, Ctrl-P and
// Ctrl-N), and the session's History behind it (Ctrl-R searches it). A terminal that does not
// echo is read as its line discipline gives lines, the prompt shown and nothing drawn.
type lineEditor struct {
	keys    *keyReader
	out     io.Writer
	mode    *termMode
	history *History
}

// standIn is what the editor is given as the prompt, one a column: the editor counts a
// prompt's width in characters and has no notion of its invisible parts, and editorScreen puts
// the real prompt where the editor draws it. U+FDD0 is a noncharacter: nobody types it.
const standIn = "\uFDD0"

// readLine shows the prompt and returns the line read, without its newline: io.EOF at Ctrl-D
// on an empty line or when the terminal hangs up, errInterrupted after cancel.
func (e *lineEditor) readLine(p shownPrompt) (string, error) {
	if !e.mode.editing {
		io.WriteString(e.out, p.head+p.last)
		return e.readCooked()
	}
	stand := strings.Repeat(standIn, p.width)
	if p.width == 0 {
		io.WriteString(e.out, p.head+p.last)
	} else {
		io.WriteString(e.out, p.head)
	}
	keys := &sizedKeys{keys: e.keys}
	t := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{keys, &editorScreen{w: e.out, prompt: p.last}}, stand)
	t.History = e.history
	t.AutoCompleteCallback = e.history.complete
	keys.t = t
	keys.fit()
	return t.ReadLine()
}

// readCooked reads a line of a terminal in canonical mode, one byte at a time.
func (e *lineEditor) readCooked() (string, error) {
	var line []byte
	var b [1]byte
	for {
		if _, err := e.keys.Read(b[:]); err != nil {
			return string(line), err
		}
		if b[0] == '\n' {
			e.history.Add(string(line))
			return string(line), nil
		}
		line = append(line, b[0])
	}
}

// sizedKeys gives the editor the terminal's keys and keeps it told of the window's width,
// which it needs to wrap a long line: a resize shows at the next key.
type sizedKeys struct {
	keys       *keyReader
	t          *term.Terminal
	cols, rows int
}

func (k *sizedKeys) fit() {
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
	k.fit()
	return k.keys.Read(p)
}

// editorScreen is where the editor draws: it writes the real prompt where the editor draws
// the stand-in (a prompt wider than the window comes in pieces with line ends between them,
// which the terminal does itself), and ends lines with \n, which the terminal turns into \r\n
// as it does for readline.
type editorScreen struct {
	w      io.Writer
	prompt string
}

func (s *editorScreen) Write(p []byte) (int, error) {
	text := string(p)
	if i := strings.Index(text, standIn); i >= 0 {
		j := strings.LastIndex(text, standIn) + len(standIn)
		text = strings.ReplaceAll(text[:i], "\r\n", "\n") + s.prompt + strings.ReplaceAll(text[j:], "\r\n", "\n")
	} else {
		text = strings.ReplaceAll(text, "\r\n", "\n")
	}
	_, err := io.WriteString(s.w, text)
	return len(p), err
}
