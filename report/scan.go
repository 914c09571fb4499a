package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"
)

// maxLine bounds one line held in memory. A longer line (no record the audit package writes
// comes near it: every string is cut at 4 KiB, a family of 10,000 capabilities is about 1 MiB)
// is read through and reported, never held.
const maxLine = 16 << 20

// lineReader yields a file's lines one at a time, each without its newline, holding at most
// maxLine bytes of one.
type lineReader struct {
	r    *bufio.Reader
	buf  []byte
	n    int64 // the number of the line last read, from 1
	long int64 // the length of the last line when it was longer than maxLine (then not held)
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 1<<20)}
}

// next returns the next line (valid until the next call); ok is false at the end of the
// input. A last line without a newline is a line. A line longer than maxLine is returned as
// nil with l.long set.
func (l *lineReader) next() (line []byte, ok bool, err error) {
	l.buf, l.long = l.buf[:0], 0
	total := 0
	for {
		frag, err := l.r.ReadSlice('\n')
		total += len(frag)
		if err == nil && total == len(frag) { // the whole line in the reader's buffer: no copy
			l.n++
			return frag[:len(frag)-1], true, nil
		}
		if total <= maxLine {
			l.buf = append(l.buf, frag...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && err != io.EOF {
			return nil, false, err
		}
		if total == 0 {
			return nil, false, nil
		}
		l.n++
		if total > maxLine {
			l.long = int64(total)
			return nil, true, nil
		}
		return bytes.TrimSuffix(l.buf, []byte{'\n'}), true, nil
	}
}

// head is what is read of every record before deciding whether it concerns the report: the
// top-level keys that place it, as their raw JSON values (slices of the line: nothing is copied
// for a record that is skipped). The rest is decoded only for records that do concern it.
type head struct {
	turn, session, time, event []byte
	hasTurn, broker            bool
}

// readHead reads the top-level keys of line, which json.Valid accepted, without decoding the
// rest. A key given twice counts as encoding/json counts it (the last wins). ok is false when
// line is not a JSON object.
func readHead(line []byte) (h head, ok bool) {
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return h, false
	}
	i++
	for {
		i = skipSpace(line, i)
		if i < len(line) && line[i] == '}' {
			return h, true
		}
		if i < len(line) && line[i] == ',' {
			i = skipSpace(line, i+1)
		}
		kEnd := stringEnd(line, i)
		key := line[i:kEnd]
		i = skipSpace(line, kEnd)
		i = skipSpace(line, i+1) // ':'
		vEnd := valueEnd(line, i)
		val := line[i:vEnd]
		i = vEnd
		switch string(unquoteKey(key)) {
		case "turn":
			h.turn, h.hasTurn = val, true
		case "session":
			h.session = val
		case "time":
			h.time = val
		case "event":
			h.event = val
		case "broker":
			h.broker = string(val) == "true"
		}
	}
}

// plain is a JSON string value's text when reading it needs no decoding (no escape, valid
// UTF-8); ok is false otherwise.
func plain(v []byte) ([]byte, bool) {
	if len(v) < 2 || v[0] != '"' || bytes.IndexByte(v, '\\') >= 0 || !utf8.Valid(v) {
		return nil, false
	}
	return v[1 : len(v)-1], true
}

// is tells whether the raw value v is the string s, without copying it when it can.
func is(v []byte, s string) bool {
	if p, ok := plain(v); ok {
		return string(p) == s
	}
	return unquote(v) == s
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index after the string that opens at b[i] (valid JSON): the first
// quote after it that an even number of backslashes precedes.
func stringEnd(b []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return len(b)
		}
		j += k
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
		j++
	}
}

// valueEnd returns the index after the value that begins at b[i] (valid JSON).
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); {
			k := bytes.IndexAny(b[j:], `"{}[]`)
			if k < 0 {
				return len(b)
			}
			j += k
			switch b[j] {
			case '"':
				j = stringEnd(b, j)
				continue
			case '{', '[':
				depth++
			default:
				depth--
				if depth == 0 {
					return j + 1
				}
			}
			j++
		}
		return len(b)
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	return j
}

// unquote returns a JSON string value's text ("" for a value that is not a string).
func unquote(v []byte) string {
	if len(v) < 2 || v[0] != '"' {
		return ""
	}
	if p, ok := plain(v); ok { // else as encoding/json reads it (U+FFFD for invalid UTF-8)
		return string(p)
	}
	var s string
	_ = json.Unmarshal(v, &s)
	return s
}

func unquoteKey(k []byte) []byte {
	if p, ok := plain(k); ok {
		return p
	}
	return []byte(unquote(k))
}

// record is what the report reads of a record that concerns it.
type record struct {
	Time       string   `json:"time"`
	Event      string   `json:"event"`
	Turn       string   `json:"turn"`
	Session    string   `json:"session"`
	Face       string   `json:"face"`
	Broker     bool     `json:"broker"`
	ShareKey   string   `json:"share_key"`
	Share      string   `json:"share"`
	Provider   string   `json:"provider"`
	Capability string   `json:"capability"`
	Class      string   `json:"class"`
	Mode       string   `json:"mode"`
	Code       string   `json:"code"`
	Reason     string   `json:"reason"`
	AuditID    string   `json:"audit_id"`
	Stage      string   `json:"stage"`
	DurationMS float64  `json:"duration_ms"`
	Args       string   `json:"args"`
	ArgsCut    bool     `json:"args_truncated"`
	Result     string   `json:"result"`
	Phase      string   `json:"phase"`
	Approval   string   `json:"approval"`
	Sent       *bool    `json:"sent"`
	Isolated   *bool    `json:"isolated"`
	Isolation  string   `json:"isolation"`
	Task       string   `json:"task"`
	Project    string   `json:"project"`
	Workspace  string   `json:"workspace"`
	Permission string   `json:"permission_mode"`
	Count      *int     `json:"count"`
	Via        string   `json:"via"`
	Words      string   `json:"words"`
	Matched    *int     `json:"matched"`
	Shown      *int     `json:"shown"`
	Decision   string   `json:"decision"`
	Enabled    *bool    `json:"enabled"`
	Write      string   `json:"write"`
	Scope      string   `json:"scope"`
	Unavail    []string `json:"unavailable"`
	Providers  []struct {
		ID      string `json:"id"`
		Offered bool   `json:"offered"`
		Reason  string `json:"reason"`
	} `json:"providers"`
}

// where names a line of a file for a problem.
type where struct {
	File string
	Line int64
}

func (w where) String() string { return fmt.Sprintf("%s:%d", w.File, w.Line) }
