package audit

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf16"
	"unicode/utf8"
)

// Redacted replaces every occurrence of a secret.
const Redacted = "[REDACTED]"

// MinSecretBytes is the shortest value treated as a secret: shorter values
// (flags, ports, "true") would redact ordinary text everywhere.
const MinSecretBytes = 6

// Redactor replaces every secret (values of 6 bytes or more) with "[REDACTED]".
// Besides the value itself it looks for the forms a value takes when it is
// JSON-encoded or Go-quoted (%q), since results and error messages carry both.
// A nil *Redactor redacts nothing. It is safe for concurrent use.
type Redactor struct {
	mu  sync.Mutex // serialises Add
	set atomic.Pointer[secretSet]
}

// secretSet is what a Redactor looks for; Add replaces it whole, so each use reads one set.
type secretSet struct {
	given   []string // the secrets as given (Add starts from them)
	secrets [][]byte // distinct, longest first
	strs    []string // the same, as strings (String looks for them without a conversion each)
	maxLen  int
}

// NewRedactor returns a redactor for the values of secrets that are at least
// MinSecretBytes long; shorter ones are ignored.
func NewRedactor(secrets []string) *Redactor {
	r := &Redactor{}
	r.set.Store(newSecretSet(secrets))
	return r
}

// Add makes r redact secrets too (those at least MinSecretBytes long), from now on: a
// provider's env_file is read when it starts, after the turn's redactor was made.
func (r *Redactor) Add(secrets ...string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	cur := r.set.Load()
	fresh := false
	for _, s := range secrets {
		if len(s) >= MinSecretBytes && (cur == nil || !slices.Contains(cur.given, s)) {
			fresh = true
		}
	}
	if !fresh {
		return
	}
	var all []string
	if cur != nil {
		all = slices.Clone(cur.given)
	}
	r.set.Store(newSecretSet(append(all, secrets...)))
}

// AddFrom makes r redact every secret o redacts, too (o nil: nothing).
func (r *Redactor) AddFrom(o *Redactor) {
	if set := o.load(); set != nil {
		r.Add(set.given...)
	}
}

func newSecretSet(secrets []string) *secretSet {
	r := &secretSet{}
	seen := map[string]bool{}
	add := func(s string) {
		if len(s) < MinSecretBytes || seen[s] {
			return
		}
		seen[s] = true
		r.secrets = append(r.secrets, []byte(s))
		r.maxLen = max(r.maxLen, len(s))
	}
	for _, s := range secrets {
		if len(s) >= MinSecretBytes && !slices.Contains(r.given, s) {
			r.given = append(r.given, s)
		}
	}
	for _, s := range secrets {
		if len(s) < MinSecretBytes {
			continue
		}
		add(s)
		for _, html := range []bool{false, true} {
			// Other encoders' forms too: non-ASCII as \u escapes in lower-case hex
			// (Python's json.dumps) or upper (Java's), and / as \/ (PHP's json_encode).
			j := jsonInner(s, html)
			for _, f := range []string{j, asciiEscaped(j, false), asciiEscaped(j, true)} {
				add(f)
				add(strings.ReplaceAll(f, "/", `\/`))
			}
		}
		if q := strconv.Quote(s); len(q) >= 2 {
			add(q[1 : len(q)-1])
		}
	}
	slices.SortStableFunc(r.secrets, func(a, b []byte) int { return len(b) - len(a) })
	for _, sec := range r.secrets {
		r.strs = append(r.strs, string(sec))
	}
	return r
}

// jsonInner is s as it appears inside a JSON string literal.
func jsonInner(s string, escapeHTML bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(s); err != nil {
		return s
	}
	out := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	return string(out[1 : len(out)-1])
}

// asciiEscaped is j, the inside of a JSON string literal, with every non-ASCII rune written as
// a \u escape (a UTF-16 pair above U+FFFF), each escape's hex in upper case when upper is set.
func asciiEscaped(j string, upper bool) string {
	digits := "0123456789abcdef"
	if upper {
		digits = "0123456789ABCDEF"
	}
	var b strings.Builder
	esc := func(u uint16) {
		b.WriteString(`\u`)
		for shift := 12; shift >= 0; shift -= 4 {
			b.WriteByte(digits[u>>shift&0xf])
		}
	}
	for i := 0; i < len(j); {
		switch c := j[i]; {
		case c == '\\' && i+5 < len(j) && j[i+1] == 'u':
			if u, err := strconv.ParseUint(j[i+2:i+6], 16, 16); err == nil {
				esc(uint16(u))
				i += 6
				continue
			}
			b.WriteString(j[i : i+2])
			i += 2
		case c == '\\' && i+1 < len(j):
			b.WriteString(j[i : i+2])
			i += 2
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			i++
		default:
			r, n := utf8.DecodeRuneInString(j[i:])
			for _, u := range utf16.Encode([]rune{r}) {
				esc(u)
			}
			i += n
		}
	}
	return b.String()
}

// load returns the secrets r looks for now (nil: none).
func (r *Redactor) load() *secretSet {
	if r == nil {
		return nil
	}
	return r.set.Load()
}

func (s *secretSet) empty() bool { return s == nil || len(s.secrets) == 0 }

// Empty reports whether r has no secret to redact, so that a caller may skip encoding a value
// only to redact it.
func (r *Redactor) Empty() bool { return r.load().empty() }

