package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/rs/zerolog"
)

const truncatedSuffix = " [truncated]"

var reserved = map[string]bool{
	FieldTime: true, FieldEvent: true, FieldTurn: true, FieldSession: true, FieldFace: true,
	FieldProvider: true, FieldCapability: true, FieldClass: true, FieldMode: true,
	FieldCode: true, FieldReason: true, FieldAuditID: true, FieldDurationMS: true,
	FieldStage: true, FieldStderrTail: true, FieldArgsSHA256: true, FieldArgs: true,
	FieldResult: true, FieldResultBytes: true, FieldBroker: true, FieldShareKey: true,
	FieldArgsTruncated: true, FieldResultTruncated: true, FieldStderrTruncated: true,
	zerolog.MessageFieldName: true, zerolog.LevelFieldName: true,
}

// record renders e as one JSON line ending in '\n'.
func (l *Logger) record(e Event, now time.Time) ([]byte, error) {
	if e.Name == "" {
		return nil, errors.New("event without a name")
	}
	red := l.red
	var buf bytes.Buffer
	buf.Grow(512)
	zl := zerolog.New(&buf)
	ev := zl.Log()
	var ts [40]byte
	ev.Str(FieldTime, string(now.UTC().AppendFormat(ts[:0], time.RFC3339Nano)))
	ev.Str(FieldEvent, bounded(red.String(e.Name)))
	if l.broker {
		ev.Bool(FieldBroker, true)
	} else {
		ev.Str(FieldTurn, bounded(l.turn))
		ev.Str(FieldSession, bounded(l.session))
	}
	if l.face != "" {
		ev.Str(FieldFace, l.face)
	}
	for _, f := range [...]struct{ k, v string }{
		{FieldProvider, e.Provider}, {FieldCapability, e.Capability}, {FieldClass, e.Class},
		{FieldMode, e.Mode}, {FieldCode, e.Code}, {FieldReason, e.Reason},
		{FieldAuditID, e.AuditID}, {FieldStage, e.Stage},
	} {
		if f.v != "" {
			ev.Str(f.k, bounded(red.String(f.v)))
		}
	}
	if l.broker && (e.Provider != "" || e.ShareKey != "") {
		ev.Str(FieldShareKey, bounded(red.String(e.ShareKey)))
	}
	if e.StderrTail != "" {
		tail, cut := tailUTF8(red.String(e.StderrTail), MaxValueBytes)
		ev.Str(FieldStderrTail, tail)
		if cut {
			ev.Bool(FieldStderrTruncated, true)
		}
	}
	if e.Duration != 0 {
		ev.Float64(FieldDurationMS, float64(e.Duration)/float64(time.Millisecond))
	}
	if len(e.Args) > 0 {
		sum := sha256.Sum256(e.Args)
		ev.Str(FieldArgsSHA256, hex.EncodeToString(sum[:]))
		args, cut := cutUTF8(redactArgs(red, e.Args), MaxValueBytes)
		ev.Str(FieldArgs, args)
		if cut {
			ev.Bool(FieldArgsTruncated, true)
		}
	}
	if e.Result != "" {
		res, cut := cutUTF8(red.String(e.Result), MaxValueBytes)
		ev.Str(FieldResult, res)
		if cut {
			ev.Bool(FieldResultTruncated, true)
		}
	}
	switch {
	case e.ResultBytes > 0:
		ev.Int(FieldResultBytes, e.ResultBytes)
	case e.Result != "":
		ev.Int(FieldResultBytes, len(e.Result))
	}
	if len(e.Fields) > 0 {
		keys := make([]string, 0, len(e.Fields))
		for k := range e.Fields {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if reserved[k] || k == "" {
				return nil, fmt.Errorf("field %q: %w", k, ErrReservedField)
			}
			var raw []byte
			if ss, ok := e.Fields[k].([]string); ok {
				// A list of strings (the family's 10,000 capabilities) is written directly:
				// the same bytes as redactValue and marshal, without the copy and reflection.
				raw = appendStrings(red, ss)
			} else {
				v, err := redactValue(red, e.Fields[k], true)
				if err != nil {
					return nil, fmt.Errorf("field %q: %w", k, err)
				}
				if raw, err = marshal(v); err != nil {
					return nil, fmt.Errorf("field %q: %w", k, err)
				}
			}
			ev.RawJSON(bounded(red.String(k)), raw)
		}
	}
	ev.Send()
	line := buf.Bytes()
	// zerolog drops events silently when its global level or sampling says
	// so; a missing record must be an error, never a silent gap.
	if len(line) < 3 || !bytes.HasSuffix(line, []byte("}\n")) || bytes.IndexByte(line[:len(line)-1], '\n') >= 0 {
		return nil, errors.New("zerolog did not render the record (global level disabled?)")
	}
	return line, nil
}

