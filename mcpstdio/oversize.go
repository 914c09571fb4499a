package mcpstdio

import (
	"bytes"
	"fmt"
	"strconv"
)

// A message over Options.MaxMessage is never held: it is read through to its line break and
// discarded, while a small scanner notes the members that say what it was (its id, and whether
// it has a method, a result or an error), wherever in the object they come (the TypeScript SDK
// writes "result" before "id"). A response to tools/call then becomes that call's TooLargeError
// and the session goes on; any other message over the limit is a protocol fault (SPEC 6).

// TooLargeError is a message from the server larger than the limit. Returned by CallTool for a
// result over the limit, the client stays usable; wrapped in a *ProtocolError, it is a fault.
type TooLargeError struct {
	Size  int64 // bytes of the message, line break excluded
	Limit int   // Options.MaxMessage
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("message of %d bytes exceeds the limit of %d bytes", e.Size, e.Limit)
}

// oversized is what lineReader reports for a line over its limit, once it is read through.
type oversized struct {
	TooLargeError
	head topMembers
}

func (e *oversized) Error() string { return e.TooLargeError.Error() }

// topMembers notes the top-level members of a JSON object fed to it a piece at a time. It does
// not validate: the message is discarded whatever it holds; it only has to find the id of a
// well-formed response. Keys are compared as spelled (a key written with escapes is not
// recognised, which leaves the message a fault).
type topMembers struct {
	depth    int
	inString bool
	escape   bool
	keyPos   bool   // at depth 1, the next string is a key
	key      []byte // the key being read or last read at depth 1, up to keyMax bytes
	keyLong  bool
	valueOf  string // the key whose value is being read at depth 1
	idBuf    []byte // the id's bytes, up to idMax
	idLong   bool

	hasID, hasMethod, hasResult, hasError bool
	id                                    []byte // the id as sent, when short and a scalar
}

const (
	keyMax = 16
	idMax  = 24
)

func (m *topMembers) feed(b []byte) {
	for _, c := range b {
		m.step(c)
	}
}

func (m *topMembers) step(c byte) {
	if m.inString {
		switch {
		case m.escape:
			m.escape = false
		case c == '\\':
			m.escape = true
		case c == '"':
			m.inString = false
			if m.depth == 1 && m.keyPos {
				m.keyPos = false
				return
			}
		}
		if m.depth == 1 {
			m.take(c)
		}
		return
	}
	switch c {
	case '"':
		m.inString = true
		if m.depth == 1 && m.keyPos {
			m.key, m.keyLong = m.key[:0], false
			return
		}
		if m.depth == 1 {
			m.take(c)
		}
	case '{', '[':
		if m.depth == 1 && m.valueOf == "id" {
			m.idLong = true // not a scalar: not an id of ours
		}
		m.depth++
		if m.depth == 1 {
			m.keyPos = true
		}
	case '}', ']':
		if m.depth == 1 {
			m.endValue()
		}
		m.depth--
	case ':':
		if m.depth == 1 && !m.keyLong {
			m.valueOf = string(m.key)
			switch m.valueOf {
			case "id":
				m.hasID, m.idBuf, m.idLong = true, m.idBuf[:0], false
			case "method":
				m.hasMethod = true
			case "result":
				m.hasResult = true
			case "error":
				m.hasError = true
			}
		}
	case ',':
		if m.depth == 1 {
			m.endValue()
			m.keyPos = true
		}
	case ' ', '\t', '\r', '\n':
	default:
		if m.depth == 1 {
			m.take(c)
		}
	}
}

// take adds a byte of the key or value being read at depth 1.
func (m *topMembers) take(c byte) {
	switch {
	case m.keyPos:
		if len(m.key) < keyMax {
			m.key = append(m.key, c)
		} else {
			m.keyLong = true
		}
	case m.valueOf == "id":
		if len(m.idBuf) < idMax {
			m.idBuf = append(m.idBuf, c)
		} else {
			m.idLong = true
		}
	}
}

func (m *topMembers) endValue() {
	if m.valueOf == "id" {
		m.id = nil
		if !m.idLong {
			m.id = bytes.Clone(m.idBuf)
		}
	}
	m.valueOf = ""
}

// responseID returns the integer id of a message that is a response (an id, no method, one of
// result and error); ok is false for anything else.
func (m *topMembers) responseID() (id int64, ok bool) {
	if !m.hasID || m.hasMethod || m.hasResult == m.hasError || m.id == nil {
		return 0, false
	}
	n, err := strconv.ParseInt(string(m.id), 10, 64)
	return n, err == nil
}

// skipLong reads the rest of a line already over the limit and discards it: parts are its
// pieces set aside so far (given back to the pool), and the unread bytes of lr.buf continue it.
func (lr *lineReader) skipLong(parts [][]byte) error {
	over := &oversized{TooLargeError: TooLargeError{Limit: lr.max}}
	for _, p := range parts {
		over.head.feed(p)
		over.Size += int64(len(p))
	}
	lr.release(parts)
	for {
		chunk := lr.buf[lr.start:lr.end]
		if i := bytes.IndexByte(chunk, '\n'); i >= 0 {
			over.head.feed(chunk[:i])
			over.Size += int64(i)
			lr.start += i + 1
			return over
		}
		over.head.feed(chunk)
		over.Size += int64(len(chunk))
		lr.start, lr.end = 0, 0
		if lr.err != nil {
			return lr.failure()
		}
		lr.fill()
	}
}

// oversizedMessage handles a message read through over the limit: a response to a pending
// tools/call is handed to the call as a TooLargeError; anything else is a protocol fault.
func (c *Client) oversizedMessage(over *oversized) error {
	if id, ok := over.head.responseID(); ok {
		c.mu.Lock()
		w, pending := c.pending[id]
		if pending && w.method == "tools/call" {
			delete(c.pending, id)
		}
		late := c.cancelled[id]
		delete(c.cancelled, id)
		c.mu.Unlock()
		if late {
			return nil // the answer to a call we cancelled, read through: nobody waits for it
		}
		if pending && w.method == "tools/call" {
			tl := over.TooLargeError
			w.ch <- response{tooLarge: &tl}
			return nil
		}
	}
	tl := over.TooLargeError
	return &tl
}
