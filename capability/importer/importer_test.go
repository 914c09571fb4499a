package importer

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestID(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{"mem", "mem"}, {"Every_Thing", "every_thing"}, {"My.Server", "my-server"}, {"a b/c", "a-b-c"},
		{"GitHub", "github"}, {"9lives", "9lives"}, {"é", "--"}, {"", ""},
	} {
		if got := ID(tt.in); got != tt.want {
			t.Errorf("ID(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRefersToVariable(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{
		"${HOME}/x": true, "$HOME": true, "a${X:-d}": true, "$_x": true,
		"$": false, "a$": false, "$1": false, "cost $5": false, "plain": false, "100%": false,
	} {
		if got := refersToVariable(in); got != want {
			t.Errorf("refersToVariable(%q) = %v", in, got)
		}
	}
}

func TestParseTerminals(t *testing.T) {
	t.Parallel()
	none := func(string) ([]byte, error) { return nil, nil }
	tests := []struct {
		terminal, data string
		want           []server
		err            string
	}{
		{"claude-code", `{"mcpServers": {"a": {"type": "stdio", "command": "x", "args": ["1"], "env": {"B": "2", "A": "1"}, "alwaysLoad": true, "zz": 1}}}`,
			[]server{{name: "a", transport: "stdio", command: "x", args: []string{"1"}, env: []envVar{{"B", "2"}, {"A", "1"}}, notCarried: []string{"alwaysLoad"}, unknown: []string{"zz"}}}, ""},
		{"claude-code", `{"mcpServers": {"h": {"url": "https://x"}}}`, []server{{name: "h", transport: "http"}}, ""},
		{"claude-code", `{}`, nil, ""},
		{"claude-code", `[]`, nil, "not valid JSON"},
		{"claude-code", `{"mcpServers": {"a": {"env": {"A": 1}}}}`, nil, `variable "A": not a string`},
		{"gemini", `{"mcpServers": {"a": {"command": "x", "excludeTools": ["p,q", " r "], "includeTools": []}}}`,
			[]server{{name: "a", transport: "stdio", command: "x", exclude: []string{"p", "q", "r"}, include: []string{}}}, ""},
		{"gemini", `{"mcpServers": {"a": {"httpUrl": "https://x"}, "b": {"url": "https://y"}}}`,
			[]server{{name: "a", transport: "http"}, {name: "b", transport: "sse"}}, ""},
		{"gemini", `{"mcp": {"excluded": ["A"], "allowed": ["a", "b"]}, "mcpServers": {"a": {"command": "x"}, "b": {"command": "x"}, "c": {"command": "x"}}}`,
			[]server{{name: "a", transport: "stdio", command: "x", disabled: "listed in mcp.excluded"}, {name: "b", transport: "stdio", command: "x"},
				{name: "c", transport: "stdio", command: "x", disabled: "not listed in mcp.allowed"}}, ""},
		{"codex", "[mcp_servers.b]\ncommand = \"x\"\nenabled = false\n[mcp_servers.a]\ncommand = \"y\"\nenv_vars = [\"T\"]\n",
			[]server{{name: "b", transport: "stdio", command: "x", disabled: "enabled = false"},
				{name: "a", transport: "stdio", command: "y", leaveOut: "it takes variables from Codex's own environment (env_vars), which spear-shell never passes on"}}, ""},
		{"codex", "mcp_servers.a.command = \"x\"\n[mcp_servers.b]\ncommand = \"y\"\n[mcp_servers]\nc = { command = \"z\" }\n",
			[]server{{name: "a", transport: "stdio", command: "x"}, {name: "b", transport: "stdio", command: "y"}, {name: "c", transport: "stdio", command: "z"}}, ""},
		{"codex", "[mcp_servers.a]\nenabled = \"no\"\n", nil, "mcp_servers.a.enabled: not a boolean"},
		{"codex", "[mcp_servers]\na = 1\n", nil, "mcp_servers.a: not a table"},
		{"codex", "x = [\n", nil, "not valid TOML"},
	}
	for _, tt := range tests {
		st, err := parse(tt.terminal, []byte(tt.data), none)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s %s: error %v, want %q", tt.terminal, tt.data, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %s: %v", tt.terminal, tt.data, err)
			continue
		}
		var got []server
		for _, s := range st.servers {
			got = append(got, *s)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s %s:\n got %+v\nwant %+v", tt.terminal, tt.data, got, tt.want)
		}
	}
}

// Claude Code's settings.json permissions.deny names tools (mcp__SERVER__TOOL) and whole servers.
func TestClaudeDeny(t *testing.T) {
	t.Parallel()
	extra := func(name string) ([]byte, error) {
		return []byte(`{"permissions": {"deny": ["mcp__a__write_file", "mcp__b", "Bash(rm:*)", "mcp__c__*"]}}`), nil
	}
	st, err := parse("claude-code", []byte(`{"mcpServers": {"a": {"command": "x"}, "b": {"command": "x"}, "c": {"command": "x"}}}`), extra)
	if err != nil {
		t.Fatal(err)
	}
	if s := st.servers[0]; !reflect.DeepEqual(s.exclude, []string{"write_file"}) || s.disabled != "" {
		t.Errorf("a: %+v", s)
	}
	for _, s := range st.servers[1:] {
		if s.disabled == "" {
			t.Errorf("%s not disabled", s.name)
		}
	}
}

func TestDecideEnvFileAndClashes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "settings.json")
	write := func(s string) {
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	o := Options{Terminal: "gemini", File: file, Path: "/usr/bin:/bin:relative", SpearHome: filepath.Join(dir, "home")}
	write(`{"mcpServers": {"a": {"command": "sh", "env": {"K": "v"}}, "b": {"command": "sh"}}}`)
	p, err := Decide(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Entries) != 2 || p.Entries[0].EnvFile != filepath.Join(o.SpearHome, "env", "a.env") || p.Entries[1].EnvFile != "" ||
		!filepath.IsAbs(p.Entries[0].Command[0]) || p.Entries[0].Write != "refuse" {
		t.Errorf("entries %+v", p.Entries)
	}
	// Decide writes nothing.
	if _, err := os.Stat(filepath.Join(o.SpearHome, "env")); !os.IsNotExist(err) {
		t.Errorf("Decide wrote: %v", err)
	}
	if err := os.MkdirAll(o.SpearHome, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(o.SpearHome, "capabilities.json"), []byte(`{"providers": [{"id": "b"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Decide(o); err == nil || !strings.Contains(err.Error(), `server "b" maps to the id "b", which`) {
		t.Errorf("taken id: %v", err)
	}
	write(`{"mcpServers": {"x": {"command": "sh"}}}`)
	o.Scope = "path relative"
	if _, err := Decide(o); err == nil || !strings.Contains(err.Error(), "--scope") {
		t.Errorf("bad scope: %v", err)
	}
}
