package realshell

import "strings"

// bash 5.2.15 crashes (SIGSEGV) when `exec` duplicates descriptor 0 inside `eval` while a
// group has redirected it: `{ eval "exec 3<&0"\n} 0</dev/null` (so do `exec {fd}<&0` and a
// function doing it, called there). The same text read as script, `{ exec 3<&0\n} 0</dev/null`,
// runs. A batch is run by eval, so once a unit of a session duplicates stdin, it and every later
// unit (a function it defines may do it again) go to the shell as script text. Only a user's
// own `eval "exec 3<&0"` still meets the bug, as it would in any group bash runs.

// dupsStdin tells whether text may duplicate descriptor 0 (`<&0`, `< & 0`, `<&0-`, `<&$fd`).
func dupsStdin(text string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], "<&")
		if j < 0 {
			return false
		}
		k := i + j + 2
		for k < len(text) && (text[k] == ' ' || text[k] == '\t') {
			k++
		}
		if k < len(text) && text[k] == '0' && (k+1 == len(text) || text[k+1] < '0' || text[k+1] > '9') {
			return true
		}
		// A descriptor named by an expansion (`<&$fd`, `<&${fd}`) may be 0.
		if k < len(text) && text[k] == '$' {
			return true
		}
		i = k
	}
}
