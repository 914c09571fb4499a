package audit

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// attack (SPEC 7): a benign provider echoes a secret of its environment in a result, as its
// own JSON encoder writes it. Every form a common encoder gives a string is redacted: as is,
// Go's (HTML-escaped or not), JavaScript's JSON.stringify, Python's json.dumps (non-ASCII as
// lower-case \u escapes), PHP's json_encode (\/ and \u escapes), Java's (upper-case hex), and
// Go's %q. Secrets shorter than MinSecretBytes are not (documented).
func TestAttackRedactEncodedForms(t *testing.T) {
	t.Parallel()
	secret := `pä"ss/w<rd>&1\x`
	red := NewRedactor([]string{secret})
	forms := map[string]string{
		"raw":         secret,
		"go":          `pä\"ss/w\u003crd\u003e\u00261\\x`,
		"go-nohtml":   `pä\"ss/w<rd>&1\\x`,
		"python":      `p\u00e4\"ss/w<rd>&1\\x`,
		"php":         `p\u00e4\"ss\/w<rd>&1\\x`,
		"php-unicode": `pä\"ss\/w<rd>&1\\x`,
		"java":        `p\u00E4\"ss/w<rd>&1\\x`,
		"go-quoted":   strings.Trim(strconv.Quote(secret), `"`),
	}
	for name, form := range forms {
		text := `{"content":[{"type":"text","text":"env: ` + form + ` end"}]}`
		if got := red.String(text); strings.Contains(got, form) || !strings.Contains(got, Redacted) {
			t.Errorf("%s form %s survives: %s", name, form, got)
		}
	}
	// The JSON of a result, redacted structurally, stays JSON and holds no form of it.
	raw := json.RawMessage(`{"content":[{"type":"text","text":"TOKEN=` + forms["go-nohtml"] + `"}],"k\/":"` + forms["php"] + `"}`)
	out := red.JSON(raw)
	var v any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("redacted JSON is not JSON: %v: %s", err, out)
	}
	b, _ := json.Marshal(v)
	if strings.Contains(string(out), "ss/w") || strings.Contains(string(out), `ss\/w`) || strings.Contains(string(b), "ss/w") {
		t.Errorf("the secret survives in a result: %s", out)
	}
	if short := NewRedactor([]string{"abcde"}); short.String("abcde") != "abcde" {
		t.Error("a value under MinSecretBytes is redacted, unlike what is documented")
	}
}
