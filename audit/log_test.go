package audit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var testClock = time.Date(2026, 3, 4, 5, 6, 7, 891011121, time.FixedZone("X", 3600))

func newTestLogger(t *testing.T, red *Redactor) (*Logger, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path, "turn-1", "sess-1", red)
	if err != nil {
		t.Fatal(err)
	}
	l.now = func() time.Time { return testClock }
	return l, path
}

// readRecords parses every line of path, failing on any malformed one.
func readRecords(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		t.Fatalf("file does not end with a newline: %q", tail(data))
	}
	var recs []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil || dec.More() {
			t.Fatalf("malformed line %d (%v): %.200q", len(recs)+1, err, sc.Text())
		}
		recs = append(recs, m)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return recs
}

func tail(b []byte) []byte { return b[max(0, len(b)-80):] }

func TestLogWritesEveryFieldTyped(t *testing.T) {
	t.Parallel()
	args := json.RawMessage(`{ "title": "x",  "n": 3 }`)
	sum := sha256.Sum256(args)
	tests := []struct {
		name string
		ev   Event
		want map[string]any // besides time, turn and session
	}{
		{
			name: "name only",
			ev:   Event{Name: EventTurnStarted},
			want: map[string]any{FieldEvent: EventTurnStarted},
		},
		{
			name: "every field",
			ev: Event{
				Name: EventInvoked, Provider: "fake", Capability: "fake/echo", Class: "READ", Mode: "index",
				Code: "ok", Reason: "because", AuditID: "abc", Stage: "call", StderrTail: "oops\n",
				Duration: 1500 * time.Microsecond, Args: args, Result: "hello", ResultBytes: 5,
				Fields: map[string]any{
					"isolated":  true,
					"providers": []string{"a", "b"},
					"family":    map[string]any{"name": "fam", "count": 2},
					"weird key": nil,
				},
			},
			want: map[string]any{
				FieldEvent: EventInvoked, FieldProvider: "fake", FieldCapability: "fake/echo", FieldClass: "READ",
				FieldMode: "index", FieldCode: "ok", FieldReason: "because", FieldAuditID: "abc", FieldStage: "call",
				FieldStderrTail: "oops\n", FieldDurationMS: json.Number("1.5"),
				FieldArgsSHA256: hex.EncodeToString(sum[:]), FieldArgs: `{"title":"x","n":3}`,
				FieldResult: "hello", FieldResultBytes: json.Number("5"),
				"isolated": true, "providers": []any{"a", "b"},
				"family":    map[string]any{"name": "fam", "count": json.Number("2")},
				"weird key": nil,
			},
		},
		{
			name: "result_bytes from result",
			ev:   Event{Name: EventInvoked, Result: "héllo"},
			want: map[string]any{FieldEvent: EventInvoked, FieldResult: "héllo", FieldResultBytes: json.Number("6")},
		},
		{
			name: "result_bytes without result",
			ev:   Event{Name: EventInvoked, ResultBytes: 42},
			want: map[string]any{FieldEvent: EventInvoked, FieldResultBytes: json.Number("42")},
		},
		{
			name: "args that are not JSON",
			ev:   Event{Name: EventRefused, Code: "invalid-arguments", Args: json.RawMessage(`{"a":`)},
			want: map[string]any{
				FieldEvent: EventRefused, FieldCode: "invalid-arguments", FieldArgs: `{"a":`,
				FieldArgsSHA256: sha256Hex(`{"a":`),
			},
		},
		{
			name: "negative duration kept",
			ev:   Event{Name: EventTurnEnded, Duration: -2 * time.Millisecond},
			want: map[string]any{FieldEvent: EventTurnEnded, FieldDurationMS: json.Number("-2")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l, path := newTestLogger(t, nil)
			if err := l.Log(tt.ev); err != nil {
				t.Fatal(err)
			}
			recs := readRecords(t, path)
			if len(recs) != 1 {
				t.Fatalf("%d records, want 1", len(recs))
			}
			got := recs[0]
			ts, ok := got[FieldTime].(string)
			if !ok || !strings.HasSuffix(ts, "Z") {
				t.Fatalf("time = %#v, want an RFC 3339 UTC string", got[FieldTime])
			}
			if pt, err := time.Parse(time.RFC3339Nano, ts); err != nil || !pt.Equal(testClock) {
				t.Fatalf("time %q parses to %v (%v), want %v", ts, pt, err, testClock)
			}
			want := map[string]any{FieldTime: ts, FieldTurn: "turn-1", FieldSession: "sess-1"}
			for k, v := range tt.want {
				want[k] = v
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("record\n got %#v\nwant %#v", got, want)
			}
		})
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// strs collects every string in a decoded record, keys included.
func strs(v any, out *[]string) {
	switch x := v.(type) {
	case string:
		*out = append(*out, x)
	case json.Number:
		*out = append(*out, string(x))
	case []any:
		for _, e := range x {
			strs(e, out)
		}
	case map[string]any:
		for k, e := range x {
			*out = append(*out, k)
			strs(e, out)
		}
	}
}

type withSecret struct {
	Token string `json:"token"`
	Depth []any  `json:"depth"`
}

func TestLogRedactsEveryField(t *testing.T) {
	t.Parallel()
	const canary = "CANARY-s3cr3t-9f8e7d"
	const quoted = `q"uo\te<&>d-secret`
	red := NewRedactor([]string{canary, quoted, "short"})
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path, "turn-"+canary, "sess-"+canary, red)
	if err != nil {
		t.Fatal(err)
	}
	escaped := strings.ReplaceAll(canary, "C", `\u0043`) // the same string, JSON-escaped
	origArgs := json.RawMessage(`{"key":"` + escaped + `","` + canary + `":[1,"x` + canary + `"],"q":` + mustJSON(quoted) + `}`)
	ev := Event{
		Name: EventProviderFailed, Provider: canary, Capability: canary + "/x", Class: canary,
		Mode: canary, Code: canary, Reason: "error: \"" + canary + "\"", AuditID: canary,
		Stage: canary, StderrTail: "line\n" + canary + "\n", Args: origArgs,
		Result: "result " + canary + " and " + quoted,
		Fields: map[string]any{
			"list":   []string{canary},
			"nested": map[string]any{canary: []any{map[string]any{"deep": canary}}},
			"struct": withSecret{Token: canary, Depth: []any{quoted}},
			"raw":    json.RawMessage(`{"t":"` + escaped + `"}`),
			"number": json.Number("1234567890"),
		},
	}
	if err := l.Log(ev); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(canary)) || bytes.Contains(data, []byte("s3cr3t")) {
		t.Fatalf("canary in the file: %s", data)
	}
	recs := readRecords(t, path)
	var all []string
	strs(recs[0], &all)
	for _, s := range all {
		if strings.Contains(s, canary) || strings.Contains(s, quoted) {
			t.Errorf("secret survives in %q", s)
		}
	}
	if got := recs[0][FieldArgsSHA256]; got != sha256Hex(string(origArgs)) {
		t.Errorf("args_sha256 = %v, want the hash of the original arguments", got)
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(recs[0][FieldArgs].(string)), &args); err != nil {
		t.Fatalf("redacted args are not JSON: %v", err)
	}
	if args["key"] != Redacted || args[Redacted] == nil {
		t.Errorf("args = %v, want key and the secret key redacted", args)
	}
	// Values shorter than MinSecretBytes are not secrets, and numbers that are
	// not secrets stay numbers.
	if n := recs[0]["number"]; n != json.Number("1234567890") {
		t.Errorf("number = %#v", n)
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestLogBounds(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-value-abcdef"
	red := NewRedactor([]string{secret})
	big := strings.Repeat("x", MaxValueBytes-6) + secret + strings.Repeat("y", 10000)
	bigArgs := json.RawMessage(mustJSON(map[string]string{"a": big}))
	l, path := newTestLogger(t, red)
	err := l.Log(Event{
		Name: EventProviderFailed, Reason: big, Result: big, Args: bigArgs,
		StderrTail: strings.Repeat("é", 5000) + "LAST",
		Fields:     map[string]any{"f": []any{big}},
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := readRecords(t, path)[0]
	check := func(name string, v any, max int) string {
		s, ok := v.(string)
		if !ok {
			t.Fatalf("%s = %#v, want a string", name, v)
		}
		if len(s) > max {
			t.Errorf("%s is %d bytes, want at most %d", name, len(s), max)
		}
		// Redaction came before the cut: no prefix of the secret is left.
		if strings.Contains(s, secret[:6]) {
			t.Errorf("%s holds part of the secret", name)
		}
		return s
	}
	check(FieldReason, rec[FieldReason], MaxValueBytes+len(truncatedSuffix))
	check("f[0]", rec["f"].([]any)[0], MaxValueBytes+len(truncatedSuffix))
	check(FieldResult, rec[FieldResult], MaxValueBytes)
	check(FieldArgs, rec[FieldArgs], MaxValueBytes)
	st := check(FieldStderrTail, rec[FieldStderrTail], MaxValueBytes)
	if !strings.HasSuffix(st, "éLAST") || !strings.HasPrefix(st, "é") {
		t.Errorf("stderr tail is not the tail cut on a character boundary: %q...%q", st[:4], st[len(st)-8:])
	}
	for _, f := range []string{FieldResultTruncated, FieldArgsTruncated, FieldStderrTruncated} {
		if rec[f] != true {
			t.Errorf("%s = %#v, want true", f, rec[f])
		}
	}
	if rec[FieldResultBytes] != json.Number(itoa(len(big))) {
		t.Errorf("result_bytes = %v, want %d", rec[FieldResultBytes], len(big))
	}
	if rec[FieldArgsSHA256] != sha256Hex(string(bigArgs)) {
		t.Errorf("args_sha256 is not the hash of the original")
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestCutUTF8(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s        string
		n        int
		head     string
		tailWant string
		cut      bool
	}{
		{"abc", 3, "abc", "abc", false},
		{"abcd", 3, "abc", "bcd", true},
		{"aé", 2, "a", "é", true},
		{"éa", 2, "é", "a", true},
		{"日本", 4, "日", "本", true},
		{"日本", 2, "", "", true},
		{"\xff\xfe\xfd", 2, "\xff\xfe", "\xfe\xfd", true},
	}
	for _, tt := range tests {
		h, cut := cutUTF8(tt.s, tt.n)
		if h != tt.head || cut != tt.cut {
			t.Errorf("cutUTF8(%q, %d) = %q, %v; want %q, %v", tt.s, tt.n, h, cut, tt.head, tt.cut)
		}
		tl, cut := tailUTF8(tt.s, tt.n)
		if tl != tt.tailWant || cut != tt.cut {
			t.Errorf("tailUTF8(%q, %d) = %q, %v; want %q, %v", tt.s, tt.n, tl, cut, tt.tailWant, tt.cut)
		}
	}
}

func TestLogRejectsBadEvents(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ev   Event
		is   error
	}{
		{"no name", Event{}, nil},
		{"reserved field", Event{Name: EventTurnStarted, Fields: map[string]any{FieldEvent: "x"}}, ErrReservedField},
		{"reserved extra", Event{Name: EventTurnStarted, Fields: map[string]any{FieldArgsTruncated: false}}, ErrReservedField},
		{"empty key", Event{Name: EventTurnStarted, Fields: map[string]any{"": 1}}, ErrReservedField},
		{"unencodable", Event{Name: EventTurnStarted, Fields: map[string]any{"c": make(chan int)}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l, path := newTestLogger(t, nil)
			err := l.Log(tt.ev)
			if err == nil {
				t.Fatal("Log accepted the event")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			if !strings.HasPrefix(err.Error(), "audit: ") {
				t.Errorf("error %q lacks the package phrase", err)
			}
			if recs := readRecords(t, path); len(recs) != 0 {
				t.Errorf("a refused event left %d records", len(recs))
			}
		})
	}
}

func TestLogConcurrentInProcess(t *testing.T) {
	t.Parallel()
	l, path := newTestLogger(t, nil)
	const workers, each = 8, 100
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				if err := l.Log(Event{Name: EventDescribed, Result: strings.Repeat("z", 6000), Fields: map[string]any{"w": w, "i": i}}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := len(readRecords(t, path)); n != workers*each {
		t.Fatalf("%d records, want %d", n, workers*each)
	}
}

func TestOpenFailures(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, want string
	}{
		{"empty path", "", "empty path"},
		{"missing directory", filepath.Join(dir, "nope", "audit.jsonl"), "no such file or directory"},
		{"a directory", dir, "is a directory"},
		{"a fifo without reader", fifo, "not a regular file"},
		{"a device", "/dev/null", "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l, err := Open(tt.path, "t", "s", nil)
			if err == nil {
				t.Fatalf("Open(%q) = %v, want an error", tt.path, l)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "audit: ") {
				t.Errorf("Open(%q): %v, want %q", tt.path, err, tt.want)
			}
		})
	}
}

func TestOpenCreates0600(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	if _, err := Open(path, "t", "s", nil); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 || fi.Size() != 0 {
		t.Errorf("created %v, %d bytes; want -rw------- and empty", fi.Mode(), fi.Size())
	}
}

func TestLogAfterDirectoryRemoved(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "d")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := Open(filepath.Join(dir, "audit.jsonl"), "t", "s", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := l.Log(Event{Name: EventTurnStarted}); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("Log = %v, want a missing-file error", err)
	}
}

// A line torn by a writer that died mid-write stays apart from the next record.
func TestLogRepairsTornTail(t *testing.T) {
	t.Parallel()
	l, path := newTestLogger(t, nil)
	if err := os.WriteFile(path, []byte(`{"event":"tor`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := l.Log(Event{Name: EventTurnEnded}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 2 || lines[0] != `{"event":"tor` {
		t.Fatalf("lines %q", lines)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &m); err != nil || m[FieldEvent] != EventTurnEnded {
		t.Fatalf("record after a torn line: %q (%v)", lines[1], err)
	}
}

func TestNewAuditID(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 1000 {
		id := NewAuditID()
		if len(id) != 26 || strings.Trim(id, "abcdefghijklmnopqrstuvwxyz234567") != "" {
			t.Fatalf("id %q is not 26 lower-case base32 characters", id)
		}
		if seen[id] {
			t.Fatalf("id %q repeated", id)
		}
		seen[id] = true
	}
}

func TestEventNamesDistinct(t *testing.T) {
	t.Parallel()
	names := []string{EventTurnStarted, EventProviderRegistered, EventProviderRejected, EventFamilySelected,
		EventIndexExposed, EventDescribed, EventInvoked, EventRefused, EventProviderFailed, EventToolRejected,
		EventRuntimeWithoutGateway, EventInterrupted, EventTurnEnded, EventEnvelopeUnmatched, EventKeeperStarted,
		EventKeeperEnded, EventKeeperUnavailable}
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	if len(slices.Compact(sorted)) != len(names) {
		t.Fatalf("duplicate event names: %v", names)
	}
}

func TestRedactArgs(t *testing.T) {
	t.Parallel()
	red := NewRedactor([]string{"abcdef123", "777777"})
	tests := []struct{ in, want string }{
		{`{ "a" : 1 }`, `{"a":1}`},
		{`{"a":"abcdef123"}`, `{"a":"[REDACTED]"}`},
		{`{"a":"x\u0061bcdef123y"}`, `{"a":"x[REDACTED]y"}`},
		{`{"abcdef123":true}`, `{"[REDACTED]":true}`},
		{`{"n":777777}`, `{"n":"[REDACTED]"}`},
		{`{"n":7777770}`, `{"n":"[REDACTED]0"}`},
		{`["<&>", "\n"]`, `["<&>","\n"]`},
		{`{"a":"abcdef123"`, `{"a":"[REDACTED]"`},
		{`not json abcdef123`, `not json [REDACTED]`},
	}
	for _, tt := range tests {
		if got := redactArgs(red, json.RawMessage(tt.in)); got != tt.want {
			t.Errorf("redactArgs(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
	if got := redactArgs(nil, json.RawMessage(`{ "a" : 1 }`)); got != `{"a":1}` {
		t.Errorf("without secrets = %s", got)
	}
}
