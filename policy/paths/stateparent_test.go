package paths

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// env is a getenv over a map.
type env map[string]string

func (e env) get(name string) string { return e[name] }

func TestStateParent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		env   env
		state string
	}{
		{env{"HOME": "/h"}, "/h/.local/state/spear"},
		{env{"HOME": "/h", "XDG_CONFIG_HOME": "/x"}, "/h/.local/state/spear"},
		{env{"HOME": "/h", "XDG_CONFIG_HOME": "rel"}, "/h/.local/state/spear"},
		{env{"SPEAR_HOME": "/s", "XDG_CONFIG_HOME": "/x", "XDG_RUNTIME_DIR": "/run/user/7"}, "/run/user/7/spear"},
		// TMPDIR never decides: a symlinked or shared TMPDIR was how a probe answer was forged
		{env{"TMPDIR": "/var/tmp"}, ""},
		{env{"XDG_RUNTIME_DIR": "relative", "TMPDIR": "/t", "HOME": "/h"}, "/h/.local/state/spear"},
	}
	for _, tt := range tests {
		if got := StateParent(tt.env.get); got != tt.state {
			t.Errorf("%v: StateParent %q, want %q", tt.env, got, tt.state)
		}
	}
}

// The state parent is used only if it is a directory of this user's with mode 0700; anything
// else is refused with the path, why and the fix, never replaced by another directory.
func TestEnsureStateParent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(t *testing.T, run string) // run is XDG_RUNTIME_DIR
		want  string                         // "" = usable; else part of the error
	}{
		{"created with its parents", func(t *testing.T, run string) {}, ""},
		{"already there", func(t *testing.T, run string) { mkdir(t, run+"/spear", 0o700) }, ""},
		{"group-readable", func(t *testing.T, run string) { mkdir(t, run+"/spear", 0o750) }, "has mode 0750, not 0700; run: chmod 700 /"},
		{"a symlink to a private directory", func(t *testing.T, run string) {
			mkdir(t, run+"/other", 0o700)
			must(t, os.Symlink(run+"/other", run+"/spear"))
		}, "is a symlink (never followed)"},
		{"a file", func(t *testing.T, run string) { must(t, os.WriteFile(run+"/spear", nil, 0o600)) }, "is not a directory"},
		{"another user's", func(t *testing.T, run string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to give a directory to another user")
			}
			mkdir(t, run+"/spear", 0o700)
			if err := os.Chown(run+"/spear", 4242, 4242); err != nil {
				t.Fatal(err)
			}
		}, "belongs to uid 4242, not to this user"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			run := filepath.Join(t.TempDir(), "a", "run")
			mkdir(t, run, 0o700)
			tt.setup(t, run)
			got, err := EnsureStateParent(env{"XDG_RUNTIME_DIR": run, "HOME": "/nonexistent", "TMPDIR": t.TempDir()}.get)
			if tt.want == "" {
				if err != nil || got != run+"/spear" {
					t.Fatalf("got %q, %v", got, err)
				}
				fi, err := os.Lstat(got)
				if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
					t.Errorf("state parent %v %v", fi, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "state: "+run+"/spear: ") {
				t.Errorf("got %q, %v; want an error with %q", got, err, tt.want)
			}
		})
	}
	t.Run("from HOME, ancestors made private", func(t *testing.T) {
		t.Parallel()
		home := t.TempDir()
		got, err := EnsureStateParent(env{"HOME": home}.get)
		if err != nil || got != home+"/.local/state/spear" {
			t.Fatalf("got %q, %v", got, err)
		}
		if fi, _ := os.Stat(home + "/.local"); fi.Mode().Perm() != 0o700 {
			t.Errorf(".local mode %v", fi.Mode())
		}
	})
	t.Run("nothing set", func(t *testing.T) {
		t.Parallel()
		if _, err := EnsureStateParent(env{"TMPDIR": "/tmp"}.get); err == nil || !strings.Contains(err.Error(), "neither XDG_RUNTIME_DIR nor HOME") {
			t.Errorf("got %v", err)
		}
	})
}

// mkdir makes p, and its parents 0700, with mode.
func mkdir(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	must(t, os.MkdirAll(p, 0o700))
	must(t, os.Chmod(p, mode))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
