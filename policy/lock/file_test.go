package lock

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sample is a lock of two providers of two tools each.
func sample(*testing.T) *File {
	f := &File{Version: Version}
	for _, id := range []string{"mem", "echo"} {
		p := Provider{ID: id, Command: []string{"/usr/bin/node", id + ".js"}, Server: id + "-server", Time: "2026-12-07T02:00:00Z"}
		for _, name := range []string{"b", "a"} {
			def, err := Definition(Def{Name: name, Description: "Tool " + name, InputSchema: []byte(`{"type":"object"}`)})
			if err != nil {
				panic(err) // a constant definition
			}
			p.Tools = append(p.Tools, Tool{Name: name, Definition: def, SHA256: Sum([]byte(def))})
		}
		f.Put(p)
	}
	return f
}

func TestWriteRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	f := sample(t)
	if err := Write(path, f); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", st.Mode(), err)
	}
	got, sum, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Providers[0].ID != "echo" || got.Provider("mem").Tool("a") == nil || got.Provider("mem").Tool("c") != nil {
		t.Errorf("read back %+v", got)
	}
	data, _ := os.ReadFile(path)
	if sum != Sum(data) {
		t.Error("the lock's hash is not its bytes'")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("a temporary file was left: %v", ents)
	}
	if _, _, err := Read(filepath.Join(dir, "none.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	if err := os.Chmod(path, 0o620); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Read(path); err == nil || !strings.Contains(err.Error(), "group- or world-writable") {
		t.Errorf("group-writable: %v", err)
	}
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	good := string(sample(t).Marshal())
	if _, err := Parse([]byte(good)); err != nil {
		t.Fatalf("the sample: %v", err)
	}
	def := sample(t).Providers[0].Tools[0].Definition
	tests := []struct{ name, text, want string }{
		{"truncated", good[:len(good)/2], "not valid JSON"},
		{"empty", ``, "not valid JSON"},
		{"array", `[]`, ""},
		{"wrong type", strings.Replace(good, `"version": 1`, `"version": "1"`, 1), "version"},
		{"tools a string", `{"version":1,"providers":[{"id":"a","command":["/x"],"server":"","time":"","tools":"x"}]}`, "tools"},
		{"unknown key", strings.Replace(good, `"version": 1`, `"version": 1, "extra": 2`, 1), "extra"},
		{"version", strings.Replace(good, `"version": 1`, `"version": 2`, 1), "version 2"},
		{"hash", strings.Replace(good, Sum([]byte(def)), strings.Repeat("0", 64), 1), "does not hash"},
		{"not canonical", `{"version":1,"providers":[{"id":"a","command":["/x"],"server":"","time":"","tools":[{"name":"a","definition":"{\"name\": \"a\"}","sha256":"` + Sum([]byte(`{"name": "a"}`)) + `"}]}]}`, "canonical"},
		{"another name", `{"version":1,"providers":[{"id":"a","command":["/x"],"server":"","time":"","tools":[{"name":"b","definition":"{\"inputSchema\":{},\"name\":\"a\"}","sha256":"` + Sum([]byte(`{"inputSchema":{},"name":"a"}`)) + `"}]}]}`, "another tool"},
		{"unsorted", strings.Replace(strings.Replace(good, `"id": "echo"`, `"id": "zz"`, 1), `"id": "mem"`, `"id": "aa"`, 1), "sorted"},
		{"relative command", `{"version":1,"providers":[{"id":"a","command":["node"],"server":"","time":"","tools":[]}]}`, "absolute"},
	}
	for _, tc := range tests {
		f, err := Parse([]byte(tc.text))
		if err == nil {
			err = f.Verify()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

func TestCompare(t *testing.T) {
	t.Parallel()
	p := sample(t).Provider("mem")
	changed, _ := Definition(Def{Name: "b", Description: "Tool b, now also deleting", InputSchema: []byte(`{"type":"object"}`)})
	d := Compare(p, []Current{{Name: "b", Definition: changed}, {Name: "c", Definition: "{}"}})
	if strings.Join(d.Added, ",") != "c" || strings.Join(d.Removed, ",") != "a" || len(d.Changed) != 1 || d.Changed[0].Name != "b" || d.Count() != 3 {
		t.Errorf("drift %+v", d)
	}
	if d := Compare(p, []Current{{Name: "a", Definition: p.Tool("a").Definition}, {Name: "b", Definition: p.Tool("b").Definition}}); !d.None() {
		t.Errorf("no drift expected: %+v", d)
	}
}

// TestUnifiedDiff checks the diff with patch(1) as the oracle: applied to the old text, it
// must give the new one.
func TestUnifiedDiff(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("patch"); err != nil {
		t.Skip("no patch(1)")
	}
	lines := func(n int, f func(i int) string) string {
		var b strings.Builder
		for i := range n {
			b.WriteString(f(i) + "\n")
		}
		return b.String()
	}
	base := lines(40, func(i int) string { return "line " + string(rune('a'+i%26)) })
	tests := []struct{ a, b string }{
		{"x\n", "y\n"},
		{"", "a\nb\n"},
		{"a\nb\n", ""},
		{base, strings.Replace(base, "line c\n", "line C\n", 1)},
		{base, strings.Replace(strings.Replace(base, "line b\n", "", 1), "line z\n", "line z\nnew\n", 1)},
		{base, lines(40, func(i int) string {
			if i%7 == 0 {
				return "changed"
			}
			return "line " + string(rune('a'+i%26))
		})},
		{Pretty(`{"a":1,"b":{"c":[1,2,3]},"d":"x"}`) + "\n", Pretty(`{"a":1,"b":{"c":[1,3]},"d":"y","e":null}`) + "\n"},
	}
	for i, tc := range tests {
		d := UnifiedDiff("locked", "now", tc.a, tc.b)
		dir := t.TempDir()
		target := filepath.Join(dir, "f")
		if err := os.WriteFile(target, []byte(tc.a), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("patch", "-s", "-f", target)
		cmd.Stdin = strings.NewReader(d)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("case %d: patch: %v: %s\n%s", i, err, out, d)
			continue
		}
		got, _ := os.ReadFile(target)
		if string(got) != tc.b {
			t.Errorf("case %d: patched to %q, want %q\n%s", i, got, tc.b, d)
		}
	}
	if d := UnifiedDiff("a", "b", "same\n", "same\n"); d != "" {
		t.Errorf("equal texts: %q", d)
	}
}

// FuzzParse: any content is a lock or an error, never a panic; a lock read back from what
// Marshal writes of it is the same lock, and Verify never panics on it.
func FuzzParse(f *testing.F) {
	good := sample(nil).Marshal()
	f.Add(good)
	f.Add(good[:len(good)/3])
	f.Add([]byte(`{"version":1,"providers":null}`))
	f.Add([]byte(`{"version":1,"providers":[{"id":"a","command":["/x"],"server":"","time":"","tools":[{"name":"a","definition":"{}","sha256":"44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		lf, err := Parse(data)
		if err != nil {
			return
		}
		_ = lf.Verify()
		again, err := Parse(lf.Marshal())
		if err != nil {
			t.Fatalf("a lock's own text does not parse: %v", err)
		}
		if string(again.Marshal()) != string(lf.Marshal()) {
			t.Fatalf("not the same lock:\n%s\n%s", lf.Marshal(), again.Marshal())
		}
	})
}

// TestHoldSerialises: a second Hold of the same directory waits for the first's release.
func TestHoldSerialises(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), FileName)
	release, err := Hold(path)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan struct{})
	go func() {
		r2, err := Hold(path)
		if err == nil {
			r2()
		}
		close(got)
	}()
	select {
	case <-got:
		t.Fatal("a second Hold did not wait for the first")
	case <-time.After(100 * time.Millisecond):
	}
	release()
	<-got
}
