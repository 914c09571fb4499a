package policy

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// offerTree lays out, under a temp dir T:
//
//	T/src/fw-a              project fw-a (family firmware)
//	T/src/fw-a/sub
//	T/src/fw-a/vendor/lib   project lib (nested in fw-a, no family)
//	T/src/fw-a2             project fw-a2 (a string prefix of fw-a's root, not inside it)
//	T/src/fw-b              project fw-b (families firmware, board)
//	T/src/fw-b/to-a-sub  -> T/src/fw-a/sub
//	T/src/fw-a/escape    -> T/out
//	T/alias              -> T/src/fw-a/sub (for a path scope written through a symlink)
//	T/linkroot           -> T/real (project linked, rooted at the symlink)
//	T/out, T/src/fw-ax      unregistered (fw-ax: a string prefix match of fw-a)
//	T/src/fw-a/subway       (a string prefix match of the path scope T/src/fw-a/sub)
func offerTree(t *testing.T) string {
	t.Helper()
	dir := tempDir(t)
	for _, d := range []string{"src/fw-a/sub/deep", "src/fw-a/subway", "src/fw-ax", "src/fw-a/vendor/lib/x", "src/fw-a2", "src/fw-b/own", "out", "real/w"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"src/fw-b/to-a-sub": "src/fw-a/sub",
		"src/fw-a/escape":   "out",
		"alias":             "src/fw-a/sub",
		"linkroot":          "real",
	} {
		if err := os.Symlink(filepath.Join(dir, target), filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const offerProjects = `{"projects": [
	{"name": "fw-a", "root": "@T@/src/fw-a", "families": ["firmware"]},
	{"name": "lib", "root": "@T@/src/fw-a/vendor/lib"},
	{"name": "fw-a2", "root": "@T@/src/fw-a2"},
	{"name": "fw-b", "root": "@T@/src/fw-b", "families": ["firmware", "board"]},
	{"name": "linked", "root": "@T@/linkroot"},
	{"name": "gone", "root": "@T@/nonexistent"}
]}`

const offerProviders = `{"providers": [
	{"id": "glob", "command": ["@T@/bin/fake-mcp"], "scope": "global"},
	{"id": "corp-a", "command": ["@T@/bin/fake-mcp"], "scope": "corpus fw-a"},
	{"id": "corp-ab", "command": ["@T@/bin/fake-mcp"], "scope": "corpus fw-b,  fw-a"},
	{"id": "fam", "command": ["@T@/bin/fake-mcp"], "scope": "family firmware"},
	{"id": "board", "command": ["@T@/bin/fake-mcp"], "scope": "family board, nonesuch"},
	{"id": "pathp", "command": ["@T@/bin/fake-mcp"], "scope": "path @T@/src/fw-a/sub"},
	{"id": "pathlink", "command": ["@T@/bin/fake-mcp"], "scope": "path @T@/alias"},
	{"id": "pathgone", "command": ["@T@/bin/fake-mcp"], "scope": "path @T@/nonexistent"},
	{"id": "gen", "command": ["@T@/bin/fake-mcp"], "scope": "global", "tasks": ["general"]},
	{"id": "mixonly", "command": ["@T@/bin/fake-mcp"], "scope": "global", "tasks": ["mixed"]},
	{"id": "allt", "command": ["@T@/bin/fake-mcp"], "scope": "global", "tasks": ["implementation", "mixed", "general"]},
	{"id": "off", "command": ["@T@/bin/fake-mcp"], "scope": "global", "enabled": false, "tasks": ["implementation", "mixed", "general"]},
	{"id": "noscope", "command": ["@T@/bin/fake-mcp"], "tasks": ["implementation", "mixed", "general"]}
]}`

func loadOfferRegistry(t *testing.T) (*Registry, string) {
	t.Helper()
	dir := offerTree(t)
	mkExec(t, filepath.Join(dir, "bin", "fake-mcp"))
	home := filepath.Join(dir, "home")
	writeFile(t, filepath.Join(home, "projects.json"), expand(offerProjects, dir))
	writeFile(t, filepath.Join(home, "capabilities.json"), expand(offerProviders, dir))
	reg, err := Load(Paths{Home: home})
	if err != nil || len(reg.Problems) != 0 {
		t.Fatalf("Load: %v %v", err, reg.Problems)
	}
	return reg, dir
}

func TestResolveProject(t *testing.T) {
	t.Parallel()
	reg, dir := loadOfferRegistry(t)
	tests := []struct {
		workspace string // relative to T unless absolute
		want      string // project name, "" for none
		reason    string
	}{
		{"src/fw-a", "fw-a", ""},
		{"src/fw-a/sub/deep", "fw-a", ""},
		{"src/fw-a/vendor/lib", "lib", ""},   // innermost root wins
		{"src/fw-a/vendor/lib/x", "lib", ""}, // innermost root wins
		{"src/fw-a/vendor", "fw-a", ""},      // above the nested root
		{"src/fw-a2", "fw-a2", ""},           // not inside fw-a by string prefix
		{"src/fw-b/to-a-sub", "fw-a", ""},    // symlink resolved: it lives in fw-a
		{"src/fw-b/own/../to-a-sub", "fw-a", ""},
		{"src/fw-a/../fw-b", "fw-b", ""},                                // .. cleaned after resolving
		{"src/fw-a/escape", "", "not inside any registered project"},    // lexically in fw-a, really in out
		{"src/fw-a/escape/../src/fw-b", "fw-b", ""},                     // .. applies to the symlink's target
		{"src/fw-a/escape/..", "", "not inside any registered project"}, // T itself, not fw-a
		{"out", "", "not inside any registered project"},
		{"src", "", "not inside any registered project"},
		{"linkroot/w", "linked", ""}, // a root written through a symlink
		{"real/w", "linked", ""},
		{"nonexistent", "", "cannot be resolved"},
		{"relative", "", "not absolute"},
	}
	for _, tt := range tests {
		ws := tt.workspace
		if ws != "relative" {
			ws = dir + "/" + ws
		}
		p, resolved, reason := reg.ResolveProject(ws)
		got := ""
		if p != nil {
			got = p.Name
		}
		if got != tt.want || (tt.reason == "") != (reason == "") || !strings.Contains(reason, tt.reason) {
			t.Errorf("ResolveProject(%s) = %q, %q; want %q, %q", tt.workspace, got, reason, tt.want, tt.reason)
		}
		if p != nil && !strings.HasPrefix(resolved, dir+"/") {
			t.Errorf("ResolveProject(%s): resolved %q", tt.workspace, resolved)
		}
	}
}

func TestResolveProjectSameRealRoot(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	if err := os.MkdirAll(filepath.Join(dir, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "real"), filepath.Join(dir, "alias")); err != nil {
		t.Fatal(err)
	}
	reg := &Registry{Projects: []Project{{Name: "a", Root: dir + "/real"}, {Name: "b", Root: dir + "/alias"}}}
	if p, _, reason := reg.ResolveProject(dir + "/real"); p != nil || !strings.Contains(reason, "ambiguous") {
		t.Errorf("ResolveProject = %v, %q; want ambiguous", p, reason)
	}
}

func TestOffer(t *testing.T) {
	t.Parallel()
	reg, dir := loadOfferRegistry(t)
	impl := func(ws string) *Manifest {
		return &Manifest{Turn: "t", Workspace: dir + "/" + ws, Task: "implementation", Runtime: "gateway", PermissionMode: "ask"}
	}
	with := func(m *Manifest, f func(*Manifest)) *Manifest { f(m); return m }
	implA := []string{"glob", "corp-a", "corp-ab", "fam", "allt"}
	tests := []struct {
		name     string
		m        *Manifest
		project  string
		offered  []string
		readOnly bool
		reason   string // Offer.Reason substring when nothing is offered
	}{
		{"implementation in fw-a", impl("src/fw-a"), "fw-a", implA, false, ""},
		{"manifest names the same project", with(impl("src/fw-a"), func(m *Manifest) { m.Project = "fw-a" }), "fw-a", implA, false, ""},
		{"path scope", impl("src/fw-a/sub/deep"), "fw-a", []string{"glob", "corp-a", "corp-ab", "fam", "pathp", "pathlink", "allt"}, false, ""},
		{"symlinked workspace lives in fw-a", impl("src/fw-b/to-a-sub"), "fw-a", []string{"glob", "corp-a", "corp-ab", "fam", "pathp", "pathlink", "allt"}, false, ""},
		{"fw-b", impl("src/fw-b/own"), "fw-b", []string{"glob", "corp-ab", "fam", "board", "allt"}, false, ""},
		{"nested project", impl("src/fw-a/vendor/lib"), "lib", []string{"glob", "allt"}, false, ""},
		{"string-prefix sibling", impl("src/fw-a2"), "fw-a2", []string{"glob", "allt"}, false, ""},
		{"string-prefix of a path scope", impl("src/fw-a/subway"), "fw-a", implA, false, ""},
		{"string-prefix of a root", impl("src/fw-ax"), "", nil, false, "not inside any registered project"},
		{"general", with(impl("src/fw-a"), func(m *Manifest) { m.Task = "general" }), "fw-a", []string{"gen", "allt"}, true, ""},
		{"mixed implementation pass", with(impl("src/fw-a"), func(m *Manifest) { m.Task, m.Pass = "mixed", "implementation" }), "fw-a",
			[]string{"glob", "corp-a", "corp-ab", "fam", "mixonly", "allt"}, false, ""},
		{"mixed normative prepass", with(impl("src/fw-a"), func(m *Manifest) { m.Task, m.Pass = "mixed", "normative-prepass" }), "fw-a", nil, false, "pass normative-prepass"},
		{"mixed compliance check", with(impl("src/fw-a"), func(m *Manifest) { m.Task, m.Pass = "mixed", "compliance-check" }), "fw-a", nil, false, "pass compliance-check"},
		{"standard question", with(impl("src/fw-a"), func(m *Manifest) { m.Task = "standard-question" }), "fw-a", nil, false, "task standard-question"},
		{"runtime earlier", with(impl("src/fw-a"), func(m *Manifest) { m.Runtime = "earlier" }), "fw-a", nil, false, "runtime earlier"},
		{"runtime earlier general", with(impl("src/fw-a"), func(m *Manifest) { m.Runtime, m.Task = "earlier", "general" }), "fw-a", nil, false, "runtime earlier"},
		{"manifest names another project", with(impl("src/fw-a"), func(m *Manifest) { m.Project = "fw-b" }), "fw-a", nil, false, `manifest project "fw-b"`},
		{"manifest names the outer project of a nested one", with(impl("src/fw-a/vendor/lib"), func(m *Manifest) { m.Project = "fw-a" }), "lib", nil, false, `manifest project "fw-a"`},
		{"manifest names an unregistered project", with(impl("src/fw-a"), func(m *Manifest) { m.Project = "nonesuch" }), "fw-a", nil, false, `manifest project "nonesuch"`},
		{"symlink cannot claim fw-b", with(impl("src/fw-b/to-a-sub"), func(m *Manifest) { m.Project = "fw-b" }), "fw-a", nil, false, `manifest project "fw-b"`},
		{"unregistered tree", impl("out"), "", nil, false, "not inside any registered project"},
		{"symlink out of a project", impl("src/fw-a/escape"), "", nil, false, "not inside any registered project"},
		{"dot-dot out of a project", impl("src/fw-a/escape/.."), "", nil, false, "not inside any registered project"},
		{"unregistered, manifest claims fw-a", with(impl("out"), func(m *Manifest) { m.Project = "fw-a" }), "", nil, false, "not inside any registered project"},
		{"missing workspace", impl("nonexistent"), "", nil, false, "cannot be resolved"},
		{"no manifest", nil, "", nil, false, "no valid turn manifest"},
	}
	for _, tt := range tests {
		o := reg.Offer(tt.m)
		var offered []string
		for _, d := range o.Offered() {
			offered = append(offered, d.Provider)
			if d.ReadOnly != tt.readOnly {
				t.Errorf("%s: %s ReadOnly = %v", tt.name, d.Provider, d.ReadOnly)
			}
		}
		if !reflect.DeepEqual(offered, tt.offered) {
			t.Errorf("%s: offered %v, want %v\n%+v", tt.name, offered, tt.offered, o)
		}
		if o.Project != tt.project {
			t.Errorf("%s: project %q, want %q", tt.name, o.Project, tt.project)
		}
		if len(o.Decisions) != len(reg.Providers) {
			t.Fatalf("%s: %d decisions for %d providers", tt.name, len(o.Decisions), len(reg.Providers))
		}
		for i, d := range o.Decisions {
			if d.Provider != reg.Providers[i].ID || d.Reason == "" {
				t.Errorf("%s: decision %d = %+v", tt.name, i, d)
			}
			if !d.Offered && d.ReadOnly {
				t.Errorf("%s: %s not offered but ReadOnly", tt.name, d.Provider)
			}
		}
		if tt.reason != "" && !strings.Contains(o.Reason, tt.reason) {
			t.Errorf("%s: reason %q, want %q", tt.name, o.Reason, tt.reason)
		}
		if len(offered) > 0 && o.Reason != "" {
			t.Errorf("%s: reason %q although providers are offered", tt.name, o.Reason)
		}
		if len(offered) == 0 && o.Reason == "" {
			t.Errorf("%s: nothing offered and no reason", tt.name)
		}
	}
}

// Each provider's reason says which check left it out.
func TestOfferReasons(t *testing.T) {
	t.Parallel()
	reg, dir := loadOfferRegistry(t)
	m := &Manifest{Turn: "t", Workspace: dir + "/src/fw-a2", Task: "implementation", Runtime: "gateway"}
	want := map[string]string{
		"glob":     "scope global and task implementation",
		"corp-a":   "scope corpus fw-a does not include project fw-a2",
		"corp-ab":  "scope corpus fw-b, fw-a does not include project fw-a2",
		"fam":      "scope family firmware does not include project fw-a2",
		"pathp":    "workspace is not inside scope path " + dir + "/src/fw-a/sub",
		"pathgone": "cannot be resolved",
		"gen":      "task implementation not in tasks",
		"mixonly":  "task implementation not in tasks",
		"off":      "disabled",
		"noscope":  "no scope: applies nowhere",
	}
	for _, d := range reg.Offer(m).Decisions {
		if w, ok := want[d.Provider]; ok && !strings.Contains(d.Reason, w) {
			t.Errorf("%s: reason %q, want %q", d.Provider, d.Reason, w)
		}
	}
	g := *m
	g.Task = "general"
	for _, d := range reg.Offer(&g).Decisions {
		if d.Provider == "gen" && (!d.ReadOnly || !strings.Contains(d.Reason, "READ capabilities only")) {
			t.Errorf("general: %+v", d)
		}
	}
}

func TestOfferEmptyRegistry(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	reg := &Registry{Projects: []Project{{Name: "p", Root: dir}}}
	o := reg.Offer(&Manifest{Turn: "t", Workspace: dir, Task: "implementation", Runtime: "gateway"})
	if o.Project != "p" || len(o.Decisions) != 0 || o.Reason != "no provider is registered" {
		t.Errorf("Offer = %+v", o)
	}
}

func TestReach(t *testing.T) {
	t.Parallel()
	reg, _ := loadOfferRegistry(t)
	tests := []struct {
		id                string
		projects, unknown []string
	}{
		{"glob", []string{"fw-a", "lib", "fw-a2", "fw-b", "linked", "gone"}, nil},
		{"corp-ab", []string{"fw-b", "fw-a"}, nil},
		{"fam", []string{"fw-a", "fw-b"}, nil},
		{"board", []string{"fw-b"}, []string{"nonesuch"}},
		{"pathp", []string{"fw-a"}, nil},
		{"pathlink", []string{"fw-a"}, nil},
		{"noscope", nil, nil},
	}
	for _, tt := range tests {
		projects, unknown := reg.Reach(reg.Provider(tt.id))
		if !reflect.DeepEqual(projects, tt.projects) || !reflect.DeepEqual(unknown, tt.unknown) {
			t.Errorf("Reach(%s) = %v, %v; want %v, %v", tt.id, projects, unknown, tt.projects, tt.unknown)
		}
	}
	if reg.Provider("nonesuch") != nil {
		t.Error("Provider(nonesuch) != nil")
	}
}
