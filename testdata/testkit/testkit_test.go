package testkit

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	t.Parallel()
	rec := map[string]any{"event": "capability_invoked", "code": "ok", "phase": "outcome",
		"reason": "a, b=c", "count": float64(3), "args": map[string]any{"k": "v"}}
	for _, c := range []struct {
		spec string
		want bool
	}{
		{"capability_invoked", true},
		{"capability_denied", false},
		{"capability_invoked,code=ok,phase=outcome", true},
		{"capability_invoked,code=refused", false},
		{"capability_invoked,missing=x", false},
		{"capability_invoked,count=3", true},           // not a string: compact JSON
		{`capability_invoked,args={"k":"v"}`, true},    // the value's commas and braces are its own
		{"capability_invoked,reason=a, b=c", true},     // " b" is no key: the value goes on
		{"capability_invoked,code=ok,reason=a", false}, // a value is matched whole
	} {
		if got := Match(rec, c.spec); got != c.want {
			t.Errorf("Match(%s) = %v, want %v", c.spec, got, c.want)
		}
	}
}

func TestRecords(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := `{"time":"t","event":"turn_started","turn":"t1","session":"s"}` + "\n"
	if recs, err := Records(write("good", good+good)); err != nil || len(recs) != 2 || recs[1]["turn"] != "t1" {
		t.Errorf("good: %v, %v", recs, err)
	}
	for name, text := range map[string]string{
		"torn":       good + `{"time":"t","ev`,
		"no session": `{"time":"t","event":"e","turn":"t1"}`,
	} {
		if _, err := Records(write(strings.ReplaceAll(name, " ", "-"), text)); err == nil || !strings.HasPrefix(err.Error(), "audit: ") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Records(filepath.Join(dir, "absent")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("absent: %v", err)
	}
}
