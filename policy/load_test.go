package policy

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

// regFixture is a SPEAR_HOME with a bin directory holding fake-mcp (executable),
// plain (not executable) and a workspace ws.
type regFixture struct {
	dir   string // @T@
	paths Paths
}

func newRegFixture(t *testing.T) *regFixture {
	t.Helper()
	dir := tempDir(t)
	mkExec(t, filepath.Join(dir, "bin", "fake-mcp"))
	writeFile(t, filepath.Join(dir, "bin", "plain"), "not a program")
	if err := os.MkdirAll(filepath.Join(dir, "ws"), 0o755); err != nil {
		t.Fatal(err)
	}
	return &regFixture{dir: dir, paths: Paths{Home: filepath.Join(dir, "home")}}
}

// write puts projects.json and capabilities.json (templates with @T@) in the home.
func (f *regFixture) write(t *testing.T, projects, caps string) {
	t.Helper()
	writeFile(t, filepath.Join(f.paths.Home, "projects.json"), expand(projects, f.dir))
	writeFile(t, filepath.Join(f.paths.Home, "capabilities.json"), expand(caps, f.dir))
}

func (f *regFixture) load(t *testing.T, projects, caps string) (*Registry, error) {
	t.Helper()
	f.write(t, projects, caps)
	return Load(f.paths)
}

const noProjects = `{"projects": []}`

func ids(ps []Provider) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.ID)
	}
	return out
}

const cmd = `"command": ["@T@/bin/fake-mcp"]`

var long63 = strings.Repeat("a", 63)

