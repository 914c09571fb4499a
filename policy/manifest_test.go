package policy

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

const manifestCwd = "/work/tree"

var manifestBase = Manifest{Turn: "t1", Workspace: manifestCwd, WorkspaceDefaulted: true, Task: "implementation", Runtime: "gateway", PermissionMode: "ask", Terminal: "none", ApproverTimeout: 120 * time.Second,
	KeepProviders: 300 * time.Second}

func manifestWith(f func(m *Manifest)) *Manifest {
	m := manifestBase
	f(&m)
	return &m
}

// manifestTests are manifests and what LoadManifest makes of them (with cwd
// manifestCwd); they seed FuzzLoadManifest too.
var manifestTests = []struct {
	name, json string
	want       *Manifest
	key, msg   string // the error's key and message substring
}{
	{"minimal", `{"turn": "t1", "task": "implementation"}`, &manifestBase, "", ""},
	{"everything", `{"turn": "T.1_a-b", "session": "s-9", "workspace": "/src/fw-a/x", "project": "fw-a",
		"task": "mixed", "pass": "implementation", "runtime": "earlier", "permission_mode": "auto-approve",
		"approver": ["/usr/bin/approve", "--turn", "$TURN"], "approver_timeout": 1.5,
		"audit": "/var/log/a.jsonl", "state_dir": "/run/spear/x", "terminal": "codex", "keep_providers": 0}`,
		&Manifest{Turn: "T.1_a-b", Session: "s-9", Workspace: "/src/fw-a/x", Project: "fw-a", Task: "mixed",
			Pass: "implementation", Runtime: "earlier", PermissionMode: "auto-approve",
			Approver: []string{"/usr/bin/approve", "--turn", "$TURN"}, ApproverTimeout: 1500 * time.Millisecond,
			Audit: "/var/log/a.jsonl", StateDir: "/run/spear/x", Terminal: "codex"}, "", ""},
	{"keep_providers most", `{"turn": "t1", "task": "implementation", "keep_providers": 86400}`,
		manifestWith(func(m *Manifest) { m.KeepProviders = 24 * time.Hour }), "", ""},
	{"keep_providers negative", `{"turn": "t1", "task": "implementation", "keep_providers": -1}`, nil, "keep_providers", "between 0 and 86400"},
	{"keep_providers too many", `{"turn": "t1", "task": "implementation", "keep_providers": 86401}`, nil, "keep_providers", "between 0 and 86400"},
	{"keep_providers fraction", `{"turn": "t1", "task": "implementation", "keep_providers": 1.5}`, nil, "keep_providers", "integer"},
	{"keep_providers string", `{"turn": "t1", "task": "implementation", "keep_providers": "300"}`, nil, "keep_providers", "not string"},
	{"keep_providers null", `{"turn": "t1", "task": "implementation", "keep_providers": null}`, nil, "keep_providers", "not null"},
	{"general read-only", `{"turn": "t1", "task": "general", "permission_mode": "read-only"}`,
		manifestWith(func(m *Manifest) { m.Task = "general"; m.PermissionMode = "read-only" }), "", ""},
	{"standard-question", `{"turn": "t1", "task": "standard-question"}`,
		manifestWith(func(m *Manifest) { m.Task = "standard-question" }), "", ""},
	{"workspace kept as written", `{"turn": "t1", "task": "implementation", "workspace": "/src/a/../b/"}`,
		manifestWith(func(m *Manifest) { m.Workspace, m.WorkspaceDefaulted = "/src/a/../b/", false }), "", ""},
	{"turn 128", `{"turn": "` + strings.Repeat("a", 128) + `", "task": "implementation"}`,
		manifestWith(func(m *Manifest) { m.Turn = strings.Repeat("a", 128) }), "", ""},

	{"missing turn", `{"task": "implementation"}`, nil, "turn", "required"},
	{"missing task", `{"turn": "t1"}`, nil, "task", "required"},
	{"empty turn", `{"turn": "", "task": "implementation"}`, nil, "turn", "must match"},
	{"turn 129", `{"turn": "` + strings.Repeat("a", 129) + `", "task": "implementation"}`, nil, "turn", "must match"},
	{"turn slash", `{"turn": "a/b", "task": "implementation"}`, nil, "turn", "must match"},
	{"turn space", `{"turn": "a b", "task": "implementation"}`, nil, "turn", "must match"},
	{"turn newline", `{"turn": "a\nb", "task": "implementation"}`, nil, "turn", "must match"},
	{"turn number", `{"turn": 1, "task": "implementation"}`, nil, "turn", "must be a string, not number"},
	{"session bad", `{"turn": "t", "session": "s;rm", "task": "implementation"}`, nil, "session", "must match"},
	{"session empty", `{"turn": "t", "session": "", "task": "implementation"}`, nil, "session", "must match"},
	{"session null", `{"turn": "t", "session": null, "task": "implementation"}`, nil, "session", "not null"},
	{"task unknown", `{"turn": "t", "task": "Implementation"}`, nil, "task", "must be one of"},
	{"mixed without pass", `{"turn": "t", "task": "mixed"}`, nil, "pass", "required with task mixed"},
	{"pass without mixed", `{"turn": "t", "task": "implementation", "pass": "implementation"}`, nil, "pass", "only allowed with task mixed"},
	{"pass with general", `{"turn": "t", "task": "general", "pass": "compliance-check"}`, nil, "pass", "only allowed"},
	{"pass unknown", `{"turn": "t", "task": "mixed", "pass": "review"}`, nil, "pass", "must be one of"},
	{"runtime unknown", `{"turn": "t", "task": "implementation", "runtime": "later"}`, nil, "runtime", "must be one of"},
	{"mode unknown", `{"turn": "t", "task": "implementation", "permission_mode": "yolo"}`, nil, "permission_mode", "must be one of"},
	{"mode case", `{"turn": "t", "task": "implementation", "permission_mode": "Ask"}`, nil, "permission_mode", "must be one of"},
	{"workspace relative", `{"turn": "t", "task": "implementation", "workspace": "src"}`, nil, "workspace", "absolute"},
	{"workspace not expanded", `{"turn": "t", "task": "implementation", "workspace": "$HOME/src"}`, nil, "workspace", "nothing is expanded"},
	{"workspace tilde", `{"turn": "t", "task": "implementation", "workspace": "~/src"}`, nil, "workspace", "absolute"},
	{"workspace empty", `{"turn": "t", "task": "implementation", "workspace": ""}`, nil, "workspace", "absolute"},
	{"project bad", `{"turn": "t", "task": "implementation", "project": "FW"}`, nil, "project", "must match"},
	{"approver empty", `{"turn": "t", "task": "implementation", "approver": []}`, nil, "approver", "must not be empty"},
	{"approver string", `{"turn": "t", "task": "implementation", "approver": "/bin/true"}`, nil, "approver", "array of strings"},
	{"approver relative", `{"turn": "t", "task": "implementation", "approver": ["approve"]}`, nil, "approver", "absolute"},
	{"approver var", `{"turn": "t", "task": "implementation", "approver": ["$HOME/approve"]}`, nil, "approver", "absolute"},
	{"approver element", `{"turn": "t", "task": "implementation", "approver": ["/bin/a", 1]}`, nil, "approver", "element 1"},
	{"approver timeout zero", `{"turn": "t", "task": "implementation", "approver_timeout": 0}`, nil, "approver_timeout", "positive"},
	{"approver timeout string", `{"turn": "t", "task": "implementation", "approver_timeout": "5"}`, nil, "approver_timeout", "number"},
	{"approver timeout huge", `{"turn": "t", "task": "implementation", "approver_timeout": 1e12}`, nil, "approver_timeout", "at most"},
	{"audit relative", `{"turn": "t", "task": "implementation", "audit": "audit.jsonl"}`, nil, "audit", "absolute"},
	{"terminal claude-code", `{"turn": "t1", "task": "implementation", "terminal": "claude-code"}`,
		manifestWith(func(m *Manifest) { m.Terminal = "claude-code" }), "", ""},
	{"terminal gemini", `{"turn": "t1", "task": "implementation", "terminal": "gemini"}`,
		manifestWith(func(m *Manifest) { m.Terminal = "gemini" }), "", ""},
	{"terminal terminal-bench", `{"turn": "t1", "task": "implementation", "terminal": "terminal-bench"}`,
		manifestWith(func(m *Manifest) { m.Terminal = "terminal-bench" }), "", ""},
	{"terminal none", `{"turn": "t1", "task": "implementation", "terminal": "none"}`, &manifestBase, "", ""},
	{"terminal unknown", `{"turn": "t", "task": "implementation", "terminal": "claude"}`, nil, "terminal", "must be one of"},
	{"terminal case", `{"turn": "t", "task": "implementation", "terminal": "Codex"}`, nil, "terminal", "must be one of"},
	{"terminal empty", `{"turn": "t", "task": "implementation", "terminal": ""}`, nil, "terminal", "must be one of"},
	{"terminal list", `{"turn": "t", "task": "implementation", "terminal": ["codex"]}`, nil, "terminal", "must be a string"},
	{"state_dir relative", `{"turn": "t", "task": "implementation", "state_dir": "state"}`, nil, "state_dir", "absolute"},
	{"unknown key", `{"turn": "t", "task": "implementation", "tasks": "general"}`, nil, "tasks", "unknown key"},
	{"key case", `{"turn": "t", "task": "implementation", "Turn": "u"}`, nil, "Turn", "unknown key"},
	{"duplicate key", `{"turn": "t", "task": "general", "task": "implementation"}`, nil, "task", "given twice"},
	{"not object", `["turn"]`, nil, "", "must be an object"},
	{"not json", `{"turn": `, nil, "", "not valid JSON"},
}

