package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spear-shell/spear-shell/policy/paths"
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

var shm = []string{"--perms", "1777", "--tmpfs", "/dev/shm"}

func TestArgs(t *testing.T) {
	t.Parallel()
	cmd := []string{"--", "/bin/bash", "-c", "true"}
	tests := []struct {
		name string
		b    Boundary
		want []string
	}{
		{
			name: "nothing but the base",
			b:    Boundary{Bwrap: "/usr/bin/bwrap"},
			want: base(slices.Concat(shm, cmd)...),
		},
		{
			name: "masks, tmp, writable roots inside a mask, stub inside a mask, chdir",
			b: Boundary{
				Bwrap:    "/usr/bin/bwrap",
				Masks:    []string{"/home/a/.config/spear", "/run/user/1", "/tmp/x/home"},
				Writable: []string{"/run/user/1/ws", "/w"},
				Tmp:      "/run/user/1/spear/tmp/k", StubDir: "/run/user/1/spear/bin", StubTarget: "/opt/spear-shell", Dir: "/w",
			},
			want: base(slices.Concat(
				[]string{
					"--tmpfs", "/home/a/.config/spear",
					"--tmpfs", "/run/user/1",
					// /tmp/x/home lies in the host's /tmp, which the turn's own replaces
					"--bind", "/run/user/1/spear/tmp/k", "/tmp",
					"--bind", "/run/user/1/spear/tmp/k", "/var/tmp",
				}, shm, []string{
					"--bind", "/run/user/1/ws", "/run/user/1/ws",
					"--bind", "/w", "/w",
					"--dir", "/run/user/1/spear/bin",
					"--symlink", "/opt/spear-shell", "/run/user/1/spear/bin/spear-capability",
					"--remount-ro", "/home/a/.config/spear",
					"--remount-ro", "/run/user/1",
					"--chdir", "/w",
				}, cmd)...),
		},
		{
			name: "a stub in no visible mask gets a tmpfs of its own",
			b: Boundary{Bwrap: "/usr/bin/bwrap", Masks: []string{"/tmp/r/spear"}, Tmp: "/tmp/r/spear/tmp/k",
				StubDir: "/tmp/r/spear/bin", StubTarget: "/x/spear-shell"},
			want: base(slices.Concat(
				[]string{
					"--bind", "/tmp/r/spear/tmp/k", "/tmp",
					"--bind", "/tmp/r/spear/tmp/k", "/var/tmp",
				}, shm, []string{
					"--tmpfs", "/tmp/r/spear/bin",
					"--dir", "/tmp/r/spear/bin",
					"--symlink", "/x/spear-shell", "/tmp/r/spear/bin/spear-capability",
					"--remount-ro", "/tmp/r/spear/bin",
				}, cmd)...),
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
	want := "--cap-drop ALL --ro-bind / / --dev /dev --proc /proc --unshare-pid --new-session --die-with-parent --setenv " + BoundaryMarker + " bwrap"
	if got != want {
		t.Errorf("base options %q, want %q", got, want)
	}
	for _, bad := range []string{"--unshare-net", "--unshare-all", "--clearenv", "--uid", "--bind", "--dev-bind"} {
		if slices.Contains(baseOptions, bad) {
			t.Errorf("base options contain %s", bad)
		}
	}
}

func TestSpearHome(t *testing.T) {
	t.Parallel()
	tests := []struct {
		env  []string
		home string
	}{
		{[]string{"HOME", "/h"}, "/h/.config/spear"},
		{[]string{"HOME", "/h", "XDG_CONFIG_HOME", "/x"}, "/x/spear"},
		{[]string{"HOME", "/h", "XDG_CONFIG_HOME", "rel"}, "/h/.config/spear"},
		{[]string{"SPEAR_HOME", "/s", "XDG_CONFIG_HOME", "/x", "XDG_RUNTIME_DIR", "/run/user/7"}, "/s"},
		{[]string{"TMPDIR", "/var/tmp"}, ""},
		{[]string{"XDG_RUNTIME_DIR", "relative", "TMPDIR", "/t", "HOME", "/h"}, "/h/.config/spear"},
	}
	for _, tt := range tests {
		if got := SpearHome(envOf(tt.env...)); got != tt.home {
			t.Errorf("%v: SpearHome %q, want %q", tt.env, got, tt.home)
		}
	}
}

func mkdir(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(p, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// mkfifo makes a FIFO: opening it for reading blocks, so a plan that read it would hang.
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

// planOf runs PlanBoundary with a deadline (reading any FIFO would block it) in root r, with
// bwrap, bash and the test binary as the executables.
func planOf(t *testing.T, r string, env []string, manifest string) *Plan {
	t.Helper()
	done := make(chan *Plan, 1)
	getenv := envOf(env...)
	go func() {
		parent, err := paths.EnsureStateParent(getenv)
		if err != nil {
			t.Error(err)
		}
		done <- PlanBoundary(getenv, manifest, parent, r+"/ws", []string{"/usr/bin/bwrap", "/bin/bash", "/usr/bin/env"}, []string{"bwrap", "real shell", "spear-shell"})
	}()
	select {
	case p := <-done:
		return p
	case <-time.After(20 * time.Second):
		t.Fatal("PlanBoundary blocked: it opened a file other than the manifest")
		return nil
	}
}

func TestPlanBoundary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// setup lays out files under root r (r/ws exists) and returns env pairs and the manifest.
		setup func(t *testing.T, r string) ([]string, string)
		masks func(r string) []string // when it is made
		err   func(r string) string   // when it is refused: the whole error
	}{
		{
			name: "no manifest: the working directory is the workspace; config files never opened",
			setup: func(t *testing.T, r string) ([]string, string) {
				mkfifo(t, r+"/h/.config/spear/capabilities.json")
				mkfifo(t, r+"/h/.config/spear/projects.json")
				return []string{"HOME", r + "/h"}, ""
			},
			masks: func(r string) []string { return []string{r + "/h/.config/spear", r + "/h/.local/state/spear"} },
		},
		{
			name: "files outside SPEAR_HOME mask their directories; inside it they are covered",
			setup: func(t *testing.T, r string) ([]string, string) {
				mkfifo(t, r+"/etc/caps.json")
				mkfifo(t, r+"/logs/audit.jsonl")
				mkfifo(t, r+"/home/audit.jsonl")
				writeFile(t, r+"/turns/m.json", `{"turn":"t","workspace":"`+r+`/ws","audit":"`+r+`/logs2/a.jsonl","state_dir":"`+r+`/st"}`)
				return []string{"SPEAR_HOME", r + "/home", "SPEAR_CAPABILITIES_FILE", r + "/etc/caps.json",
					"SPEAR_AUDIT_FILE", r + "/home/audit.jsonl", "XDG_RUNTIME_DIR", r + "/run"}, r + "/turns/m.json"
			},
			masks: func(r string) []string {
				return []string{r + "/etc", r + "/home", r + "/logs2", r + "/run", r + "/st", r + "/turns"}
			},
		},
		{
			name: "symlinks resolved; a state_dir inside SPEAR_HOME is covered by it",
			setup: func(t *testing.T, r string) ([]string, string) {
				mkdir(t, r+"/real/home/state", 0o700)
				symlink(t, r+"/real/home", r+"/link")
				writeFile(t, r+"/t/m.json", `{"workspace":"`+r+`/ws","state_dir":"`+r+`/link/state"}`)
				return []string{"SPEAR_HOME", r + "/link", "XDG_RUNTIME_DIR", r + "/run"}, r + "/t/m.json"
			},
			masks: func(r string) []string { return []string{r + "/real/home", r + "/run", r + "/t"} },
		},
		{
			name: "a manifest policy refuses: the working directory, as without one; the manifest still masked",
			setup: func(t *testing.T, r string) ([]string, string) {
				writeFile(t, r+"/t/m.json", `{"turn":"t","workspace":"ws","writable":["`+r+`/cache"]}`)
				return []string{"XDG_RUNTIME_DIR", r + "/run", "SPEAR_HOME", r + "/home"}, r + "/t/m.json"
			},
			masks: func(r string) []string { return []string{r + "/home", r + "/run", r + "/t"} },
		},
		{
			name: "SPEAR_HOME in the workspace",
			setup: func(t *testing.T, r string) ([]string, string) {
				return []string{"SPEAR_HOME", r + "/ws/.spear", "XDG_RUNTIME_DIR", r + "/run"}, ""
			},
			err: func(r string) string {
				return "boundary: " + r + "/ws/.spear: would be created in the writable root " + r + "/ws"
			},
		},
		{
			name: "SPEAR_HOME's parent a symlink in the workspace",
			setup: func(t *testing.T, r string) ([]string, string) {
				mkdir(t, r+"/cfg/spear", 0o700)
				symlink(t, r+"/cfg", r+"/ws/cfg")
				return []string{"SPEAR_HOME", r + "/ws/cfg/spear", "XDG_RUNTIME_DIR", r + "/run"}, ""
			},
			err: func(r string) string {
				return "boundary: " + r + "/ws/cfg/spear: passes through the symlink " + r + "/ws/cfg in the writable root " + r + "/ws"
			},
		},
		{
			name: "the manifest reached through a symlink in a writable entry",
			setup: func(t *testing.T, r string) ([]string, string) {
				writeFile(t, r+"/t/m.json", `{"workspace":"`+r+`/ws","writable":["`+r+`/cache"]}`)
				mkdir(t, r+"/cache", 0o700)
				symlink(t, r+"/t", r+"/cache/t")
				return []string{"XDG_RUNTIME_DIR", r + "/run"}, r + "/cache/t/m.json"
			},
			err: func(r string) string {
				return "boundary: " + r + "/cache/t/m.json: passes through the symlink " + r + "/cache/t in the writable root " + r + "/cache"
			},
		},
		{
			name: "the manifest in the workspace would mask it",
			setup: func(t *testing.T, r string) ([]string, string) {
				writeFile(t, r+"/ws/m.json", `{"workspace":"`+r+`/ws"}`)
				return []string{"XDG_RUNTIME_DIR", r + "/run"}, r + "/ws/m.json"
			},
			err: func(r string) string { return "boundary: " + r + "/ws/m.json: lies in the writable root " + r + "/ws" },
		},
		{
			name: "a mask on /tmp is refused",
			setup: func(t *testing.T, r string) ([]string, string) {
				return []string{"XDG_RUNTIME_DIR", r + "/run", "SPEAR_AUDIT_FILE", "/tmp/audit.jsonl"}, ""
			},
			err: func(r string) string {
				return "boundary: /tmp: the directory of SPEAR_AUDIT_FILE would be masked, and masking /tmp hides what the shell needs; keep it in a directory of its own"
			},
		},
		{
			name: "a mask on HOME is refused",
			setup: func(t *testing.T, r string) ([]string, string) {
				return []string{"XDG_RUNTIME_DIR", r + "/run", "HOME", r + "/h", "SPEAR_CAPABILITIES_FILE", r + "/h/caps.json"}, ""
			},
			err: func(r string) string {
				return "boundary: " + r + "/h: the directory of SPEAR_CAPABILITIES_FILE would be masked, and masking " + r + "/h hides what the shell needs; keep it in a directory of its own"
			},
		},
		{
			name: "writable entries: relative refused",
			setup: func(t *testing.T, r string) ([]string, string) {
				writeFile(t, r+"/t/m.json", `{"workspace":"`+r+`/ws","writable":["cache"]}`)
				return []string{"XDG_RUNTIME_DIR", r + "/run"}, r + "/t/m.json"
			},
			err: func(r string) string {
				return "boundary: " + r + `/t/m.json: "writable" entry "cache" is not an absolute path`
			},
		},
		{
			name: "writable entries: the host's /tmp refused",
			setup: func(t *testing.T, r string) ([]string, string) {
				writeFile(t, r+"/t/m.json", `{"workspace":"`+r+`/ws","writable":["/tmp/"]}`)
				return []string{"XDG_RUNTIME_DIR", r + "/run"}, r + "/t/m.json"
			},
			err: func(r string) string {
				return "boundary: /tmp/: cannot be writable: the host's /tmp and everything in it would be reachable"
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			mkdir(t, r+"/ws", 0o700)
			mkdir(t, r+"/run", 0o700)
			env, manifest := tt.setup(t, r)
			p := planOf(t, r, env, manifest)
			if tt.err != nil {
				if p.Err == nil || p.Err.Error() != tt.err(r) {
					t.Fatalf("plan error:\n got %v\nwant %s", p.Err, tt.err(r))
				}
				return
			}
			if p.Err != nil {
				t.Fatalf("refused: %v", p.Err)
			}
			if want := tt.masks(r); !slices.Equal(p.Masks, want) {
				t.Errorf("masks:\n got %q\nwant %q", p.Masks, want)
			}
			for _, d := range p.Masks {
				if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
					t.Errorf("mask %s: %v", d, err)
				}
			}
			if !slices.Contains(p.Writable, r+"/ws") || !slices.Contains(p.Roots, p.Tmp) {
				t.Errorf("writable %q roots %q tmp %q", p.Writable, p.Roots, p.Tmp)
			}
			if fi, err := os.Lstat(p.Tmp); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
				t.Errorf("turn tmp %s: %v %v", p.Tmp, fi, err)
			}
		})
	}
}

