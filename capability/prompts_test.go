package capability

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestLoadPrompts(t *testing.T) {
	t.Parallel()
	d1, d2 := t.TempDir(), t.TempDir()
	files := map[string]string{
		d1 + "/review.md":    "---\ndescription: Review a change\nauthor: ops # who\n---\nLook at the diff.\n",
		d1 + "/plain.md":     "No front matter.\n",
		d1 + "/quoted.md":    "---\ndescription: \"say \\\"hi\\\"\"\n---\nbody",
		d1 + "/unclosed.md":  "---\ndescription: x\nbody\n",
		d1 + "/list.md":      "---\ndescription: [a, b]\n---\n",
		d1 + "/bad name!.md": "x",
		d1 + "/notes.txt":    "not a prompt",
		d2 + "/review.md":    "a second review",
		d2 + "/single.md":    "---\ndescription: 'it''s'\n---\n",
		d2 + "/binary.md":    "\xff\xfe",
		d2 + "/nested.md/x":  "a directory named .md",
	}
	for p, c := range files {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ps, skipped := LoadPrompts([]string{d1, d2, d1 + "/missing"})
	var got []string
	for _, p := range ps {
		got = append(got, p.Name+"|"+p.Description+"|"+p.Text)
	}
	want := []string{"plain||No front matter.\n", "quoted|say \"hi\"|body", "review|Review a change|Look at the diff.\n", "single|it's|"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("prompts %q, want %q", got, want)
	}
	var reasons []string
	for _, s := range skipped {
		reasons = append(reasons, filepath.Base(s.Path)+": "+s.Reason)
	}
	wantSkips := []string{
		"bad name!.md: its name \"bad name!\" is not [A-Za-z0-9][A-Za-z0-9_.-]{0,127}",
		"list.md: front matter line 2: description: only plain or quoted one-line strings are read",
		"unclosed.md: front matter line 3 is not key: value",
		"binary.md: is not UTF-8 text",
		"review.md: its name \"review\" is taken by " + d1 + "/review.md",
		"missing: cannot be read: no such file or directory",
	}
	if !reflect.DeepEqual(reasons, wantSkips) {
		t.Errorf("skipped\n%q\nwant\n%q", reasons, wantSkips)
	}
}
