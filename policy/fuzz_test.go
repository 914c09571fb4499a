package policy

import (
	"path/filepath"
	"slices"
	"testing"
)

// checkProblem holds for every problem: it names its file; an entry problem names
// its key, except for an entry that is not an object; a file-level one names neither.
func checkProblem(t *testing.T, p *Problem, file string) {
	t.Helper()
	if p.File != file || p.Msg == "" {
		t.Fatalf("problem %#v: file or message missing", p)
	}
	if p.Entry != "" && p.Key == "" && p.Msg != errNotObject.Error() {
		t.Fatalf("entry problem without a key: %v", p)
	}
	if p.Entry == "" && p.Key != "" {
		t.Fatalf("key without an entry in a registry file: %v", p)
	}
}

func FuzzLoadCapabilities(f *testing.F) {
	dir := tempDir(f)
	mkExec(f, filepath.Join(dir, "bin", "fake-mcp"))
	for _, tt := range providerEntryTests {
		f.Add(expand(`{"providers": [{"id": "good", "command": ["@T@/bin/fake-mcp"], "scope": "global"}, `+tt.entry+`]}`, dir))
	}
	f.Add(`{"providers": [{"id": "a", "command": ["@T@/bin/fake-mcp"], "env": {"A": "secret-1", "A": "x"}}, {"id": "a", "command": ["@T@/bin/fake-mcp"]}]}`)
	f.Add(`{"providers": [1, null, [], "x"]}`)
	f.Add(`{"providers": {}}`)
	const file = "/etc/spear/capabilities.json"
	f.Fuzz(func(t *testing.T, doc string) {
		if checkJSON(file, []byte(doc)) != nil {
			return
		}
		res := parseProviders(file, "/etc/spear", []byte(doc))
		if res.fatal != nil {
			if res.fatal.Entry != "" || res.fatal.Key != "" || len(res.providers) != 0 {
				t.Fatalf("fatal %#v with providers %v", res.fatal, res.providers)
			}
			return
		}
		for _, p := range res.problems {
			if p.Entry == "" {
				t.Fatalf("entry problem without an entry: %v", p)
			}
			checkProblem(t, p, file)
		}
		if (len(res.problems) == 0) != (len(res.rejected) == 0) {
			t.Fatalf("problems %v but rejected %v", res.problems, res.rejected)
		}
		seen := map[string]bool{}
		for _, p := range res.providers {
			switch {
			case !idRe.MatchString(p.ID) || p.ID == "spear" || seen[p.ID]:
				t.Fatalf("bad or duplicate id %q", p.ID)
			case len(p.Command) == 0 || !filepath.IsAbs(p.Command[0]):
				t.Fatalf("%s: command %q", p.ID, p.Command)
			case p.Timeout < MinTimeout || p.Timeout > MaxTimeout:
				t.Fatalf("%s: timeout %v", p.ID, p.Timeout)
			case p.MaxMessage < MinMaxMessage || p.MaxMessage > MaxMaxMessage:
				t.Fatalf("%s: max_message %d", p.ID, p.MaxMessage)
			case p.Write != WriteRefuse && p.Write != WriteConfirm && p.Write != WriteAllow:
				t.Fatalf("%s: write %q", p.ID, p.Write)
			case len(p.Tasks) == 0:
				t.Fatalf("%s: no tasks", p.ID)
			}
			for _, task := range p.Tasks {
				if task != TaskImplementation && task != TaskMixed && task != TaskGeneral {
					t.Fatalf("%s: task %q", p.ID, task)
				}
			}
			if p.Scope.Kind != "" {
				if back, err := ParseScope(p.Scope.String()); err != nil || back.String() != p.Scope.String() {
					t.Fatalf("%s: scope %#v does not round-trip: %v", p.ID, p.Scope, err)
				}
			}
			for k, v := range p.Env {
				if !envNameRe.MatchString(k) || (len(v) >= MinSecretLen && !slices.Contains(res.secrets, v)) {
					t.Fatalf("%s: env %q not valid or its value not a secret", p.ID, k)
				}
			}
			seen[p.ID] = true
		}
	})
}

func FuzzLoadProjects(f *testing.F) {
	for _, tt := range projectEntryTests {
		f.Add(`{"projects": [{"name": "good", "root": "/src/good", "families": ["fw"]}, ` + tt.entry + `]}`)
	}
	f.Add(`{"projects": [{"name": "a", "root": "/"}, {"name": "b", "root": "/a/../"}]}`)
	f.Add(`{"projects": 1}`)
	const file = "/etc/spear/projects.json"
	f.Fuzz(func(t *testing.T, doc string) {
		if checkJSON(file, []byte(doc)) != nil {
			return
		}
		projects, problems, fatal := parseProjects(file, []byte(doc))
		if fatal != nil {
			if fatal.Entry != "" || fatal.Key != "" || len(projects) != 0 || len(problems) != 0 {
				t.Fatalf("fatal %#v with %v %v", fatal, projects, problems)
			}
			return
		}
		for _, p := range problems {
			checkProblem(t, p, file)
		}
		names, roots := map[string]bool{}, map[string]bool{}
		for _, p := range projects {
			if !nameRe.MatchString(p.Name) || !filepath.IsAbs(p.Root) || filepath.Clean(p.Root) != p.Root || names[p.Name] || roots[p.Root] {
				t.Fatalf("bad or duplicate project %#v", p)
			}
			if checkNames(p.Families) != "" {
				t.Fatalf("bad families %#v", p)
			}
			names[p.Name], roots[p.Root] = true, true
		}
	})
}

func FuzzLoadManifest(f *testing.F) {
	for _, tt := range manifestTests {
		f.Add(tt.json)
	}
	const file = "/run/turn.json"
	f.Fuzz(func(t *testing.T, doc string) {
		if checkJSON(file, []byte(doc)) != nil {
			return
		}
		m, err := parseManifest(file, []byte(doc), manifestCwd)
		if err != nil {
			p, ok := err.(*Problem)
			if !ok || m != nil || p.File != file || p.Entry != "" || p.Msg == "" {
				t.Fatalf("LoadManifest = %#v, %#v", m, err)
			}
			if p.Key == "" && p.Msg != "top level must be an object" {
				t.Fatalf("problem without a key: %v", p)
			}
			return
		}
		switch {
		case !turnRe.MatchString(m.Turn), m.Session != "" && !turnRe.MatchString(m.Session):
			t.Fatalf("turn %q session %q", m.Turn, m.Session)
		case !filepath.IsAbs(m.Workspace):
			t.Fatalf("workspace %q", m.Workspace)
		case (m.Task == TaskMixed) != (m.Pass != ""):
			t.Fatalf("task %q pass %q", m.Task, m.Pass)
		case m.Runtime != RuntimeGateway && m.Runtime != RuntimeEarlier:
			t.Fatalf("runtime %q", m.Runtime)
		case m.PermissionMode != ModeAsk && m.PermissionMode != ModeReadOnly && m.PermissionMode != ModeAutoApprove:
			t.Fatalf("permission_mode %q", m.PermissionMode)
		case m.ApproverTimeout < MinTimeout || m.ApproverTimeout > MaxTimeout:
			t.Fatalf("approver_timeout %v", m.ApproverTimeout)
		case m.Approver != nil && (len(m.Approver) == 0 || !filepath.IsAbs(m.Approver[0])):
			t.Fatalf("approver %q", m.Approver)
		case !slices.Contains([]string{TaskImplementation, TaskMixed, TaskGeneral, TaskStandardQuestion}, m.Task):
			t.Fatalf("task %q", m.Task)
		}
	})
}
