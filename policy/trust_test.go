package policy

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A path is untrusted when it, or any symlink on the way to it, lies in a writable root.
func TestUntrusted(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	ws := filepath.Join(dir, "ws")
	mkExec(t, filepath.Join(dir, "opt", "prog"))
	mkExec(t, filepath.Join(ws, "prog"))
	link := func(target, at string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(at), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, at); err != nil {
			t.Fatal(err)
		}
	}
	// /opt/viaws -> ws/hop (a link the agent can repoint) -> opt/prog
	link(filepath.Join(dir, "opt", "prog"), filepath.Join(ws, "hop"))
	link(filepath.Join(ws, "hop"), filepath.Join(dir, "opt", "viaws"))
	// a relative link inside the workspace, reached through a directory link outside it
	link("../ws", filepath.Join(dir, "alias", "wsdir"))
	link("prog", filepath.Join(dir, "opt", "same"))
	// the workspace itself reached through a link: the root is given as that link
	link(ws, filepath.Join(dir, "wslink"))
	link("loop2", filepath.Join(dir, "loop1"))
	link("loop1", filepath.Join(dir, "loop2"))
	tests := []struct {
		name, path string
		roots      []string
		want       string // substring of the reason; "" = trusted
	}{
		{"outside every root", dir + "/opt/prog", []string{ws}, ""},
		{"link outside to outside", dir + "/opt/same", []string{ws}, ""},
		{"inside the workspace", ws + "/prog", []string{ws}, "lies in the writable root " + ws},
		{"the root itself", ws, []string{ws}, "lies in"},
		{"through a link in the workspace", dir + "/opt/viaws", []string{ws}, "leads through a symbolic link into the writable root " + ws},
		{"dot-dot does not hide a step", dir + "/opt/../ws/prog", []string{ws}, "lies in"},
		{"dot-dot after a link goes up from its target", dir + "/alias/wsdir/../opt/prog", []string{ws}, "link into the writable root " + ws},
		{"dot-dot after a link outside", dir + "/alias/../opt/prog", []string{ws}, ""},
		{"relative link into the workspace", dir + "/alias/wsdir/prog", []string{ws}, "link into the writable root " + ws},
		{"root given through a link", ws + "/prog", []string{dir + "/wslink"}, "lies in the writable root " + ws},
		{"path given through the root's link", dir + "/wslink/prog", []string{ws}, "link into the writable root " + ws},
		{"path given through the root's link, root as that link", dir + "/wslink/prog", []string{dir + "/wslink"}, "lies in"},
		{"several roots", dir + "/opt/prog", []string{ws, dir + "/opt"}, "lies in the writable root " + dir + "/opt"},
		{"the whole tree writable", dir + "/opt/prog", []string{"/"}, "lies in the writable root /"},
		{"relative roots are ignored", dir + "/opt/prog", []string{"ws", ""}, ""},
		{"missing", dir + "/opt/none", []string{ws}, "cannot be resolved"},
		{"a loop", dir + "/loop1", []string{ws}, "too many levels"},
		{"relative path", "opt/prog", []string{ws}, "not an absolute path"},
	}
	for _, tt := range tests {
		got := Untrusted(tt.path, tt.roots)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: Untrusted(%q, %q) = %q, want %q", tt.name, tt.path, tt.roots, got, tt.want)
		}
	}
}

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
