package policy

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Programs follows #! lines, /usr/bin/env NAME resolved on the provider's PATH.
func TestPrograms(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	bin := filepath.Join(dir, "bin")
	writeFile(t, filepath.Join(bin, "interp"), "\x7fELF, not a script")
	if err := os.Chmod(filepath.Join(bin, "interp"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := func(name, first string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		writeFile(t, p, first+"\nrest of the script\n")
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	envPath := map[string]string{"PATH": bin}
	env := "/usr/bin/env"
	tests := []struct {
		name  string
		first string
		env   map[string]string
		want  []string // after the script itself
		err   string
	}{
		{"direct interpreter", "#!" + bin + "/interp -x", nil, []string{bin + "/interp"}, ""},
		{"blanks after #!", "#! \t" + bin + "/interp", nil, []string{bin + "/interp"}, ""},
		{"env NAME on the entry's PATH", "#!" + env + " interp", envPath, []string{env, bin + "/interp"}, ""},
		{"env -S", "#!" + env + " -S interp --flag", envPath, []string{env, bin + "/interp"}, ""},
		{"env -Sname", "#!" + env + " -Sinterp", envPath, []string{env, bin + "/interp"}, ""},
		{"env assignments", "#!" + env + " A=1 interp", envPath, []string{env, bin + "/interp"}, ""},
		{"env NAME not on the system PATH", "#!" + env + " interp", nil, nil, "not found"},
		{"env unknown option", "#!" + env + " -u X interp", envPath, nil, "cannot tell"},
		{"env without a program", "#!" + env, envPath, nil, "names no program"},
		{"relative interpreter", "#!interp", nil, nil, "not an absolute path"},
		{"empty #! line", "#!", nil, nil, "empty #! line"},
		{"not a script", "\x7fELF", nil, nil, ""},
	}
	for i, tt := range tests {
		s := script("s"+string(rune('a'+i)), tt.first)
		p := Provider{Command: []string{s}, Env: tt.env}
		got, err := p.Programs()
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: Programs = %q, %v; want error %q", tt.name, got, err, tt.err)
			}
			continue
		}
		if want := append([]string{s}, tt.want...); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Programs = %q, %v; want %q", tt.name, got, err, want)
		}
	}
	// A script whose interpreter is a script: the chain is followed, and bounded.
	a := script("chain-a", "#!"+bin+"/interp")
	b := script("chain-b", "#!"+a)
	if got, err := (&Provider{Command: []string{b}}).Programs(); err != nil || !reflect.DeepEqual(got, []string{b, a, bin + "/interp"}) {
		t.Errorf("chain: Programs = %q, %v", got, err)
	}
	self := filepath.Join(dir, "self")
	writeFile(t, self, "#!"+self+"\n")
	if _, err := (&Provider{Command: []string{self}}).Programs(); err == nil || !strings.Contains(err.Error(), "levels") {
		t.Errorf("a script naming itself: %v, want a levels error", err)
	}
}
