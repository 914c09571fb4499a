package paths

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckTrusted(t *testing.T) {
	t.Parallel()
	r, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"ws/sub", "opt/bin", "cfg"} {
		if err := os.MkdirAll(filepath.Join(r, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"ws/tool", "opt/bin/tool", "cfg/caps.json"} {
		if err := os.WriteFile(filepath.Join(r, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"ws/to-opt":   r + "/opt",     // a symlink in the workspace pointing out of it
		"opt/to-ws":   r + "/ws/sub",  // a symlink outside pointing into the workspace
		"opt/rel":     "bin/tool",     // relative, stays outside
		"opt/rel-up":  "../ws/tool",   // relative, climbs into the workspace
		"opt/dangle":  r + "/ws/none", // dangling into the workspace
		"opt/loop":    "loop",
		"cfg-link":    "cfg",
		"ws-link":     "ws", // the workspace reached through a symlink outside it
		"opt/to-root": "/",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(r, name)); err != nil {
			t.Fatal(err)
		}
	}
	roots := WritableRoots(r+"/ws-link", r+"/missing")
	if roots[0] != r+"/ws" || roots[1] != r+"/missing" {
		t.Fatalf("WritableRoots = %q", roots)
	}
	tests := []struct {
		path string
		want string // "" = trusted; else a part of the reason
	}{
		{r + "/opt/bin/tool", ""},
		{r + "/cfg-link/caps.json", ""},
		{r + "/opt/rel", ""},
		{r + "/opt/to-root" + r + "/opt/bin/tool", ""},
		{r + "/opt/new/file", ""},
		{"/", ""},
		{r + "/ws/tool", "lies in the writable root " + r + "/ws"},
		{r + "/ws", "lies in the writable root " + r + "/ws"},
		{r + "/ws-link/tool", "lies in the writable root " + r + "/ws"},
		{r + "/ws/to-opt/bin/tool", "passes through the symlink " + r + "/ws/to-opt in the writable root " + r + "/ws"},
		{r + "/opt/to-ws/x", "would be created in the writable root " + r + "/ws"},
		{r + "/opt/to-ws", "lies in the writable root " + r + "/ws"},
		{r + "/opt/rel-up", "lies in the writable root " + r + "/ws"},
		{r + "/opt/dangle", "would be created in the writable root " + r + "/ws"},
		{r + "/missing/x", "would be created in the writable root " + r + "/missing"},
		{r + "/opt/loop", "too many symlinks"},
		{r + "/ws/sub/../../opt/bin/tool", "passes through the writable root " + r + "/ws"},
		{"relative/path", "not an absolute path"},
	}
	for _, tt := range tests {
		err := CheckTrusted(tt.path, roots)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("CheckTrusted(%s) = %v, want trusted", tt.path, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("CheckTrusted(%s) = %v, want %q", tt.path, err, tt.want)
		}
	}
	// No writable roots: everything absolute is trusted.
	if err := CheckTrusted(r+"/ws/to-opt/bin/tool", nil); err != nil {
		t.Errorf("no roots: %v", err)
	}
}
