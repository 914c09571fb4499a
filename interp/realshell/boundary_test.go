package realshell

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// envOf makes a getenv from pairs.
func envOf(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func base(extra ...string) []string {
	return slices.Concat([]string{"/usr/bin/bwrap"}, baseOptions, extra)
}

func TestArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		b    Boundary
		want []string
	}{
		{
			name: "no masks",
			b:    Boundary{Bwrap: "/usr/bin/bwrap"},
			want: base("--", "/bin/bash", "-c", "true"),
		},
		{
			name: "chdir",
			b:    Boundary{Bwrap: "/usr/bin/bwrap", Dir: "/w"},
			want: base("--chdir", "/w", "--", "/bin/bash", "-c", "true"),
		},
		{
			name: "dirs files stub inside a masked dir, empty file",
			b: Boundary{
				Bwrap: "/usr/bin/bwrap",
				Masks: Masks{
					Dirs:  []string{"/home/a/.config/spear", "/run/user/1/spear"},
					Files: []string{"/w/turn.json"},
					Empty: "/run/user/1/spear/empty",
				},
				StubDir: "/run/user/1/spear/bin", StubTarget: "/opt/spear/spear-shell", Dir: "/w",
			},
			want: base(
				"--bind", "/home", "/home",
				"--bind", "/home/a", "/home/a",
				"--bind", "/home/a/.config", "/home/a/.config",
				"--bind", "/run", "/run",
				"--bind", "/run/user", "/run/user",
				"--bind", "/run/user/1", "/run/user/1",
				"--bind", "/w", "/w",
				"--tmpfs", "/home/a/.config/spear",
				"--tmpfs", "/run/user/1/spear",
				"--dir", "/run/user/1/spear/bin",
				"--symlink", "/opt/spear/spear-shell", "/run/user/1/spear/bin/spear-capability",
				"--remount-ro", "/home/a/.config/spear",
				"--remount-ro", "/run/user/1/spear",
				"--ro-bind", "/run/user/1/spear/empty", "/w/turn.json",
				"--chdir", "/w",
				"--", "/bin/bash", "-c", "true"),
		},
		{
			name: "stub outside the masks gets its own tmpfs; file mask from the default fd",
			b: Boundary{
				Bwrap:   "/usr/bin/bwrap",
				Masks:   Masks{Files: []string{"/etc/caps.json"}, AbsentDirs: []string{"/nope"}},
				StubDir: "/s/bin", StubTarget: "/x/spear-shell",
			},
			want: base(
				"--bind", "/etc", "/etc",
				"--tmpfs", "/s/bin",
				"--dir", "/s/bin",
				"--symlink", "/x/spear-shell", "/s/bin/spear-capability",
				"--remount-ro", "/s/bin",
				"--perms", "0444", "--ro-bind-data", "3", "/etc/caps.json",
				"--", "/bin/bash", "-c", "true"),
		},
		{
			name: "explicit fd",
			b:    Boundary{Bwrap: "/usr/bin/bwrap", Masks: Masks{Files: []string{"/f"}}, EmptyFD: 7},
			want: base("--perms", "0444", "--ro-bind-data", "7", "/f", "--", "/bin/bash", "-c", "true"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.b.Args([]string{"/bin/bash", "-c", "true"})
			if !slices.Equal(got, tt.want) {
				t.Errorf("Args:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestBaseOptions(t *testing.T) {
	t.Parallel()
	got := strings.Join(baseOptions, " ")
	want := "--cap-drop ALL --bind / / --dev-bind /dev /dev --proc /proc --unshare-pid --new-session --die-with-parent --setenv " + BoundaryMarker + " bwrap"
	if got != want {
		t.Errorf("base options %q, want %q", got, want)
	}
	for _, bad := range []string{"--unshare-net", "--unshare-all", "--clearenv", "--uid"} {
		if slices.Contains(baseOptions, bad) {
			t.Errorf("base options contain %s", bad)
		}
	}
}

func TestSpearHomeAndStateParent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		env         []string
		home, state string
	}{
		{[]string{"HOME", "/h"}, "/h/.config/spear", "/tmp/spear"},
		{[]string{"HOME", "/h", "XDG_CONFIG_HOME", "/x"}, "/x/spear", "/tmp/spear"},
		{[]string{"HOME", "/h", "XDG_CONFIG_HOME", "rel"}, "/h/.config/spear", "/tmp/spear"},
		{[]string{"SPEAR_HOME", "/s", "XDG_CONFIG_HOME", "/x", "XDG_RUNTIME_DIR", "/run/user/7"}, "/s", "/run/user/7/spear"},
		{[]string{"TMPDIR", "/var/tmp"}, "", "/var/tmp/spear"},
		{[]string{"XDG_RUNTIME_DIR", "relative", "TMPDIR", "/t"}, "", "/t/spear"},
	}
	for _, tt := range tests {
		getenv := envOf(tt.env...)
		if got := SpearHome(getenv); got != tt.home {
			t.Errorf("%v: SpearHome %q, want %q", tt.env, got, tt.home)
		}
		if got := StateParent(getenv); got != tt.state {
			t.Errorf("%v: StateParent %q, want %q", tt.env, got, tt.state)
		}
	}
}

// mkfifo makes a FIFO: opening it for reading blocks, so a CheapMasks that read it would hang.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// cheapMasks runs CheapMasks with a deadline: reading any FIFO would block it.
func cheapMasks(t *testing.T, getenv func(string) string, manifest string) Masks {
	t.Helper()
	done := make(chan Masks, 1)
	go func() { done <- CheapMasks(getenv, manifest) }()
	select {
	case m := <-done:
		return m
	case <-time.After(20 * time.Second):
		t.Fatal("CheapMasks blocked: it opened a file other than the manifest")
		return Masks{}
	}
}

func TestCheapMasks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// setup lays out files under root and returns env pairs and the manifest path.
		setup func(t *testing.T, root string) ([]string, string)
		want  func(root string) Masks
	}{
		{
			name: "defaults from HOME and TMPDIR; config files are never opened",
			setup: func(t *testing.T, r string) ([]string, string) {
				mkfifo(t, r+"/h/.config/spear/capabilities.json")
				mkfifo(t, r+"/h/.config/spear/projects.json")
				return []string{"HOME", r + "/h", "TMPDIR", r + "/tmp"}, ""
			},
			want: func(r string) Masks {
				return Masks{Dirs: []string{r + "/h/.config/spear", r + "/tmp/spear"}}
			},
		},
		{
			name: "every source, manifest fields read, files inside masked dirs dropped",
			setup: func(t *testing.T, r string) ([]string, string) {
				mkfifo(t, r+"/caps.json")
				mkfifo(t, r+"/audit.jsonl")
				mkfifo(t, r+"/home/audit.jsonl")
				writeFile(t, r+"/turn.json", `{"turn":"t","audit":"`+r+`/a2.jsonl","state_dir":"`+r+`/st"}`)
				mkfifo(t, r+"/a2.jsonl")
				os.MkdirAll(r+"/st", 0o700)
				return []string{"SPEAR_HOME", r + "/home", "SPEAR_CAPABILITIES_FILE", r + "/caps.json",
					"SPEAR_AUDIT_FILE", r + "/home/audit.jsonl", "XDG_RUNTIME_DIR", r + "/run"}, r + "/turn.json"
			},
			want: func(r string) Masks {
				return Masks{
					Dirs:  []string{r + "/home", r + "/run/spear", r + "/st"},
					Files: []string{r + "/a2.jsonl", r + "/caps.json", r + "/turn.json"},
					Empty: r + "/run/spear/empty",
				}
			},
		},
		{
			name: "SPEAR_TURN_MANIFEST when no path is given; bad JSON and relative values ignored",
			setup: func(t *testing.T, r string) ([]string, string) {
				writeFile(t, r+"/m1.json", `{"audit": "rel.jsonl", "state_dir": "st"}`)
				return []string{"SPEAR_HOME", r + "/home", "TMPDIR", r + "/tmp", "SPEAR_TURN_MANIFEST", r + "/m1.json"}, ""
			},
			want: func(r string) Masks {
				return Masks{Dirs: []string{r + "/home", r + "/tmp/spear"}, Files: []string{r + "/m1.json"}, Empty: r + "/tmp/spear/empty"}
			},
		},
		{
			name: "not JSON at all",
			setup: func(t *testing.T, r string) ([]string, string) {
				writeFile(t, r+"/m.json", `{"audit": "/x`)
				return []string{"SPEAR_HOME", r + "/home", "TMPDIR", r + "/tmp"}, r + "/m.json"
			},
			want: func(r string) Masks {
				return Masks{Dirs: []string{r + "/home", r + "/tmp/spear"}, Files: []string{r + "/m.json"}, Empty: r + "/tmp/spear/empty"}
			},
		},
		{
			name: "symlinks resolved; a state dir inside SPEAR_HOME is covered by it",
			setup: func(t *testing.T, r string) ([]string, string) {
				os.MkdirAll(r+"/real/home/state", 0o700)
				os.Symlink(r+"/real/home", r+"/link")
				writeFile(t, r+"/m.json", `{"state_dir":"`+r+`/link/state"}`)
				return []string{"SPEAR_HOME", r + "/link", "TMPDIR", r + "/tmp"}, r + "/m.json"
			},
			want: func(r string) Masks {
				return Masks{Dirs: []string{r + "/real/home", r + "/tmp/spear"}, Files: []string{r + "/m.json"}, Empty: r + "/tmp/spear/empty"}
			},
		},
		{
			name: "absent masks are created: dirs 0700, files empty 0600",
			setup: func(t *testing.T, r string) ([]string, string) {
				writeFile(t, r+"/m.json", `{"audit":"`+r+`/logs/a.jsonl","state_dir":"`+r+`/state/t1"}`)
				return []string{"SPEAR_HOME", r + "/cfg", "TMPDIR", r + "/tmp", "SPEAR_CAPABILITIES_FILE", r + "/etc/caps.json"}, r + "/m.json"
			},
			want: func(r string) Masks {
				return Masks{
					Dirs:  []string{r + "/cfg", r + "/state/t1", r + "/tmp/spear"},
					Files: []string{r + "/etc/caps.json", r + "/logs/a.jsonl", r + "/m.json"},
					Empty: r + "/tmp/spear/empty",
				}
			},
		},
		{
			name: "a directory given as a file is masked as a directory",
			setup: func(t *testing.T, r string) ([]string, string) {
				os.MkdirAll(r+"/capsdir", 0o700)
				return []string{"SPEAR_HOME", r + "/home", "TMPDIR", r + "/tmp", "SPEAR_CAPABILITIES_FILE", r + "/capsdir"}, ""
			},
			want: func(r string) Masks {
				return Masks{Dirs: []string{r + "/capsdir", r + "/home", r + "/tmp/spear"}}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			env, manifest := tt.setup(t, root)
			got := cheapMasks(t, envOf(env...), manifest)
			want := tt.want(root)
			if !equalMasks(got, want) {
				t.Errorf("CheapMasks:\n got %+v\nwant %+v", got, want)
			}
			for _, d := range got.Dirs {
				if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
					t.Errorf("mask dir %s: %v", d, err)
				}
			}
			if got.Empty != "" && !emptyOK(got.Empty) {
				t.Errorf("empty file %s is not an empty read-only file", got.Empty)
			}
		})
	}
}

