package policy

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseEnvFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want map[string]string
		err  string // the message after "env_file F: "; "" when none
	}{
		{"", map[string]string{}, ""},
		{"A=1", map[string]string{"A": "1"}, ""},
		{"A=1\nB=2\n", map[string]string{"A": "1", "B": "2"}, ""},
		{"# c\n\n   \n\t# c2\nA=1\n\n", map[string]string{"A": "1"}, ""},
		{"A=", map[string]string{"A": ""}, ""},
		{"A=x=y", map[string]string{"A": "x=y"}, ""},
		{`A="q v"`, map[string]string{"A": `"q v"`}, ""},               // no quotes removed
		{"A='$HOME ${X}'", map[string]string{"A": "'$HOME ${X}'"}, ""}, // nothing expanded
		{"A= lead and trail ", map[string]string{"A": " lead and trail "}, ""},
		{"_a9=1", map[string]string{"_a9": "1"}, ""},
		{"A#=1", nil, "line 1: the name before = must match"},
		{"A=1\nnot a line", nil, "line 2: not KEY=VALUE"},
		{"A=1\n\nsk-0123456789", nil, "line 3: not KEY=VALUE"},
		{"export A=1", nil, "line 1: the name before = must match"},
		{" A=1", nil, "line 1: the name before = must match"},
		{"1A=1", nil, "line 1: the name before = must match"},
		{"=1", nil, "line 1: the name before = must match"},
		{"A=1\nA=2", nil, "line 2: variable A given twice (first on line 1)"},
		{"A=1\r\n", nil, "line 1: the value of A ends in a carriage return"},
		{"A=x\x00y", nil, "line 1: the value of A contains NUL"},
	}
	for _, tt := range tests {
		got, err := parseEnvFile("/h/e.env", []byte(tt.in))
		if tt.err == "" {
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%q: got %v, %v; want %v", tt.in, got, err, tt.want)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), "env_file /h/e.env: "+tt.err) || !errors.Is(err, ErrEnvFile) {
			t.Errorf("%q: error %v, want %q", tt.in, err, tt.err)
		}
	}
}

// No error shows a line's text: a malformed line may be a pasted secret.
func TestEnvFileErrorsShowNoValue(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"s3cr3t-value", "A=1\ns3cr3t-value=", "A=s3cr3t-value\nA=s3cr3t-value", "A=s3cr3t-value\r", "A=s3cr3t-value\x00"} {
		_, err := parseEnvFile("/h/e.env", []byte(in))
		if err == nil || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%q: error %v", in, err)
		}
	}
}

func TestReadEnvFile(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	good := filepath.Join(dir, "good.env")
	writeFile(t, good, "TOKEN=abcdef123\n")
	mode := func(name string, m os.FileMode) string {
		p := filepath.Join(dir, name)
		writeFile(t, p, "A=1\n")
		if err := os.Chmod(p, m); err != nil {
			t.Fatal(err)
		}
		return p
	}
	big := filepath.Join(dir, "big.env")
	writeFile(t, big, "A="+strings.Repeat("x", MaxEnvFileBytes))
	link := filepath.Join(dir, "link.env")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		err  string
	}{
		{good, ""},
		{link, ""}, // a symlink is followed; whether it is trusted is CheckTrusted's (the caller's)
		{mode("0400.env", 0o400), ""},
		{mode("0640.env", 0o640), "mode 0640 lets group or others at it (chmod 600)"},
		{mode("0604.env", 0o604), "mode 0604 lets group or others at it"},
		{mode("0620.env", 0o620), "mode 0620 lets group or others at it"},
		{mode("0601.env", 0o601), "mode 0601 lets group or others at it"},
		{big, "is larger than 1048576 bytes"},
		{dir, "is not a regular file"},
		{filepath.Join(dir, "none.env"), "cannot be opened: no such file or directory"},
		{"rel.env", "not an absolute path"},
	}
	for _, tt := range tests {
		got, err := ReadEnvFile(tt.path)
		if tt.err == "" {
			if err != nil || got["A"] == "" && got["TOKEN"] != "abcdef123" {
				t.Errorf("%s: %v, %v", tt.path, got, err)
			}
			continue
		}
		want := "env_file " + tt.path + ": " + tt.err
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", tt.path, err, want)
		}
	}
}

// An env_file under SPEAR_HOME or beside a capabilities file kept elsewhere is accepted; its
// variables come after env's in the launch, and its long values are secrets from then on.
func TestEnvFileLaunch(t *testing.T) {
	t.Parallel()
	f := newRegFixture(t)
	other := filepath.Join(f.dir, "conf")
	f.paths.CapabilitiesFile = filepath.Join(other, "capabilities.json")
	writeFile(t, filepath.Join(f.paths.Home, "projects.json"), noProjects)
	writeFile(t, f.paths.CapabilitiesFile, expand(`{"providers": [
		{"id": "a", "command": ["@T@/bin/fake-mcp"], "env": {"A": "env", "B": "env-only"}, "env_file": "@T@/home/env/a.env"},
		{"id": "b", "command": ["@T@/bin/fake-mcp"], "env_file": "@T@/conf/b.env"}]}`, f.dir))
	writeFile(t, filepath.Join(f.paths.Home, "env", "a.env"), "A=from-file-secret\nPATH=/opt/bin\n")
	writeFile(t, filepath.Join(other, "b.env"), "C=short\n")
	reg, err := Load(f.paths)
	if err != nil || len(reg.Providers) != 2 {
		t.Fatalf("Load: %v, %v", err, reg.Problems)
	}
	l, err := reg.Providers[0].Launch(f.paths.Home, func(string) string { return "" })
	want := []string{"A=from-file-secret", "B=env-only", "PATH=/opt/bin"}
	if err != nil || !reflect.DeepEqual(l.Env, want) || !reflect.DeepEqual(l.Secrets, []string{"/opt/bin", "from-file-secret"}) {
		t.Errorf("Launch = %#v, %v; want env %q", l, err, want)
	}
	if got := reg.Secrets(nil); !reflect.DeepEqual(got, []string{"from-file-secret", "/opt/bin", "env-only"}) {
		t.Errorf("Secrets(nil) = %q", got)
	}
	// an env_file that is not the operator's gives none: the entry's env still does
	notOperators := func(p *Provider) bool { return p.EnvFile != filepath.Join(f.paths.Home, "env", "a.env") }
	if got := reg.Secrets(notOperators); !reflect.DeepEqual(got, []string{"env-only"}) {
		t.Errorf("Secrets(all but a.env) = %q", got)
	}
	// Read at each launch: a changed file is what the next start gets, a bad one fails it.
	writeFile(t, filepath.Join(other, "b.env"), "C=longer-now\n")
	if l, err := reg.Providers[1].Launch(f.paths.Home, func(string) string { return "" }); err != nil || !reflect.DeepEqual(l.Secrets, []string{"longer-now"}) {
		t.Errorf("Launch after a change = %#v, %v", l, err)
	}
	writeFile(t, filepath.Join(other, "b.env"), "C=1\nC=2\n")
	if _, err := reg.Providers[1].Launch(f.paths.Home, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "b.env: line 2: variable C given twice") {
		t.Errorf("Launch of a bad file: %v", err)
	}
}
