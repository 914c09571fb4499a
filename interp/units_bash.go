package interp

import (
	"bufio"
	"bytes"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// mvdan's parser refuses some text bash reads (`a=(` newline ` [1]==` newline `)`). Ending a
// unit at such an error would split a command whose next lines have not arrived yet, so the real
// shell itself is asked whether the text is complete. Only text that mvdan cannot parse is asked
// about, and one real shell answers every question of a session: a process per question made a
// long command mvdan cannot parse (bash's unicode1.sub: an array assignment of 500 lines) cost a
// process per line.
//
// The checker is `bash -c LOOP`, started on the first question. LOOP reads each text (its
// length, a newline, the text) and has a subshell of its own parse it: `eval` of `set -n`
// followed by the text, so that from the first line of the text on nothing is run, whatever the
// text holds (a parse-only reading with no process started: no exec, a fork of the checker).
// It answers with what bash printed (its syntax errors and warnings) and a last line
// `__spear_chk STATUS`.

const checkerLoop = `while IFS= read -r __n && IFS= read -r -d '' -N "$__n" __t; do ` +
	`( eval "set -n` + "\n" + `$__t" ) 2>&1; printf '\n__spear_chk %d\n' "$?"; done`

// startChecker starts the checker process; tests replace it to count starts.
var startChecker = func(path string) (*exec.Cmd, io.WriteCloser, io.ReadCloser, error) {
	cmd := exec.Command(path, "--norc", "--noprofile", "-c", checkerLoop)
	cmd.Env = []string{"LC_ALL=C"}
	// Its own session: a terminal's signals (Ctrl-C) are not for it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, nil, err
	}
	return cmd, in, out, nil
}

// syntaxChecker asks one long-lived real shell (at path) about texts mvdan cannot parse.
type syntaxChecker struct {
	path   string
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	broken bool // it could not be started, or stopped answering: the unit ends at the error
}

// incomplete tells whether bash reads text as a command cut short: it would read on, rather
// than report a syntax error. With no checker it says no, and the unit ends at the error. When
// bash says which closing character it looks for, no line without it can complete the text:
// closer is that character (0 when bash names none).
func (c *syntaxChecker) incomplete(text string) (more bool, closer byte) {
	msg, status, ok := c.ask(text)
	if !ok {
		return false, 0
	}
	if status == 0 {
		// Parsed, save for a here-document cut by the end of input, which bash only warns about.
		return bytes.Contains(msg, []byte("delimited by end-of-file")), 0
	}
	const looking = "unexpected EOF while looking for matching `"
	if i := bytes.LastIndex(msg, []byte(looking)); i >= 0 {
		if rest := msg[i+len(looking):]; len(rest) >= 2 && rest[1] == '\'' {
			closer = rest[0]
		}
		return true, closer
	}
	return bytes.Contains(msg, []byte("syntax error: unexpected end of file")), 0
}

// ask has the checker parse text and returns what bash printed and its status.
func (c *syntaxChecker) ask(text string) ([]byte, int, bool) {
	if c.broken {
		return nil, 0, false
	}
	if c.cmd == nil {
		cmd, in, out, err := startChecker(c.path)
		if err != nil {
			c.broken = true
			return nil, 0, false
		}
		c.cmd, c.in, c.out = cmd, in, bufio.NewReader(out)
	}
	// read drops NUL bytes, and bash's parser ignores them.
	text = strings.ReplaceAll(text, "\x00", "")
	if _, err := io.WriteString(c.in, strconv.Itoa(len(text))+"\n"+text); err != nil {
		c.fail()
		return nil, 0, false
	}
	var msg []byte
	for {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			c.fail()
			return nil, 0, false
		}
		if s, ok := bytes.CutPrefix(line, []byte("__spear_chk ")); ok {
			status, err := strconv.Atoi(string(bytes.TrimSpace(s)))
			if err != nil {
				c.fail()
				return nil, 0, false
			}
			return msg, status, true
		}
		msg = append(msg, line...)
	}
}

func (c *syntaxChecker) fail() {
	c.close()
	c.broken = true
}

// close ends the checker: its loop ends at the end of its input.
func (c *syntaxChecker) close() {
	if c.cmd == nil {
		return
	}
	c.in.Close()
	c.cmd.Process.Kill()
	c.cmd.Wait()
	c.cmd = nil
}

// delimiter asks bash for the delimiter of a here-document whose word is word (as written):
// what it says it wanted when the input ends before the body does.
func (c *syntaxChecker) delimiter(word string) (string, bool) {
	msg, _, ok := c.ask(": <<" + word + "\n")
	if !ok {
		return "", false
	}
	const wanted = "(wanted `"
	i := bytes.LastIndex(msg, []byte(wanted))
	if i < 0 {
		return "", false
	}
	rest := msg[i+len(wanted):]
	j := bytes.LastIndex(rest, []byte("')"))
	if j < 0 {
		return "", false
	}
	return string(rest[:j]), true
}