// providerEntryTests are bad provider entries: the entry name, key and message
// each must produce. They seed FuzzLoadCapabilities too.
var providerEntryTests = []struct {
	entry               string
	entryName, key, msg string
}{
	{`{` + cmd + `}`, "providers[1]", "id", "required"},
	{`{"id": "x"}`, `provider "x"`, "command", "required"},
	{`{"id": "X", ` + cmd + `}`, `provider "X"`, "id", "must match"},
	{`{"id": "9x", ` + cmd + `}`, `provider "9x"`, "id", "must match"},
	{`{"id": "a/b", ` + cmd + `}`, `provider "a/b"`, "id", "must match"},
	{`{"id": "x y", ` + cmd + `}`, "providers[1]", "id", "must match"},
	{`{"id": "a` + long63 + `", ` + cmd + `}`, `provider "a` + long63 + `"`, "id", "must match"},
	{`{"id": "spear", ` + cmd + `}`, `provider "spear"`, "id", "reserved"},
	{`{"id": 7, ` + cmd + `}`, "providers[1]", "id", "must be a string, not number"},
	{`{"id": null, ` + cmd + `}`, "providers[1]", "id", "not null"},
	{`{"id": "x", "command": []}`, `provider "x"`, "command", "must not be empty"},
	{`{"id": "x", "command": "fake-mcp"}`, `provider "x"`, "command", "array of strings, not string"},
	{`{"id": "x", "command": ["@T@/bin/fake-mcp", 3]}`, `provider "x"`, "command", "element 1"},
	{`{"id": "x", "command": [null]}`, `provider "x"`, "command", "element 0"},
	{`{"id": "x", "command": [""]}`, `provider "x"`, "command", "must not be empty"},
	{`{"id": "x", "command": ["./fake-mcp"]}`, `provider "x"`, "command", "must be absolute"},
	{`{"id": "x", "command": ["bin/fake-mcp"]}`, `provider "x"`, "command", "must be absolute"},
	{`{"id": "x", "command": ["nonesuch"]}`, `provider "x"`, "command", "not found on the system PATH"},
	{`{"id": "x", "command": ["plain"]}`, `provider "x"`, "command", "not found on the system PATH"},
	{`{"id": "x", "command": ["@T@/bin/plain"]}`, `provider "x"`, "command", "not executable"},
	{`{"id": "x", "command": ["@T@/bin"]}`, `provider "x"`, "command", "not a regular file"},
	{`{"id": "x", "command": ["@T@/bin/nonesuch"]}`, `provider "x"`, "command", "cannot be used"},
	{`{"id": "x", "command": ["@T@/bin/fake-mcp", "a\u0000b"]}`, `provider "x"`, "command", "NUL"},
	{`{"id": "x", ` + cmd + `, "scope": "Global"}`, `provider "x"`, "scope", "must be global"},
	{`{"id": "x", ` + cmd + `, "scope": "corpus"}`, `provider "x"`, "scope", "at least one name"},
	{`{"id": "x", ` + cmd + `, "scope": "path rel"}`, `provider "x"`, "scope", "absolute"},
	{`{"id": "x", ` + cmd + `, "scope": ""}`, `provider "x"`, "scope", "must not be empty"},
	{`{"id": "x", ` + cmd + `, "scope": ["global"]}`, `provider "x"`, "scope", "must be a string, not array"},
	{`{"id": "x", ` + cmd + `, "tasks": []}`, `provider "x"`, "tasks", "must not be empty"},
	{`{"id": "x", ` + cmd + `, "tasks": ["standard-question"]}`, `provider "x"`, "tasks", "unknown task class"},
	{`{"id": "x", ` + cmd + `, "tasks": ["Implementation"]}`, `provider "x"`, "tasks", "unknown task class"},
	{`{"id": "x", ` + cmd + `, "tasks": ["general", "general"]}`, `provider "x"`, "tasks", "duplicate"},
	{`{"id": "x", ` + cmd + `, "tasks": "general"}`, `provider "x"`, "tasks", "array of strings"},
	{`{"id": "x", ` + cmd + `, "env": []}`, `provider "x"`, "env", "object of strings, not array"},
	{`{"id": "x", ` + cmd + `, "env": {"1X": "v"}}`, `provider "x"`, "env", `variable "1X": name`},
	{`{"id": "x", ` + cmd + `, "env": {"A=B": "v"}}`, `provider "x"`, "env", "name must match"},
	{`{"id": "x", ` + cmd + `, "env": {"A": 1}}`, `provider "x"`, "env", `variable "A": must be a string, not number`},
	{`{"id": "x", ` + cmd + `, "env": {"A": null}}`, `provider "x"`, "env", "not null"},
	{`{"id": "x", ` + cmd + `, "env": {"A": "x\u0000y"}}`, `provider "x"`, "env", "NUL"},
	{`{"id": "x", ` + cmd + `, "env": {"A": "1", "A": "2"}}`, `provider "x"`, "env", `variable "A" given twice`},
	{`{"id": "x", ` + cmd + `, "read": "t"}`, `provider "x"`, "read", "array of strings"},
	{`{"id": "x", ` + cmd + `, "read": [""]}`, `provider "x"`, "read", "not a tool name"},
	{`{"id": "x", ` + cmd + `, "read": ["a b"]}`, `provider "x"`, "read", "not a tool name"},
	{`{"id": "x", ` + cmd + `, "read": ["t", "t"]}`, `provider "x"`, "read", "duplicate"},
	{`{"id": "x", ` + cmd + `, "write": "Refuse"}`, `provider "x"`, "write", "refuse, confirm or allow"},
	{`{"id": "x", ` + cmd + `, "write": "deny"}`, `provider "x"`, "write", "refuse, confirm or allow"},
	{`{"id": "x", ` + cmd + `, "write": true}`, `provider "x"`, "write", "not boolean"},
	{`{"id": "x", ` + cmd + `, "enabled": "false"}`, `provider "x"`, "enabled", "true or false, not string"},
	{`{"id": "x", ` + cmd + `, "enabled": 0}`, `provider "x"`, "enabled", "true or false"},
	{`{"id": "x", ` + cmd + `, "enabled": null}`, `provider "x"`, "enabled", "not null"},
	{`{"id": "x", ` + cmd + `, "timeout": 0}`, `provider "x"`, "timeout", "positive"},
	{`{"id": "x", ` + cmd + `, "timeout": -1}`, `provider "x"`, "timeout", "positive"},
	{`{"id": "x", ` + cmd + `, "timeout": "30"}`, `provider "x"`, "timeout", "number of seconds, not string"},
	{`{"id": "x", ` + cmd + `, "timeout": 3601}`, `provider "x"`, "timeout", "at most"},
	{`{"id": "x", ` + cmd + `, "timeout": 1e400}`, `provider "x"`, "timeout", "finite"},
	{`{"id": "x", ` + cmd + `, "timeout": 1e-9}`, `provider "x"`, "timeout", "at least"},
	{`{"id": "x", ` + cmd + `, "max_message": "64MiB"}`, `provider "x"`, "max_message", "whole number of bytes, not string"},
	{`{"id": "x", ` + cmd + `, "max_message": 1.5e6}`, `provider "x"`, "max_message", "without a fraction or exponent"},
	{`{"id": "x", ` + cmd + `, "max_message": 1000000.0}`, `provider "x"`, "max_message", "without a fraction or exponent"},
	{`{"id": "x", ` + cmd + `, "max_message": 0}`, `provider "x"`, "max_message", "at least 65536 bytes"},
	{`{"id": "x", ` + cmd + `, "max_message": -1}`, `provider "x"`, "max_message", "at least 65536 bytes"},
	{`{"id": "x", ` + cmd + `, "max_message": 1073741825}`, `provider "x"`, "max_message", "at most 1073741824 bytes"},
	{`{"id": "x", ` + cmd + `, "max_message": 99999999999999999999}`, `provider "x"`, "max_message", "at most 1073741824 bytes"},
	{`{"id": "x", ` + cmd + `, "max_message": null}`, `provider "x"`, "max_message", "not null"},
	{`{"id": "x", ` + cmd + `, "env_file": 1}`, `provider "x"`, "env_file", "must be a string, not number"},
	{`{"id": "x", ` + cmd + `, "env_file": "env/x.env"}`, `provider "x"`, "env_file", "absolute, clean path"},
	{`{"id": "x", ` + cmd + `, "env_file": "@T@/home/../home/x.env"}`, `provider "x"`, "env_file", "absolute, clean path"},
	{`{"id": "x", ` + cmd + `, "env_file": "@T@/home/"}`, `provider "x"`, "env_file", "absolute, clean path"},
	{`{"id": "x", ` + cmd + `, "env_file": "@T@/home"}`, `provider "x"`, "env_file", "must lie under SPEAR_HOME"},
	{`{"id": "x", ` + cmd + `, "env_file": "@T@/home2/x.env"}`, `provider "x"`, "env_file", "must lie under SPEAR_HOME"},
	{`{"id": "x", ` + cmd + `, "env_file": "/etc/passwd"}`, `provider "x"`, "env_file", "capabilities file's directory"},
	{`{"id": "x", ` + cmd + `, "env_file": "@T@/home/x\u0000.env"}`, `provider "x"`, "env_file", "must not contain NUL"},
	{`{"id": "x", ` + cmd + `, "colour": "red"}`, `provider "x"`, "colour", "unknown key"},
	{`{"id": "x", ` + cmd + `, "ID": "y"}`, `provider "x"`, "ID", "unknown key"},
	{`{"id": "x", ` + cmd + `, "Scope": "global"}`, `provider "x"`, "Scope", "unknown key"},
	{`{"id": "x", "id": "y", ` + cmd + `}`, "providers[1]", "id", "given twice"},
	{`{"id": "x", ` + cmd + `, "write": "allow", "write": "refuse"}`, "providers[1]", "write", "given twice"},
}