func equalMasks(a, b Masks) bool {
	return slices.Equal(a.Dirs, b.Dirs) && slices.Equal(a.Files, b.Files) &&
		slices.Equal(a.AbsentDirs, b.AbsentDirs) && slices.Equal(a.AbsentFiles, b.AbsentFiles) && a.Empty == b.Empty
}

func TestCheapMasksCreatesPrivately(t *testing.T) {
	t.Parallel()
	r := t.TempDir()
	writeFile(t, r+"/m.json", `{"audit":"`+r+`/logs/a.jsonl","state_dir":"`+r+`/state/t1"}`)
	CheapMasks(envOf("SPEAR_HOME", r+"/cfg", "TMPDIR", r+"/tmp"), r+"/m.json")
	for p, want := range map[string]os.FileMode{
		r + "/cfg":          os.ModeDir | 0o700,
		r + "/state":        os.ModeDir | 0o700,
		r + "/state/t1":     os.ModeDir | 0o700,
		r + "/logs":         os.ModeDir | 0o700,
		r + "/logs/a.jsonl": 0o600,
		r + "/tmp/spear":    os.ModeDir | 0o700,
	} {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode(), want)
		}
	}
	if fi, err := os.Stat(r + "/logs/a.jsonl"); err == nil && fi.Size() != 0 {
		t.Errorf("created audit file is not empty")
	}
}