// String returns s with every secret replaced.
func (r *Redactor) String(s string) string {
	set := r.load()
	if set.empty() {
		return s
	}
	found := false
	for _, sec := range set.strs {
		if strings.Contains(s, sec) {
			found = true
			break
		}
	}
	if !found {
		return s
	}
	return string(set.redact([]byte(s)))
}

// JSON returns the JSON value raw with every secret in its strings (member names too)
// replaced: raw itself when no form of a secret occurs in it, otherwise decoded, redacted and
// encoded again (a replacement in the text could fall inside an escape or across its syntax).
func (r *Redactor) JSON(raw json.RawMessage) json.RawMessage {
	if set := r.load(); set.empty() || len(set.spans(raw)) == 0 {
		return raw
	}
	if v, err := redactJSON(r, raw, false); err == nil {
		if out, err := marshal(v); err == nil {
			return r.Bytes(out) // the encoded form can join a secret across JSON syntax
		}
	}
	return r.Bytes(raw)
}

// Bytes returns b with every secret replaced. When b holds no secret the
// result is b itself.
func (r *Redactor) Bytes(b []byte) []byte { return r.load().redact(b) }

func (r *secretSet) redact(b []byte) []byte {
	sp := r.spans(b)
	if len(sp) == 0 {
		return b
	}
	out := make([]byte, 0, len(b)+len(sp)*len(Redacted))
	return appendRedacted(out, b, 0, len(b), sp)
}

type span struct{ start, end int }

// spans returns where secrets occur in b, sorted, with overlapping or
// touching occurrences merged so that no fragment of a secret survives
// between two markers.
func (r *secretSet) spans(b []byte) []span {
	if r.empty() {
		return nil
	}
	var sp []span
	for _, sec := range r.secrets {
		for i := 0; ; {
			j := bytes.Index(b[i:], sec)
			if j < 0 {
				break
			}
			sp = append(sp, span{i + j, i + j + len(sec)})
			i += j + 1
		}
	}
	if len(sp) < 2 {
		return sp
	}
	slices.SortFunc(sp, func(a, b span) int { return a.start - b.start })
	merged := sp[:1]
	for _, s := range sp[1:] {
		last := &merged[len(merged)-1]
		if s.start <= last.end {
			last.end = max(last.end, s.end)
			continue
		}
		merged = append(merged, s)
	}
	return merged
}

// appendRedacted appends b[from:to] to out with the parts covered by sp
// replaced. A span that began before from was already marked by an earlier
// call (see RedactingWriter), so it gets no second marker. Spans must not
// cross to.
func appendRedacted(out, b []byte, from, to int, sp []span) []byte {
	pos := from
	for _, s := range sp {
		if s.end <= from || s.start >= to {
			continue
		}
		if s.start >= from {
			out = append(out, b[pos:s.start]...)
			out = append(out, Redacted...)
		}
		pos = s.end
	}
	return append(out, b[pos:to]...)
}

// Writer returns a writer that passes what it is given on to w with secrets
// replaced, including a secret split across several Write calls. To do that
// it holds back up to len(longest secret)-1 bytes; the value returned is a
// *RedactingWriter, whose Flush passes the held-back bytes on.
func (r *Redactor) Writer(w io.Writer) io.Writer { return r.NewWriter(w) }

// NewWriter is Writer with the concrete type, for callers that must Flush.
func (r *Redactor) NewWriter(w io.Writer) *RedactingWriter {
	return &RedactingWriter{r: r, w: w}
}

// RedactingWriter is the writer made by Redactor.Writer. Its output, once
// flushed, is what Redactor.Bytes makes of everything written, however the
// input was split. It is safe for concurrent use.
type RedactingWriter struct {
	mu   sync.Mutex
	r    *Redactor
	w    io.Writer
	hist int    // how many bytes at the start of buf were already passed on
	buf  []byte // the last bytes passed on (up to maxLen), then the held-back bytes
	out  []byte
}

// Write accepts all of p; an error is one from the underlying writer.
func (rw *RedactingWriter) Write(p []byte) (int, error) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	set := rw.r.load()
	if set.empty() {
		return rw.w.Write(p)
	}
	rw.buf = append(rw.buf, p...)
	// Anything starting before e cannot be the start of a secret that is
	// still incomplete.
	e := max(len(rw.buf)-(set.maxLen-1), rw.hist)
	if err := rw.emit(set, e); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush passes the held-back bytes on. A secret split across a Flush is not
// recognised, so flush only where output must be seen (the end of an answer).
func (rw *RedactingWriter) Flush() error {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	set := rw.r.load()
	if set.empty() {
		return nil
	}
	return rw.emit(set, len(rw.buf))
}

// emit passes buf[hist:e] on, or further when a secret straddles e.
func (rw *RedactingWriter) emit(set *secretSet, e int) error {
	sp := set.spans(rw.buf)
	for _, s := range sp {
		if s.start < e && s.end > e {
			e = s.end
		}
	}
	if e > rw.hist {
		rw.out = appendRedacted(rw.out[:0], rw.buf, rw.hist, e, sp)
		if _, err := rw.w.Write(rw.out); err != nil {
			return err
		}
	}
	// Keep maxLen bytes already passed on, so that a secret continuing or
	// touching one already marked merges with it (no second marker).
	keep := max(e-set.maxLen, 0)
	n := copy(rw.buf, rw.buf[keep:])
	rw.buf = rw.buf[:n]
	rw.hist = e - keep
	return nil
}