// Each bad entry is left out, the good one beside it stands, and every problem names
// the entry and the key.
func TestProviderEntryStrictness(t *testing.T) {
	t.Parallel()
	f := newRegFixture(t)
	tests := providerEntryTests
	for i, tt := range tests {
		caps := `{"providers": [{"id": "good", "command": ["@T@/bin/fake-mcp"], "scope": "global"}, ` + tt.entry + `]}`
		reg, err := f.load(t, noProjects, caps)
		if err != nil {
			t.Fatalf("%d %s: Load: %v", i, tt.entry, err)
		}
		if got := ids(reg.Providers); !reflect.DeepEqual(got, []string{"good"}) {
			t.Errorf("%s: providers %v, want [good]", tt.entry, got)
		}
		if len(reg.Rejected) != 1 || reg.Rejected[0].Reason == "" {
			t.Errorf("%s: rejected %+v, want one with a reason", tt.entry, reg.Rejected)
		}
		found := false
		for _, p := range reg.Problems {
			if p.Key == "" {
				t.Errorf("%s: problem without a key: %v", tt.entry, p)
			}
			if p.Entry == tt.entryName && p.Key == tt.key && strings.Contains(p.Msg, tt.msg) {
				found = true
				wantPrefix := filepath.Join(f.paths.Home, "capabilities.json") + ": " + tt.entryName + `: key "` + tt.key + `": `
				if !strings.HasPrefix(p.Error(), wantPrefix) {
					t.Errorf("%s: Error() = %q, want prefix %q", tt.entry, p.Error(), wantPrefix)
				}
			}
		}
		if !found {
			t.Errorf("%s: problems %v, want entry %s key %q msg containing %q", tt.entry, reg.Problems, tt.entryName, tt.key, tt.msg)
		}
	}
}