func TestEnsureEmptyReplacesTampering(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		tamper func(t *testing.T, path, secret string)
	}{
		{"missing", func(t *testing.T, path, secret string) {}},
		{"written", func(t *testing.T, path, secret string) { writeFile(t, path, "x") }},
		{"hard link to a secret", func(t *testing.T, path, secret string) {
			if err := os.Link(secret, path); err != nil {
				t.Fatal(err)
			}
		}},
		{"symlink to a secret", func(t *testing.T, path, secret string) {
			if err := os.Symlink(secret, path); err != nil {
				t.Fatal(err)
			}
		}},
		{"writable", func(t *testing.T, path, secret string) { writeFile(t, path, "") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			secret := filepath.Join(dir, "secret")
			writeFile(t, secret, "token")
			p := filepath.Join(dir, EmptyName)
			tt.tamper(t, p, secret)
			if got := ensureEmpty(p); got != p {
				t.Fatalf("ensureEmpty = %q", got)
			}
			if !emptyOK(p) {
				t.Errorf("%s is not an empty private read-only file", p)
			}
			if data, _ := os.ReadFile(secret); string(data) != "token" {
				t.Errorf("secret changed: %q", data)
			}
		})
	}
}

func TestShellEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		environ []string
		stub    string
		want    []string
	}{
		{
			name:    "drops SPEAR_, prepends the stub",
			environ: []string{"HOME=/h", "SPEAR_HOME=/s", "PATH=/usr/bin:/bin", "SPEAR_TURN_MANIFEST=/m", "TERM=xterm", "SPEARMINT=1"},
			stub:    "/run/spear/bin",
			want:    []string{"HOME=/h", "TERM=xterm", "SPEARMINT=1", "PATH=/run/spear/bin:/usr/bin:/bin"},
		},
		{
			name:    "no PATH: bash's default without the current directory",
			environ: []string{"A=1"},
			stub:    "/s",
			want:    []string{"A=1", "PATH=/s:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
		},
		{
			name:    "stub once, later duplicates win, an inherited marker dropped",
			environ: []string{"PATH=/s:/a", "A=1", "A=2", BoundaryMarker + "=x", "PATH=/b:/s"},
			stub:    "/s",
			want:    []string{"A=2", "PATH=/s:/b"},
		},
		{
			name:    "empty PATH kept empty but for the stub",
			environ: []string{"PATH="},
			stub:    "/s",
			want:    []string{"PATH=/s"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := ShellEnv(tt.environ, tt.stub)
			if !slices.Equal(got, tt.want) {
				t.Errorf("ShellEnv:\n got %q\nwant %q", got, tt.want)
			}
			for _, kv := range got {
				if strings.Contains(strings.SplitN(kv, "=", 2)[0], "SPEAR_") {
					t.Errorf("SPEAR_ variable left: %s", kv)
				}
			}
		})
	}
}

