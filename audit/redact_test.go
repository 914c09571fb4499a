package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

func TestRedactorString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		secrets []string
		in      string
		want    string
	}{
		{"nil secrets", nil, "token abcdef", "token abcdef"},
		{"short values are not secrets", []string{"12345", "true"}, "port 12345 is true", "port 12345 is true"},
		{"six bytes is a secret", []string{"abcdef"}, "x abcdef y", "x [REDACTED] y"},
		{"every occurrence", []string{"abcdef"}, "abcdef-abcdef", "[REDACTED]-[REDACTED]"},
		{"touching occurrences merge", []string{"abcdef"}, "abcdefabcdef", "[REDACTED]"},
		{"self-overlapping", []string{"aaaaaa"}, "baaaaaaaab", "b[REDACTED]b"},
		{"overlapping secrets leave no fragment", []string{"xxabcd", "abcdefgh"}, "1xxabcdefgh2", "1[REDACTED]2"},
		{"longest wins at the same start", []string{"secret", "secret-longer"}, "a secret-longer b", "a [REDACTED] b"},
		{"empty secret ignored", []string{""}, "abc", "abc"},
		{"duplicates", []string{"abcdef", "abcdef"}, "abcdef", "[REDACTED]"},
		{"json-escaped form", []string{`pa"ss\word`}, `{"p":"pa\"ss\\word"}`, `{"p":"[REDACTED]"}`},
		{"json html-escaped form", []string{"<tok&en>"}, `{"p":"\u003ctok\u0026en\u003e"}`, `{"p":"[REDACTED]"}`},
		{"go-quoted form", []string{"line1\nline2"}, `bad value "line1\nline2"`, `bad value "[REDACTED]"`},
		{"unicode", []string{"pässwörd"}, "is pässwörd!", "is [REDACTED]!"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := NewRedactor(tt.secrets)
			if got := r.String(tt.in); got != tt.want {
				t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got := string(r.Bytes([]byte(tt.in))); got != tt.want {
				t.Errorf("Bytes(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestNilRedactor(t *testing.T) {
	t.Parallel()
	var r *Redactor
	if got := r.String("abcdefgh"); got != "abcdefgh" {
		t.Errorf("nil String = %q", got)
	}
	var b bytes.Buffer
	w := r.Writer(&b)
	fmt.Fprint(w, "abcdefgh")
	if b.String() != "abcdefgh" {
		t.Errorf("nil Writer passed %q", b.String())
	}
}

// writeChunks feeds text to a RedactingWriter cut at cuts and flushes.
func writeChunks(t testing.TB, r *Redactor, text string, cuts []int) string {
	t.Helper()
	var out bytes.Buffer
	w := r.NewWriter(&out)
	prev := 0
	for _, c := range append(cuts, len(text)) {
		n, err := w.Write([]byte(text[prev:c]))
		if err != nil || n != c-prev {
			t.Fatalf("Write = %d, %v; want %d, nil", n, err, c-prev)
		}
		prev = c
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

var writerCases = []struct {
	secrets []string
	text    string
}{
	{[]string{"abcdef"}, "xxabcdefyy abcdef"},
	{[]string{"abcdef"}, "abcdefabcdefabcdef"},
	{[]string{"aaaaaa"}, "aaaaaaaaaaaaaaaaabaaaaaa"},
	{[]string{"xxabcd", "abcdefgh"}, "1xxabcdefgh2xxabcd"},
	{[]string{"secret", "secret-longer"}, "secret-longersecret-long secret"},
	{[]string{"canary-123456"}, "no secret here at all, just text that is long enough"},
	{[]string{"abcdef", "defghijk"}, "abcdefghijkabcdef"},
}

// Every way of cutting the text into up to three writes gives exactly what
// Bytes gives for the whole text.
func TestWriterSplitAcrossWrites(t *testing.T) {
	t.Parallel()
	for _, tc := range writerCases {
		r := NewRedactor(tc.secrets)
		want := r.String(tc.text)
		for i := 0; i <= len(tc.text); i++ {
			for j := i; j <= len(tc.text); j++ {
				if got := writeChunks(t, r, tc.text, []int{i, j}); got != want {
					t.Fatalf("secrets %q text %q cut at %d,%d: got %q, want %q", tc.secrets, tc.text, i, j, got, want)
				}
			}
		}
		// Byte by byte.
		cuts := make([]int, len(tc.text))
		for i := range cuts {
			cuts[i] = i
		}
		if got := writeChunks(t, r, tc.text, cuts); got != want {
			t.Fatalf("byte by byte %q: got %q, want %q", tc.text, got, want)
		}
	}
}

func TestWriterHoldsBackOnlyAPossibleSecret(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	w := NewRedactor([]string{"abcdef"}).NewWriter(&out)
	fmt.Fprint(w, "hello abc")
	// Only the last len(secret)-1 bytes can begin a secret still incomplete.
	if got := out.String(); got != "hell" {
		t.Fatalf("passed on %q before Flush, want %q", got, "hell")
	}
	fmt.Fprint(w, "def!")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "hello [REDACTED]!" {
		t.Fatalf("got %q", got)
	}
}

func TestWriterConcurrent(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	w := NewRedactor([]string{"abcdef"}).NewWriter(&out)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				fmt.Fprint(w, "abcdef\n")
			}
		})
	}
	wg.Wait()
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), strings.Repeat("[REDACTED]\n", 800); got != want {
		t.Fatalf("got %d bytes, want %d", len(got), len(want))
	}
}

// JSON and %q renderings of a secret are redacted so that nothing decoded
// from the output holds the secret.
func TestRedactorEncodedForms(t *testing.T) {
	t.Parallel()
	for _, secret := range []string{`quote"and\back`, "tab\tand\nnewline", "<html&amp>", "ünïcode-väl", "\u2028sep-value"} {
		r := NewRedactor([]string{secret})
		js, _ := json.Marshal(map[string]string{"v": secret})
		var got map[string]string
		if err := json.Unmarshal(r.Bytes(js), &got); err != nil {
			t.Fatalf("%q: redacted JSON does not parse: %v", secret, err)
		}
		if strings.Contains(got["v"], secret) {
			t.Errorf("%q survives JSON encoding: %q", secret, got["v"])
		}
		if q := r.String(fmt.Sprintf("error: %q", secret)); strings.Contains(q, secret) || !strings.Contains(q, Redacted) {
			t.Errorf("%q survives %%q: %q", secret, q)
		}
	}
}

func FuzzWriter(f *testing.F) {
	for _, tc := range writerCases {
		f.Add(tc.secrets[0], tc.text, uint64(len(tc.text)))
	}
	f.Fuzz(func(t *testing.T, secret, text string, seed uint64) {
		r := NewRedactor([]string{secret, secret + "tail", "zz" + secret})
		rng := rand.New(rand.NewPCG(seed, 1))
		var cuts []int
		for i := 1; i < len(text); i++ {
			if rng.IntN(4) == 0 {
				cuts = append(cuts, i)
			}
		}
		got := writeChunks(t, r, text, cuts)
		if want := r.String(text); got != want {
			t.Fatalf("cuts %v: got %q, want %q", cuts, got, want)
		}
		// Markers are hidden first: text around one may happen to spell a secret.
		hidden := strings.ReplaceAll(got, Redacted, "\x00")
		if len(secret) >= MinSecretBytes && !strings.Contains(secret, "\x00") && strings.Contains(hidden, secret) {
			t.Fatalf("secret %q survives in %q", secret, got)
		}
	})
}

func BenchmarkRedactString(b *testing.B) {
	r := NewRedactor([]string{"ghp_0123456789abcdef", "postgres://user:pw@db", "sk-live-abcdef"})
	s := strings.Repeat("an ordinary line of provider output with nothing to hide\n", 20)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		_ = r.String(s)
	}
}

