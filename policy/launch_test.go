package policy

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestLaunch(t *testing.T) {
	t.Parallel()
	getenv := func(env map[string]string) func(string) string {
		return func(k string) string { return env[k] }
	}
	full := map[string]string{"PATH": "/usr/bin:/bin", "HOME": "/home/u", "SECRET_OF_SHELL": "x", "SPEAR_HOME": "/etc/spear"}
	tests := []struct {
		name string
		p    Provider
		env  map[string]string
		want Launch
	}{
		{"system PATH and HOME only", Provider{Command: []string{"/opt/mcp", "--x", "$HOME"}}, full,
			Launch{Path: "/opt/mcp", Args: []string{"--x", "$HOME"}, Dir: "/etc/spear", Env: []string{"HOME=/home/u", "PATH=" + SystemPath}}},
		{"entry env added and sorted", Provider{Command: []string{"/opt/mcp"}, Env: map[string]string{"TOKEN": "t=1", "A_B": "", "ZED": "z"}}, full,
			Launch{Path: "/opt/mcp", Args: []string{}, Dir: "/etc/spear", Env: []string{"A_B=", "HOME=/home/u", "PATH=" + SystemPath, "TOKEN=t=1", "ZED=z"}}},
		{"entry overrides PATH and HOME", Provider{Command: []string{"/opt/mcp"}, Env: map[string]string{"PATH": "/opt/bin", "HOME": "/srv"}}, full,
			Launch{Path: "/opt/mcp", Args: []string{}, Dir: "/etc/spear", Env: []string{"HOME=/srv", "PATH=/opt/bin"}}},
		{"empty HOME left out", Provider{Command: []string{"/opt/mcp"}}, map[string]string{},
			Launch{Path: "/opt/mcp", Args: []string{}, Dir: "/etc/spear", Env: []string{"PATH=" + SystemPath}}},
	}
	for _, tt := range tests {
		got, err := tt.p.Launch("/etc/spear", getenv(tt.env))
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: Launch = %#v, want %#v", tt.name, got, tt.want)
		}
	}
	// The launch does not alias the provider's command.
	p := Provider{Command: []string{"/opt/mcp", "a"}}
	l, _ := p.Launch("/h", getenv(full))
	l.Args[0] = "changed"
	if p.Command[1] != "a" {
		t.Error("Launch.Args aliases Provider.Command")
	}
}

// A secret in an entry's env reaches the provider's environment and appears in no
// error message, whatever else is wrong with the entry or the file.
func TestSecretsNeverInMessages(t *testing.T) {
	t.Parallel()
	secrets := []string{"s3cr3t-Value-42", "another-secret-1", "third-secret-xyz", "fourth-secret-abc",
		"fifth-secret-array", "sixth-secret-dup", "seventh-secret-dup", "eighth-nested-secret"}
	caps := `{"providers": [
		{"id": "good", "command": ["@T@/bin/fake-mcp"], "scope": "global", "env": {"TOKEN": "s3cr3t-Value-42", "SHORT": "abc"}},
		{"id": "bad1", "command": ["@T@/bin/fake-mcp"], "scope": "Global s3cr3t-Value-42x", "env": {"TOKEN2": "another-secret-1"}},
		{"id": "bad2", "command": ["@T@/bin/fake-mcp"], "env": {"1BAD": "third-secret-xyz"}},
		{"id": "bad3", "command": ["@T@/bin/fake-mcp"], "env": {"A": "fourth-secret-abc", "B": 5}},
		{"id": "bad4", "command": ["@T@/bin/fake-mcp"], "env": ["fifth-secret-array"]},
		{"id": "bad5", "command": ["@T@/bin/fake-mcp"], "env": {"A": "sixth-secret-dup", "A": "seventh-secret-dup"}},
		{"id": "bad6", "command": ["@T@/bin/fake-mcp"], "env": {"A": {"x": "eighth-nested-secret"}}},
		"not an entry"
	]}`
	f := newRegFixture(t)
	reg, err := f.load(t, noProjects, caps)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(reg.Providers); !reflect.DeepEqual(got, []string{"good"}) {
		t.Fatalf("providers %v, problems %v", got, reg.Problems)
	}
	var messages []string
	for _, p := range reg.Problems {
		messages = append(messages, p.Error())
	}
	for _, r := range reg.Rejected {
		messages = append(messages, r.ID, r.Reason)
	}
	for _, m := range messages {
		for _, s := range secrets {
			if strings.Contains(m, s) {
				t.Errorf("message %q contains the secret %q", m, s)
			}
		}
	}
	got := reg.Secrets(nil)
	for _, s := range secrets {
		if !slices.Contains(got, s) {
			t.Errorf("Secrets() %q lacks %q", got, s)
		}
	}
	if slices.Contains(got, "abc") {
		t.Errorf("Secrets() %q holds a value shorter than %d bytes", got, MinSecretLen)
	}
	for i := 1; i < len(got); i++ {
		if len(got[i]) > len(got[i-1]) {
			t.Errorf("Secrets() %q not longest first", got)
		}
	}
	l, _ := reg.Providers[0].Launch(f.paths.Home, func(k string) string { return map[string]string{"PATH": "/bin", "HOME": "/h"}[k] })
	want := []string{"HOME=/h", "PATH=" + SystemPath, "SHORT=abc", "TOKEN=s3cr3t-Value-42"}
	if !reflect.DeepEqual(l.Env, want) || l.Path != filepath.Join(f.dir, "bin", "fake-mcp") || l.Dir != f.paths.Home {
		t.Errorf("Launch = %#v, want env %q", l, want)
	}

	// A file refused as a whole still yields its secrets (for redaction), and its
	// error does not show them.
	f2 := newRegFixture(t)
	reg, err = f2.load(t, noProjects, `{"providers": [{"id": "x", "env": {"T": "ninth-secret-fatal"}}], "extra": {"env": {"U": "tenth-secret-fatal"}}}`)
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("fatal error %v", err)
	}
	if got := reg.Secrets(nil); !slices.Contains(got, "ninth-secret-fatal") || !slices.Contains(got, "tenth-secret-fatal") {
		t.Errorf("Secrets() of a refused file = %q", got)
	}
}

func TestWithin(t *testing.T) {
	t.Parallel()
	tests := []struct {
		dir, p string
		want   bool
	}{
		{"/src/fw-a", "/src/fw-a", true},
		{"/src/fw-a", "/src/fw-a/x", true},
		{"/src/fw-a", "/src/fw-a2", false},
		{"/src/fw-a", "/src/fw-", false},
		{"/src/fw-a", "/src", false},
		{"/", "/anything", true},
		{"/", "/", true},
	}
	for _, tt := range tests {
		if got := within(tt.dir, tt.p); got != tt.want {
			t.Errorf("within(%q, %q) = %v", tt.dir, tt.p, got)
		}
	}
}