func TestInsideBoundaryMarker(t *testing.T) {
	t.Parallel()
	if !InsideBoundary(envOf(BoundaryMarker, "bwrap")) {
		t.Error("marker set: not inside")
	}
	// Outside bwrap (the tests do not run in it), without the marker.
	comm, _ := os.ReadFile("/proc/1/comm")
	if strings.TrimSpace(string(comm)) != "bwrap" && InsideBoundary(envOf()) {
		t.Error("no marker, PID 1 is not bwrap: inside")
	}
}

func TestPruneNeverMasksRoot(t *testing.T) {
	t.Parallel()
	got := classify([]string{"/"}, nil)
	if len(got.Dirs) != 0 {
		t.Errorf("root masked: %+v", got)
	}
}

// The manifest decode is a plain one: only two keys matter, whatever else is there.
func TestManifestDecodeIgnoresOtherKeys(t *testing.T) {
	t.Parallel()
	r := t.TempDir()
	raw, _ := json.Marshal(map[string]any{"turn": 5, "task": []int{1}, "state_dir": r + "/s"})
	writeFile(t, r+"/m.json", string(raw))
	dirs, _ := maskPaths(envOf(), r+"/m.json")
	if !slices.Contains(dirs, r+"/s") {
		t.Errorf("state_dir not read despite wrong types elsewhere: %q", dirs)
	}
}