func TestLoadManifest(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	const cwd = manifestCwd
	tests := manifestTests
	for i, tt := range tests {
		path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".json")
		writeFile(t, path, tt.json)
		got, err := LoadManifest(path, cwd)
		if tt.want != nil {
			if got != nil && string(got.Source) != tt.json {
				t.Errorf("%d %s: Source = %q, want the file's bytes", i, tt.name, got.Source)
			}
			if got != nil {
				got.Source = nil
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%d %s: LoadManifest = %#v, %v; want %#v", i, tt.name, got, err, tt.want)
			}
			continue
		}
		var p *Problem
		if got != nil || !errors.As(err, &p) {
			t.Errorf("%s: LoadManifest = %#v, %v; want a *Problem", tt.name, got, err)
			continue
		}
		if p.Key != tt.key || !strings.Contains(p.Msg, tt.msg) || p.File != path {
			t.Errorf("%s: problem %#v, want key %q msg %q file %s", tt.name, p, tt.key, tt.msg, path)
		}
		if tt.key != "" && !strings.Contains(err.Error(), `key "`+tt.key+`"`) {
			t.Errorf("%s: error %q does not name key %q", tt.name, err, tt.key)
		}
	}
}

func TestLoadManifestFile(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	const doc = `{"turn": "t1", "task": "implementation"}`
	path := filepath.Join(dir, "turn.json")
	writeFile(t, path, doc)

	if _, err := LoadManifest(path, "relative/cwd"); err == nil || !strings.Contains(err.Error(), `key "workspace"`) {
		t.Errorf("relative cwd: error %v, want one naming workspace", err)
	}
	if m, err := LoadManifest(path, dir); err != nil || m.Workspace != dir {
		t.Errorf("cwd default: %+v, %v", m, err)
	}
	if _, err := LoadManifest(filepath.Join(dir, "none.json"), dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: error %v, want not exist", err)
	}
	if _, err := LoadManifest("turn.json", dir); err == nil || !strings.Contains(err.Error(), "absolute") {
		t.Errorf("relative path: error %v", err)
	}
	for _, mode := range []os.FileMode{0o620, 0o602, 0o666} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		_, err := LoadManifest(path, dir)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "mode 0"+modeOctal(mode)) {
			t.Errorf("mode %04o: error %v, want refused naming file and mode", mode, err)
		}
	}
}