// redactArgs renders raw arguments as compact JSON with every string (keys
// too) redacted after decoding, so secrets written with JSON escapes are
// found; text that is not JSON is redacted as it is.
func redactArgs(red *Redactor, raw json.RawMessage) string {
	// Without escapes (and with valid UTF-8) every decoded string is a piece
	// of raw as it is, so when raw holds no secret neither does any value.
	if set := red.load(); set.empty() || (bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) && len(set.spans(raw)) == 0) {
		if json.Valid(raw) {
			var b bytes.Buffer
			if json.Compact(&b, raw) == nil {
				return b.String()
			}
		}
		return string(raw)
	}
	if json.Valid(raw) {
		if rv, err := redactJSON(red, raw, false); err == nil {
			if out, err := marshal(rv); err == nil {
				// The encoded form can join a secret across JSON syntax.
				return string(red.Bytes(out))
			}
		}
	}
	return string(red.Bytes(raw))
}

// redactValue returns v with every string in it redacted (map keys too),
// and cut to MaxValueBytes when bound is set. Values other than the plain
// JSON types go through a JSON round trip first.
func redactValue(red *Redactor, v any, bound bool) (any, error) {
	str := func(s string) string {
		s = red.String(s)
		if bound {
			s = bounded(s)
		}
		return s
	}
	switch x := v.(type) {
	case nil, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		return x, nil
	case string:
		return str(x), nil
	case json.Number:
		if r := red.String(string(x)); r != string(x) {
			return r, nil
		}
		return x, nil
	case []string:
		out := make([]string, len(x))
		for i, s := range x {
			out[i] = str(s)
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			r, err := redactValue(red, e, bound)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			r, err := redactValue(red, e, bound)
			if err != nil {
				return nil, err
			}
			out[str(k)] = r
		}
		return out, nil
	case json.RawMessage:
		return redactJSON(red, x, bound)
	default:
		raw, err := json.Marshal(x)
		if err != nil {
			return nil, err
		}
		return redactJSON(red, raw, bound)
	}
}

func redactJSON(red *Redactor, raw []byte, bound bool) (any, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return redactValue(red, v, bound)
}

// marshal encodes v compactly without HTML escapes, leaving zerolog's global
// InterfaceMarshalFunc alone.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// appendStrings is marshal(redactValue(red, ss, true)) for a list of strings: each redacted,
// bounded and written as encoding/json writes it without HTML escapes (nil too is []).
func appendStrings(red *Redactor, ss []string) []byte {
	n := 2
	for _, s := range ss {
		n += len(s) + 3
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, bounded(red.String(s)))
	}
	return append(b, ']')
}

// appendString writes s as a JSON string exactly as encoding/json does with HTML escaping
// off: '"' and '\\' escaped, controls as \b \f \n \r \t or \u00XX, each byte of invalid
// UTF-8 as \ufffd, and U+2028 and U+2029 as \u2028 and \u2029.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) && plain8(s[i:i+8]) {
			i += 8
			continue
		}
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// plain8 reports whether the 8 bytes of s are ASCII that a JSON string holds as they are: no
// control byte, '"' or '\\'.
func plain8(s string) bool {
	const (
		high  = 0x8080808080808080
		ones  = 0x0101010101010101
		lt20  = 0x60 * ones // + c has the high bit set iff c >= 0x20, for c < 0x80
		nzero = 0x7f * ones // + c has the high bit set iff c != 0, for c < 0x80
	)
	x := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	return x&high == 0 && ^(x+lt20)&high == 0 &&
		^((x^('"'*ones))+nzero)&high == 0 && ^((x^('\\'*ones))+nzero)&high == 0
}

// bounded cuts s to MaxValueBytes, marking the cut.
func bounded(s string) string {
	if c, cut := cutUTF8(s, MaxValueBytes); cut {
		return c + truncatedSuffix
	}
	return s
}

// cutUTF8 returns the longest prefix of s of at most n bytes that does not
// split a UTF-8 sequence, and whether anything was cut.
func cutUTF8(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	i := n
	for i > 0 && i > n-utf8.UTFMax && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i], true
}

// tailUTF8 is cutUTF8 from the end.
func tailUTF8(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	i := len(s) - n
	for i < len(s) && i < len(s)-n+utf8.UTFMax && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:], true
}