func TestProviderEntryNotObject(t *testing.T) {
	t.Parallel()
	f := newRegFixture(t)
	reg, err := f.load(t, noProjects, `{"providers": ["x", {"id": "good", "command": ["@T@/bin/fake-mcp"]}, 3, null]}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(reg.Providers); !reflect.DeepEqual(got, []string{"good"}) {
		t.Errorf("providers %v, want [good]", got)
	}
	var entries []string
	for _, p := range reg.Problems {
		entries = append(entries, p.Entry)
		if p.Key != "" || !strings.Contains(p.Msg, "must be an object") {
			t.Errorf("problem %v", p)
		}
	}
	if want := []string{"providers[0]", "providers[2]", "providers[3]"}; !reflect.DeepEqual(entries, want) {
		t.Errorf("problem entries %v, want %v", entries, want)
	}
}

// Valid entries: defaults, and every key's value as parsed.
func TestProviderValid(t *testing.T) {
	t.Parallel()
	f := newRegFixture(t)
	caps := `{"providers": [
		{"id": "min", "command": ["@T@/bin/fake-mcp"]},
		{"id": "full", "command": ["@T@/bin/fake-mcp", "--flag", "$HOME"], "scope": "corpus a,  b",
		 "tasks": ["general"], "env": {"TOKEN": "abc", "PATH": "/opt/bin"}, "read": ["search", "get.issue"],
		 "write": "confirm", "enabled": false, "timeout": 0.25, "max_message": 65536},
		{"id": "a-` + strings.Repeat("x", 61) + `", "command": ["/bin/../bin/sh"], "scope": "path /src/a b", "timeout": 3600, "read": [], "env": {},
		 "max_message": 1073741824}
	]}`
	reg, err := f.load(t, noProjects, caps)
	if err != nil {
		t.Fatal(err)
	}
	if len(reg.Problems) != 0 || len(reg.Rejected) != 0 {
		t.Fatalf("problems %v, rejected %v", reg.Problems, reg.Rejected)
	}
	bin := filepath.Join(f.dir, "bin", "fake-mcp")
	want := []Provider{
		{ID: "min", Command: []string{bin}, Tasks: []string{"implementation", "mixed"}, Write: "refuse", Enabled: true, Timeout: 30 * time.Second,
			MaxMessage: 64 << 20},
		{ID: "full", Command: []string{bin, "--flag", "$HOME"}, Scope: Scope{Kind: "corpus", Names: []string{"a", "b"}},
			Tasks: []string{"general"}, Env: map[string]string{"TOKEN": "abc", "PATH": "/opt/bin"}, Read: []string{"search", "get.issue"},
			Write: "confirm", Enabled: false, Timeout: 250 * time.Millisecond, MaxMessage: 64 << 10},
		{ID: "a-" + strings.Repeat("x", 61), Command: []string{"/bin/sh"}, Scope: Scope{Kind: "path", Path: "/src/a b"},
			Tasks: []string{"implementation", "mixed"}, Env: map[string]string{}, Read: []string{}, Write: "refuse", Enabled: true, Timeout: time.Hour,
			MaxMessage: 1 << 30},
	}
	if !reflect.DeepEqual(reg.Providers, want) {
		t.Errorf("providers\n got %#v\nwant %#v", reg.Providers, want)
	}
	if reg.Home != f.paths.Home {
		t.Errorf("Home %q", reg.Home)
	}
}

func TestDuplicateProviderIDs(t *testing.T) {
	t.Parallel()
	f := newRegFixture(t)
	caps := `{"providers": [
		{"id": "a", "command": ["@T@/bin/fake-mcp"]},
		{"id": "b", "command": ["@T@/bin/fake-mcp"]},
		{"id": "a", "command": ["@T@/bin/fake-mcp"], "scope": "global"},
		{"id": "c", "command": ["nonesuch"]},
		{"id": "c", "command": ["@T@/bin/fake-mcp"]}
	]}`
	reg, err := f.load(t, noProjects, caps)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(reg.Providers); !reflect.DeepEqual(got, []string{"b"}) {
		t.Errorf("providers %v, want [b]", got)
	}
	wantRejected := []string{"a", "a", "c", "c"}
	var got []string
	for _, r := range reg.Rejected {
		got = append(got, r.ID)
	}
	if !reflect.DeepEqual(got, wantRejected) {
		t.Errorf("rejected %v, want %v", reg.Rejected, wantRejected)
	}
	if !strings.Contains(reg.Rejected[0].Reason, "duplicate id") || !strings.Contains(reg.Rejected[0].Reason, "providers[2]") {
		t.Errorf("reason %q", reg.Rejected[0].Reason)
	}
}

// projectEntryTests are bad project entries (beside a good one named "good"); they
// seed FuzzLoadProjects too.
var projectEntryTests = []struct {
	entry               string
	entryName, key, msg string
}{
	{`{"root": "/src/x"}`, "projects[1]", "name", "required"},
	{`{"name": "x"}`, `project "x"`, "root", "required"},
	{`{"name": "X", "root": "/src/x"}`, `project "X"`, "name", "must match"},
	{`{"name": "x_", "root": "src/x"}`, `project "x_"`, "root", "absolute"},
	{`{"name": "x", "root": "~/x"}`, `project "x"`, "root", "absolute"},
	{`{"name": "x", "root": "$HOME/x"}`, `project "x"`, "root", "absolute"},
	{`{"name": "x", "root": ""}`, `project "x"`, "root", "absolute"},
	{`{"name": "x", "root": 5}`, `project "x"`, "root", "must be a string"},
	{`{"name": "x", "root": "/src/x", "families": "fw"}`, `project "x"`, "families", "array of strings"},
	{`{"name": "x", "root": "/src/x", "families": ["Fw"]}`, `project "x"`, "families", "must match"},
	{`{"name": "x", "root": "/src/x", "families": ["fw", "fw"]}`, `project "x"`, "families", "duplicate"},
	{`{"name": "x", "root": "/src/x", "family": ["fw"]}`, `project "x"`, "family", "unknown key"},
	{`{"name": "x", "name": "y", "root": "/src/x"}`, "projects[1]", "name", "given twice"},
	{`{"name": "good", "root": "/src/other"}`, `project "good"`, "name", "duplicate project name"},
	{`{"name": "other", "root": "/src/good/"}`, `project "other"`, "root", "duplicate root"},
	{`{"name": "other", "root": "/src/x/../good"}`, `project "other"`, "root", "duplicate root"},
}

func TestProjectsStrictness(t *testing.T) {
	t.Parallel()
	f := newRegFixture(t)
	tests := projectEntryTests
	for _, tt := range tests {
		projects := `{"projects": [{"name": "good", "root": "/src/good", "families": ["fw"]}, ` + tt.entry + `]}`
		reg, err := f.load(t, projects, `{"providers": []}`)
		if err != nil {
			t.Fatalf("%s: Load: %v", tt.entry, err)
		}
		dup := strings.Contains(tt.msg, "duplicate project") || strings.Contains(tt.msg, "duplicate root")
		var names []string
		for _, p := range reg.Projects {
			names = append(names, p.Name)
		}
		if dup && len(names) != 0 {
			t.Errorf("%s: projects %v, want none (both duplicates left out)", tt.entry, names)
		}
		if !dup && !reflect.DeepEqual(names, []string{"good"}) {
			t.Errorf("%s: projects %v, want [good]", tt.entry, names)
		}
		found := false
		for _, p := range reg.Problems {
			if p.Key == "" {
				t.Errorf("%s: problem without a key: %v", tt.entry, p)
			}
			if p.Entry == tt.entryName && p.Key == tt.key && strings.Contains(p.Msg, tt.msg) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: problems %v, want entry %s key %q msg %q", tt.entry, reg.Problems, tt.entryName, tt.key, tt.msg)
		}
	}
}

func TestProjectsValid(t *testing.T) {
	t.Parallel()
	f := newRegFixture(t)
	reg, err := f.load(t, `{"projects": [{"name": "a", "root": "/src/a/", "families": ["fw", "x-1"]}, {"name": "b", "root": "/src/a/b"}]}`, `{"providers": []}`)
	if err != nil {
		t.Fatal(err)
	}
	want := []Project{{Name: "a", Root: "/src/a", Families: []string{"fw", "x-1"}}, {Name: "b", Root: "/src/a/b"}}
	if !reflect.DeepEqual(reg.Projects, want) || len(reg.Problems) != 0 {
		t.Errorf("projects %#v problems %v, want %#v", reg.Projects, reg.Problems, want)
	}
}

// A file that cannot be used as a whole gives no providers, no projects and an error
// naming the file.
func TestLoadFatal(t *testing.T) {
	t.Parallel()
	const good = `{"providers": [{"id": "a", "command": ["@T@/bin/fake-mcp"], "scope": "global"}]}`
	tests := []struct {
		name     string
		projects string
		caps     string
		file     string // which file the error names
		msg      string
	}{
		{"not json", noProjects, `{"providers": [`, "capabilities.json", "not valid JSON"},
		{"empty", noProjects, ``, "capabilities.json", "not valid JSON"},
		{"trailing data", noProjects, good + ` {}`, "capabilities.json", "not valid JSON"},
		{"invalid utf-8", noProjects, "{\"providers\": [{\"id\": \"a\xff\"}]}", "capabilities.json", "not valid JSON"},
		{"array top", noProjects, `[]`, "capabilities.json", "top level must be an object"},
		{"providers object", noProjects, `{"providers": {}}`, "capabilities.json", `key "providers" must be an array`},
		{"providers null", noProjects, `{"providers": null}`, "capabilities.json", "must be an array, not null"},
		{"missing providers", noProjects, `{}`, "capabilities.json", `missing key "providers"`},
		{"extra top key", noProjects, `{"providers": [], "version": 1}`, "capabilities.json", `unknown key "version"`},
		{"duplicate top key", noProjects, `{"providers": [], "providers": []}`, "capabilities.json", "given twice"},
		{"projects not json", `{"projects": `, good, "projects.json", "not valid JSON"},
		{"projects wrong top", `{"project": []}`, good, "projects.json", `unknown key "project"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newRegFixture(t)
			reg, err := f.load(t, tt.projects, tt.caps)
			if err == nil {
				t.Fatalf("Load succeeded: %+v", reg)
			}
			if len(reg.Providers) != 0 || len(reg.Projects) != 0 {
				t.Errorf("registry not empty: %+v", reg)
			}
			var p *Problem
			if !errors.As(err, &p) || filepath.Base(p.File) != tt.file || p.Key != "" || p.Entry != "" {
				t.Errorf("error %#v, want a file-level problem of %s", err, tt.file)
			}
			if !strings.Contains(err.Error(), tt.msg) || !strings.Contains(err.Error(), tt.file) {
				t.Errorf("error %q, want it to name %s and contain %q", err, tt.file, tt.msg)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

func TestLoadFiles(t *testing.T) {
	t.Parallel()
	const caps = `{"providers": [{"id": "a", "command": ["@T@/bin/fake-mcp"], "scope": "global"}]}`
	projects := `{"projects": [{"name": "p", "root": "/src/p"}]}`

	t.Run("missing capabilities", func(t *testing.T) {
		t.Parallel()
		f := newRegFixture(t)
		writeFile(t, filepath.Join(f.paths.Home, "projects.json"), projects)
		reg, err := Load(f.paths)
		if !errors.Is(err, fs.ErrNotExist) || len(reg.Providers) != 0 || !strings.Contains(err.Error(), "capabilities.json: does not exist") {
			t.Errorf("Load = %+v, %v; want no providers and a not-exist error", reg, err)
		}
	})
	t.Run("missing projects", func(t *testing.T) {
		t.Parallel()
		f := newRegFixture(t)
		writeFile(t, filepath.Join(f.paths.Home, "capabilities.json"), caps)
		reg, err := Load(f.paths)
		if !errors.Is(err, fs.ErrNotExist) || len(reg.Providers) != 0 || !strings.Contains(err.Error(), "projects.json") {
			t.Errorf("Load = %+v, %v; want no providers and a not-exist error", reg, err)
		}
	})
	t.Run("both missing", func(t *testing.T) {
		t.Parallel()
		f := newRegFixture(t)
		_, err := Load(f.paths)
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "projects.json") || !strings.Contains(err.Error(), "capabilities.json") {
			t.Errorf("error %v, want both files named", err)
		}
	})
	t.Run("capabilities file elsewhere", func(t *testing.T) {
		t.Parallel()
		f := newRegFixture(t)
		f.write(t, projects, `{"providers": []}`)
		other := filepath.Join(f.dir, "etc", "caps.json")
		writeFile(t, other, expand(caps, f.dir))
		p := f.paths
		p.CapabilitiesFile = other
		reg, err := Load(p)
		if err != nil || !reflect.DeepEqual(ids(reg.Providers), []string{"a"}) {
			t.Errorf("Load = %+v, %v", reg, err)
		}
	})
	t.Run("relative capabilities file", func(t *testing.T) {
		t.Parallel()
		f := newRegFixture(t)
		f.write(t, projects, caps)
		p := f.paths
		p.CapabilitiesFile = "caps.json"
		if reg, err := Load(p); err == nil || len(reg.Providers) != 0 || !strings.Contains(err.Error(), "absolute") {
			t.Errorf("Load = %+v, %v; want an error", reg, err)
		}
	})
	for _, home := range []string{"", "home", "./x"} {
		t.Run("relative home "+home, func(t *testing.T) {
			t.Parallel()
			if reg, err := Load(Paths{Home: home}); err == nil || len(reg.Providers) != 0 || !strings.Contains(err.Error(), "SPEAR_HOME") {
				t.Errorf("Load = %+v, %v; want an error naming SPEAR_HOME", reg, err)
			}
		})
	}
	t.Run("fifo", func(t *testing.T) {
		t.Parallel()
		f := newRegFixture(t)
		writeFile(t, filepath.Join(f.paths.Home, "projects.json"), projects)
		if err := syscall.Mkfifo(filepath.Join(f.paths.Home, "capabilities.json"), 0o600); err != nil {
			t.Skip(err)
		}
		if _, err := Load(f.paths); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("error %v, want not a regular file", err)
		}
	})
	t.Run("too large", func(t *testing.T) {
		t.Parallel()
		f := newRegFixture(t)
		big := `{"providers": [` + strings.Repeat(" ", MaxConfigBytes) + `]}`
		if _, err := f.load(t, projects, big); err == nil || !strings.Contains(err.Error(), "larger than") {
			t.Errorf("error %v, want larger than", err)
		}
	})
	t.Run("symlinked file", func(t *testing.T) {
		t.Parallel()
		f := newRegFixture(t)
		writeFile(t, filepath.Join(f.paths.Home, "projects.json"), projects)
		target := filepath.Join(f.dir, "real-caps.json")
		writeFile(t, target, expand(caps, f.dir))
		if err := os.Symlink(target, filepath.Join(f.paths.Home, "capabilities.json")); err != nil {
			t.Fatal(err)
		}
		if reg, err := Load(f.paths); err != nil || len(reg.Providers) != 1 {
			t.Errorf("Load = %+v, %v", reg, err)
		}
	})
}

// A group- or world-writable config file is refused; the error names the file and
// the mode.
func TestLoadPermissions(t *testing.T) {
	t.Parallel()
	const caps = `{"providers": [{"id": "a", "command": ["@T@/bin/fake-mcp"], "scope": "global"}]}`
	tests := []struct {
		file string
		mode os.FileMode
		ok   bool
	}{
		{"capabilities.json", 0o600, true},
		{"capabilities.json", 0o644, true},
		{"capabilities.json", 0o400, true},
		{"capabilities.json", 0o620, false},
		{"capabilities.json", 0o664, false},
		{"capabilities.json", 0o602, false},
		{"capabilities.json", 0o666, false},
		{"projects.json", 0o660, false},
		{"projects.json", 0o606, false},
	}
	for _, tt := range tests {
		f := newRegFixture(t)
		f.write(t, `{"projects": []}`, caps)
		path := filepath.Join(f.paths.Home, tt.file)
		if err := os.Chmod(path, tt.mode); err != nil {
			t.Fatal(err)
		}
		reg, err := Load(f.paths)
		if tt.ok {
			if err != nil || len(reg.Providers) != 1 {
				t.Errorf("%s %04o: Load = %+v, %v", tt.file, tt.mode, reg, err)
			}
			continue
		}
		if err == nil || len(reg.Providers) != 0 {
			t.Errorf("%s %04o: Load = %+v, %v; want refused", tt.file, tt.mode, reg, err)
			continue
		}
		if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "mode 0"+modeOctal(tt.mode)) {
			t.Errorf("%s %04o: error %q, want the file and the mode named", tt.file, tt.mode, err)
		}
	}
}

func modeOctal(m os.FileMode) string {
	const digits = "01234567"
	p := uint32(m.Perm())
	return string([]byte{digits[p>>6&7], digits[p>>3&7], digits[p&7]})
}

// command[0] is looked up on the entry's env.PATH, else the fixed system PATH, without
// relative entries; spear-shell's own PATH plays no part.
func TestCommandResolution(t *testing.T) {
	t.Setenv("PATH", "") // must not matter; not parallel because of this
	dir := tempDir(t)
	for _, p := range []string{"good/prog", "rel/prog", "good/both", "later/both", "first/notexec2"} {
		mkExec(t, filepath.Join(dir, p))
	}
	mkExec(t, filepath.Join(dir, "later", "notexec2"))
	if err := os.Chmod(filepath.Join(dir, "first", "notexec2"), 0o644); err != nil {
		t.Fatal(err)
	}
	join := func(dirs ...string) string { return strings.Join(dirs, ":") }
	tests := []struct {
		name  string
		env   map[string]string
		cmd   string
		want  string
		error string
	}{
		{"entry PATH", map[string]string{"PATH": join(dir + "/good")}, "prog", dir + "/good/prog", ""},
		{"system PATH without entry PATH", nil, "sh", "", ""},
		{"not on the system PATH", nil, "prog", "", "not found on the system PATH"},
		{"empty entry", map[string]string{"PATH": ":" + dir + "/good"}, "prog", dir + "/good/prog", ""},
		{"relative entries", map[string]string{"PATH": join("", ".", "rel", "./rel")}, "prog", "", "not found"},
		{"skips non-executable", map[string]string{"PATH": join(dir+"/first", dir+"/later")}, "notexec2", dir + "/later/notexec2", ""},
		{"first match wins", map[string]string{"PATH": join(dir+"/good", dir+"/later")}, "both", dir + "/good/both", ""},
		{"empty entry PATH", map[string]string{"PATH": ""}, "sh", "", "not found"},
		{"absolute", nil, dir + "/good/prog", dir + "/good/prog", ""},
		{"absolute is cleaned", nil, dir + "/good/../good/prog", dir + "/good/prog", ""},
		{"relative with slash", map[string]string{"PATH": dir}, "good/prog", "", "must be absolute"},
		{"dot slash", map[string]string{"PATH": dir + "/good"}, "./prog", "", "must be absolute"},
	}
	for _, tt := range tests {
		got, msg := resolveCommand(tt.cmd, searchDirs(tt.env))
		switch {
		case tt.error == "" && tt.want == "" && (msg != "" || !filepath.IsAbs(got)):
			t.Errorf("%s: resolve %q = %q, %q; want an absolute path", tt.name, tt.cmd, got, msg)
		case tt.error == "" && tt.want != "" && (msg != "" || got != tt.want):
			t.Errorf("%s: resolve %q = %q, %q; want %q", tt.name, tt.cmd, got, msg, tt.want)
		case tt.error != "" && (got != "" || !strings.Contains(msg, tt.error)):
			t.Errorf("%s: resolve %q = %q, %q; want error %q", tt.name, tt.cmd, got, msg, tt.error)
		}
	}
}

func TestDefaultHome(t *testing.T) {
	t.Parallel()
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"SPEAR_HOME": "/etc/spear", "XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/etc/spear"},
		{map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/x/spear"},
		{map[string]string{"XDG_CONFIG_HOME": "rel", "HOME": "/h"}, "/h/.config/spear"},
		{map[string]string{"HOME": "/h"}, "/h/.config/spear"},
		{map[string]string{}, ""},
	}
	for _, tt := range tests {
		if got := DefaultHome(func(k string) string { return tt.env[k] }); got != tt.want {
			t.Errorf("DefaultHome(%v) = %q, want %q", tt.env, got, tt.want)
		}
	}
}