// Add makes a redactor (and a writer made from it before) redact more from then on: a
// provider's env_file is read when the provider starts, after the turn's redactor was made.
func TestRedactorAdd(t *testing.T) {
	t.Parallel()
	var none *Redactor
	none.Add("ignored-secret") // a nil redactor stays one
	r := NewRedactor([]string{"first-secret"})
	var out bytes.Buffer
	w := r.NewWriter(&out)
	r.Add("short", "later-secret", "first-secret")
	if got := r.String("first-secret later-secret short"); got != "[REDACTED] [REDACTED] short" {
		t.Errorf("String = %q", got)
	}
	if r.Empty() || NewRedactor(nil).Empty() != true {
		t.Error("Empty")
	}
	e := NewRedactor(nil)
	e.Add("was-empty")
	if e.Empty() || e.String("x was-empty") != "x [REDACTED]" {
		t.Errorf("Add to an empty redactor: %q", e.String("x was-empty"))
	}
	_, _ = w.Write([]byte("a later-sec"))
	_, _ = w.Write([]byte("ret b"))
	_ = w.Flush()
	if out.String() != "a [REDACTED] b" {
		t.Errorf("writer = %q", out.String())
	}
	// Concurrent Add and use: -race keeps it honest.
	done := make(chan bool)
	go func() {
		for i := range 50 {
			r.Add(fmt.Sprintf("added-%03d", i))
		}
		close(done)
	}()
	for range 50 {
		_ = r.String("added-001 first-secret")
	}
	<-done
	if got := r.String("added-049"); got != Redacted {
		t.Errorf("after concurrent Adds: %q", got)
	}
}
