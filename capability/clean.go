package capability

import (
	"strings"

	"github.com/spear-shell/spear-shell/textclean"
)

// clean makes a provider-supplied string safe to print (SPEC 5); textclean says how.
func clean(s string) string { return textclean.Clean(s) }

// Bounds of provider-supplied strings in what is printed outside a result's frame (SPEC 5:
// cleaned and bounded everywhere).
const (
	nameMax   = 160  // a tool name or capability id as typed or as sent
	reasonMax = 300  // one phrase taken from a provider: an error message, a protocol version
	schemaMax = 4096 // one schema failure or compile error, which may quote the schema
)

// shown cleans a provider-supplied string and bounds it to about n bytes, marking a cut with
// "…".
func shown(s string, n int) string { return textclean.Shown(s, n) }

// truncate bounds s to at most n bytes without splitting a UTF-8 sequence.
func truncate(s string, n int) (string, bool) { return textclean.Truncate(s, n) }

// firstLine is the description's first non-empty line, bounded to max bytes.
func firstLine(s string, max int) string {
	line, cut := firstLineCut(s, max)
	if cut {
		return line + "…"
	}
	return line
}

// firstLineCut is firstLine without its mark: the line, and whether it was cut (and so
// must be followed by "…").
func firstLineCut(s string, max int) (string, bool) {
	s = strings.TrimLeft(s, " \t\n")
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(s)
	return truncate(s, max-len("…"))
}
