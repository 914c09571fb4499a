package interp

import (
	"bytes"
	"os/exec"
	"strings"
)

// mvdan's parser refuses some text bash reads (`a=(` newline ` [1]==` newline `)`). Ending a
// unit at such an error would split a command whose next lines have not arrived yet, so the real
// shell itself is asked, with `bash -n` (it only parses), whether the text is complete. Only
// text that mvdan cannot parse pays for the process.

// bashIncomplete tells whether bash (at path) reads text as a command cut short: it would read
// on, rather than report a syntax error. With no path it says no, and the unit ends at the error.
func bashIncomplete(path, text string) bool {
	if path == "" {
		return false
	}
	cmd := exec.Command(path, "-n")
	cmd.Env = []string{"LC_ALL=C"}
	cmd.Stdin = strings.NewReader(text)
	var msg bytes.Buffer
	cmd.Stderr = &msg
	if cmd.Run() == nil {
		// Parsed, save for a here-document cut by the end of input, which bash only warns about.
		return bytes.Contains(msg.Bytes(), []byte("delimited by end-of-file"))
	}
	return bytes.Contains(msg.Bytes(), []byte("unexpected EOF while looking for matching")) ||
		bytes.Contains(msg.Bytes(), []byte("syntax error: unexpected end of file"))
}
