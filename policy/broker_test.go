package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The share keys and the broker object: values, defaults, and errors naming the entry and key.
func TestBrokerSettings(t *testing.T) {
	t.Parallel()
	prog := "/bin/true"
	cases := []struct {
		name, caps string
		want       string // a problem's text, "" for none
		check      func(*testing.T, *Registry)
	}{
		{"defaults", `{"providers": [{"id": "a", "command": ["` + prog + `"], "share": "project"}]}`, "", func(t *testing.T, r *Registry) {
			p := r.Provider("a")
			if p.Share != ShareProject || p.RestartDelay != DefaultRestartDelay {
				t.Errorf("share %q delay %v", p.Share, p.RestartDelay)
			}
			if r.Broker.Idle != DefaultBrokerIdle || r.Broker.FlappingExits != 5 || r.Broker.FlappingWithin != time.Minute ||
				r.Broker.Audit != filepath.Join(r.Home, "audit.jsonl") {
				t.Errorf("broker %+v", r.Broker)
			}
		}},
		{"unshared", `{"providers": [{"id": "a", "command": ["` + prog + `"]}]}`, "", func(t *testing.T, r *Registry) {
			if p := r.Provider("a"); p.Share != "" || p.RestartDelay != 0 {
				t.Errorf("share %q delay %v", p.Share, p.RestartDelay)
			}
		}},
		{"fraction", `{"providers": [{"id": "a", "command": ["` + prog + `"], "share": "all", "restart_delay": 0.25}], "broker": {"idle": 10, "flapping": {"exits": 1, "within": 3600}}}`, "", func(t *testing.T, r *Registry) {
			if p := r.Provider("a"); p.RestartDelay != 250*time.Millisecond {
				t.Errorf("delay %v", p.RestartDelay)
			}
			if r.Broker.Idle != 10*time.Second || r.Broker.FlappingExits != 1 || r.Broker.FlappingWithin != time.Hour {
				t.Errorf("broker %+v", r.Broker)
			}
		}},
		{"zero delay", `{"providers": [{"id": "a", "command": ["` + prog + `"], "share": "all", "restart_delay": 0}]}`, "", nil},
		{"delay without share", `{"providers": [{"id": "a", "command": ["` + prog + `"], "restart_delay": 1}]}`, `provider "a": key "restart_delay": only with share`, nil},
		{"delay too long", `{"providers": [{"id": "a", "command": ["` + prog + `"], "share": "all", "restart_delay": 301}]}`, `provider "a": key "restart_delay": must be between 0 and 300 seconds`, nil},
		{"bad share", `{"providers": [{"id": "a", "command": ["` + prog + `"], "share": "turn"}]}`, `provider "a": key "share": must be project or all`, nil},
		{"idle too short", `{"providers": [], "broker": {"idle": 9}}`, `broker: key "idle": must be between 10 and 86400 seconds`, nil},
		{"exits fraction", `{"providers": [], "broker": {"flapping": {"exits": 2.5}}}`, `broker: key "flapping.exits": must be a whole number between 1 and 100`, nil},
		{"within zero", `{"providers": [], "broker": {"flapping": {"within": 0}}}`, `broker: key "flapping.within": must be between 1 and 3600 seconds`, nil},
		{"unknown", `{"providers": [], "broker": {"idel": 10}}`, `broker: key "idel": unknown key`, nil},
		{"audit outside", `{"providers": [], "broker": {"audit": "/var/log/b.jsonl"}}`, `broker: key "audit": /var/log/b.jsonl lies outside SPEAR_HOME`, nil},
		{"audit relative", `{"providers": [], "broker": {"audit": "b.jsonl"}}`, `broker: key "audit": must be an absolute, clean file path`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			os.WriteFile(filepath.Join(home, "projects.json"), []byte(`{"projects": []}`), 0o600)
			os.WriteFile(filepath.Join(home, "capabilities.json"), []byte(c.caps), 0o600)
			reg, err := Load(Paths{Home: home})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range reg.Problems {
				got = append(got, p.Error())
			}
			all := strings.Join(got, "\n")
			if c.want == "" && all != "" || c.want != "" && !strings.Contains(all, c.want) {
				t.Fatalf("problems:\n%s\nwant %q", all, c.want)
			}
			if c.check != nil {
				c.check(t, reg)
			}
		})
	}
}

// broker.audit may lie in SPEAR_AUDIT_FILE's directory.
func TestBrokerAuditBesideTheAuditFile(t *testing.T) {
	t.Parallel()
	home, logs := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(home, "projects.json"), []byte(`{"projects": []}`), 0o600)
	os.WriteFile(filepath.Join(home, "capabilities.json"), []byte(`{"providers": [], "broker": {"audit": "`+logs+`/broker.jsonl"}}`), 0o600)
	reg, err := Load(Paths{Home: home, AuditFile: filepath.Join(logs, "audit.jsonl")})
	if err != nil || len(reg.Problems) > 0 || reg.Broker.Audit != logs+"/broker.jsonl" {
		t.Fatalf("%v %v %+v", err, reg.Problems, reg.Broker)
	}
}

// Every launch key changes the hash; the per-call keys do not.
func TestLaunchKey(t *testing.T) {
	t.Parallel()
	base := Provider{ID: "a", Command: []string{"/bin/true", "x"}, Env: map[string]string{"A": "1"}, MaxMessage: 1 << 20, Share: ShareAll}
	h := base.LaunchKey("")
	same := base
	same.Scope, same.Timeout, same.Write, same.Read, same.Tasks = Scope{Kind: ScopeGlobal}, time.Hour, WriteAllow, []string{"t"}, []string{TaskGeneral}
	if same.LaunchKey("") != h {
		t.Error("a per-call key changed the launch key")
	}
	for name, p := range map[string]Provider{
		"command":     {ID: "a", Command: []string{"/bin/true", "y"}, Env: base.Env, MaxMessage: base.MaxMessage, Share: ShareAll},
		"env":         {ID: "a", Command: base.Command, Env: map[string]string{"A": "2"}, MaxMessage: base.MaxMessage, Share: ShareAll},
		"max_message": {ID: "a", Command: base.Command, Env: base.Env, MaxMessage: 2 << 20, Share: ShareAll},
		"share":       {ID: "a", Command: base.Command, Env: base.Env, MaxMessage: base.MaxMessage, Share: ShareProject},
	} {
		if p.LaunchKey("") == h {
			t.Errorf("%s did not change the launch key", name)
		}
	}
	// Arguments that spell the env label and a pair, against that pair in env: the same fields
	// in the same order but for the lists' lengths, which keep them apart.
	spelled := Provider{ID: "a", Command: []string{"/bin/true", "env", "A", "1", "env"}, MaxMessage: base.MaxMessage, Share: ShareAll}
	paired := Provider{ID: "a", Command: []string{"/bin/true"}, Env: map[string]string{"A": "1", "env": "env"}, MaxMessage: base.MaxMessage, Share: ShareAll}
	if spelled.LaunchKey("") == paired.LaunchKey("") {
		t.Error("arguments spelling an env pair gave that env's launch key")
	}
	if base.LaunchKey("1:2:3:4") == h {
		t.Error("the env_file's identity did not change the launch key")
	}
}