// The turn's temporary directory is the same for every process of a turn and differs between turns.
func TestTurnTmp(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	a := turnTmp(parent, turnManifest{Turn: "t1", Session: "s"}, "/m.json", "/ws")
	b := turnTmp(parent, turnManifest{Turn: "t1", Session: "s"}, "/m.json", "/ws")
	c := turnTmp(parent, turnManifest{Turn: "t2", Session: "s"}, "/m.json", "/ws")
	if a == "" || a != b || a == c || filepath.Dir(a) != parent+"/tmp" {
		t.Errorf("turnTmp: %q %q %q", a, b, c)
	}
	// A symlink planted where a turn's directory goes is not followed.
	d := filepath.Join(parent, "tmp", "x")
	symlink(t, t.TempDir(), d)
	if paths.PrivateDir(d) == nil {
		t.Error("a symlinked turn directory was accepted")
	}
}

func TestShellEnv(t *testing.T) {
	t.Parallel()
	fn := stubFuncVar + "=" + StubFunc("/s/spear-capability")
	tests := []struct {
		name     string
		environ  []string
		confined bool
		want     []string
	}{
		{
			name:     "drops SPEAR_, prepends the stub, adds the handler",
			environ:  []string{"HOME=/h", "SPEAR_HOME=/s", "PATH=/usr/bin:/bin", "SPEAR_TURN_MANIFEST=/m", "TERM=xterm", "SPEARMINT=1"},
			want:     []string{"HOME=/h", "TERM=xterm", "SPEARMINT=1", fn, "PATH=/s:/usr/bin:/bin"},
			confined: true,
		},
		{
			name:     "confined: the user's services are not named",
			environ:  []string{"DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1/bus", "XDG_RUNTIME_DIR=/run/user/1", "TMUX=/tmp/tmux-1/default,1,0", "TMUX_PANE=%1", "A=1"},
			want:     []string{"A=1", fn, "PATH=/s:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
			confined: true,
		},
		{
			name:    "unconfined they stay",
			environ: []string{"TMUX=/tmp/tmux-1/default,1,0", "XDG_RUNTIME_DIR=/run/user/1"},
			want:    []string{"TMUX=/tmp/tmux-1/default,1,0", "XDG_RUNTIME_DIR=/run/user/1", fn, "PATH=/s:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
		},
		{
			name:    "stub once, later duplicates win, an inherited marker and handler dropped",
			environ: []string{"PATH=/s:/a", "A=1", "A=2", BoundaryMarker + "=x", stubFuncVar + "=() { :; }", "PATH=/b:/s"},
			want:    []string{"A=2", fn, "PATH=/s:/b"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := ShellEnv(tt.environ, "/s", tt.confined)
			if !slices.Equal(got, tt.want) {
				t.Errorf("ShellEnv:\n got %q\nwant %q", got, tt.want)
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
