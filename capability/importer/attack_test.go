package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// importEnv lays out a user's home (the settings file's place, trusted), SPEAR_HOME with a
// project registered at proj (the agent's), and returns getenv.
func importEnv(t *testing.T) (dir string, getenv func(string) string) {
	t.Helper()
	dir = t.TempDir()
	for _, d := range []string{"home", "spear", "proj", "bin"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(dir, "spear", "projects.json"), `{"projects": [{"name": "p", "root": "`+dir+`/proj"}]}`, 0o600)
	env := map[string]string{"HOME": dir + "/home", "SPEAR_HOME": dir + "/spear", "PATH": dir + "/bin:/usr/bin:/bin"}
	return dir, func(k string) string { return env[k] }
}

func write(t *testing.T, path, text string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
}

// attack (SPEC 9, 15): --read-from-annotations starts the servers outside any boundary. A
// trusted settings file (the user's own) that names a program in a registered project root,
// or a program whose #! interpreter lies there, must not make the import run the agent's
// program: every program started is checked as a provider's is.
func TestAttackImportStartsProjectProgram(t *testing.T) {
	t.Parallel()
	for _, via := range []string{"command", "interpreter"} {
		t.Run(via, func(t *testing.T) {
			t.Parallel()
			dir, getenv := importEnv(t)
			marker := filepath.Join(dir, "ran-outside")
			evil := filepath.Join(dir, "proj", "evil")
			write(t, evil, "#!/bin/sh\ntouch "+marker+"\n", 0o755)
			cmd := evil
			if via == "interpreter" {
				cmd = filepath.Join(dir, "bin", "tool")
				write(t, cmd, "#!"+evil+"\n", 0o755)
			}
			settings := filepath.Join(dir, "home", ".claude.json")
			write(t, settings, `{"mcpServers": {"x": {"command": "`+cmd+`"}}}`, 0o600)
			var out, errb bytes.Buffer
			code := Run(context.Background(), []string{"claude-code", settings, "--read-from-annotations"}, getenv, nil, &out, &errb)
			if _, err := os.Stat(marker); err == nil {
				t.Fatalf("the agent's program ran outside the boundary (exit %d): %s", code, errb.String())
			}
			if code == 0 {
				t.Errorf("exit 0 though a program was refused: %s", errb.String())
			}
		})
	}
}

// attack (SPEC 15): a settings file reached through a symlink into a registered project root
// (the user's default file made a link by the agent) is the agent's: refused for
// --read-from-annotations before anything starts.
func TestAttackImportSettingsSymlink(t *testing.T) {
	t.Parallel()
	dir, getenv := importEnv(t)
	marker := filepath.Join(dir, "ran-outside")
	write(t, filepath.Join(dir, "bin", "srv"), "#!/bin/sh\ntouch "+marker+"\n", 0o755)
	real := filepath.Join(dir, "proj", "settings.json")
	write(t, real, `{"mcpServers": {"x": {"command": "srv"}}}`, 0o600)
	link := filepath.Join(dir, "home", ".claude.json")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := Run(context.Background(), []string{"claude-code", link, "--read-from-annotations"}, getenv, nil, &out, &errb)
	if _, err := os.Stat(marker); err == nil || code != 2 {
		t.Fatalf("a settings file linked into a project root was used (exit %d, ran %v): %s", code, err == nil, errb.String())
	}
}

// attack (SPEC 15, and "terminal escapes never reach the terminal"): hostile server names,
// arguments, env names and unknown keys in a settings file (a project's .mcp.json) reach
// neither stdout nor stderr as control characters; names that collide after lower-casing or
// map to spear are refused with nothing written.
func TestAttackImportHostileNames(t *testing.T) {
	t.Parallel()
	dir, getenv := importEnv(t)
	write(t, filepath.Join(dir, "bin", "srv"), "#!/bin/sh\n", 0o755)
	settings := filepath.Join(dir, "home", "hostile.json")
	write(t, settings, `{"mcpServers": {
		"a\u001b]0;owned\u0007\u009b2J\u202e": {"command": "srv", "args": ["\u009b31m", "\u202eevil", "\u001b[2J"], "env": {"TOKEN": "s3cr3t-value"}, "\u001b[2Junknown": 1},
		"b": {"command": "srv", "env": {"\u001b[2J": "x"}},
		"c": {"type": "\u001b[2Jsse", "url": "https://user:pass@example.com/\u001b[2J"}
	}}`, 0o600)
	var out, errb bytes.Buffer
	Run(context.Background(), []string{"claude-code", settings}, getenv, nil, &out, &errb)
	for name, text := range map[string]string{"stdout": out.String(), "stderr": errb.String()} {
		for i, r := range text {
			if (r < 0x20 && r != '\n') || r == 0x7f || (r >= 0x80 && r < 0xa0) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
				t.Errorf("%s: control character %U at byte %d: %q", name, r, i, text[max(0, i-40):min(len(text), i+40)])
				break
			}
		}
		for _, secret := range []string{"s3cr3t-value", "pass@", "example.com"} {
			if strings.Contains(text, secret) {
				t.Errorf("%s carries %q", name, secret)
			}
		}
	}

	// the escaped document still reads back as the settings' own values
	var doc struct {
		Providers []struct {
			Command []string `json:"command"`
		} `json:"providers"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || len(doc.Providers) != 1 || len(doc.Providers[0].Command) != 4 ||
		doc.Providers[0].Command[1] != "\u009b31m" || doc.Providers[0].Command[2] != "\u202eevil" {
		t.Errorf("the document does not read back as the settings' values: %v %+v", err, doc)
	}

	for _, names := range [][2]string{{"Mem", "mem"}, {"a.b", "a-b"}, {"SPEAR", "x"}} {
		dir, getenv := importEnv(t)
		write(t, filepath.Join(dir, "bin", "srv"), "#!/bin/sh\n", 0o755)
		settings := filepath.Join(dir, "home", "names.json")
		write(t, settings, `{"mcpServers": {"`+names[0]+`": {"command": "srv", "env": {"K": "long-value-1"}}, "`+names[1]+`": {"command": "srv"}}}`, 0o600)
		out.Reset()
		errb.Reset()
		if code := Run(context.Background(), []string{"claude-code", settings}, getenv, nil, &out, &errb); code != 2 {
			t.Errorf("%q and %q: exit %d, want 2: %s", names[0], names[1], code, errb.String())
		}
		if ents, _ := os.ReadDir(filepath.Join(dir, "spear", "env")); len(ents) != 0 {
			t.Errorf("%q and %q: env files written though the import was refused: %v", names[0], names[1], ents)
		}
	}
}

// attack (SPEC 15): a settings file that says one server twice (JSON's repeated member, TOML's
// repeated table or a table after dotted keys) is either refused (exit 2, nothing written) or
// read as the terminal itself reads it (JSON: the last member); never a mix, and never the
// first where the terminal runs the last.
func TestAttackImportRepeatedServer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ terminal, name, text string }{
		{"claude-code", "a.json", `{"mcpServers": {"a": {"command": "first"}, "a": {"command": "srv", "args": ["last"]}}}`},
		{"gemini", "b.json", `{"mcpServers": {"a": {"command": "first"}, "a": {"command": "srv", "args": ["last"]}}}`},
		{"codex", "c.toml", "[mcp_servers.a]\ncommand = \"first\"\n[mcp_servers.a]\ncommand = \"srv\"\nargs = [\"last\"]\n"},
		{"codex", "d.toml", "mcp_servers.a.command = \"first\"\n[mcp_servers.a]\ncommand = \"srv\"\nargs = [\"last\"]\n"},
		{"codex", "e.toml", "[mcp_servers]\na = { command = \"first\" }\n[mcp_servers.a]\nargs = [\"last\"]\n"},
	} {
		dir, getenv := importEnv(t)
		write(t, filepath.Join(dir, "bin", "srv"), "#!/bin/sh\n", 0o755)
		write(t, filepath.Join(dir, "bin", "first"), "#!/bin/sh\n", 0o755)
		settings := filepath.Join(dir, "home", tc.name)
		write(t, settings, tc.text, 0o600)
		var out, errb bytes.Buffer
		code := Run(context.Background(), []string{tc.terminal, settings}, getenv, nil, &out, &errb)
		if code == 2 {
			continue
		}
		if strings.Contains(out.String(), "bin/first") || !strings.Contains(out.String(), `"last"`) || strings.Count(out.String(), `"id"`) != 1 {
			t.Errorf("%s %s: exit %d, not what the terminal runs:\n%s%s", tc.terminal, tc.name, code, out.String(), errb.String())
		}
	}
}

// attack (SPEC 15): a server started by --read-from-annotations that fails with terminal
// escapes on its stderr and in a protocol error does not reach the operator's terminal with
// them.
func TestAttackImportServerOutput(t *testing.T) {
	t.Parallel()
	dir, getenv := importEnv(t)
	write(t, filepath.Join(dir, "bin", "srv"), "#!/bin/sh\nprintf '\\033]0;owned\\007\\033[2J\\302\\233' >&2\nprintf '\\033[2Jnot json\\n'\nexit 3\n", 0o755)
	settings := filepath.Join(dir, "home", ".claude.json")
	write(t, settings, `{"mcpServers": {"x": {"command": "srv"}}}`, 0o600)
	var out, errb bytes.Buffer
	Run(context.Background(), []string{"claude-code", settings, "--read-from-annotations"}, getenv, nil, &out, &errb)
	for name, text := range map[string]string{"stdout": out.String(), "stderr": errb.String()} {
		for i, r := range text {
			if (r < 0x20 && r != '\n') || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				t.Errorf("%s: control character %U at byte %d: %q", name, r, i, text[max(0, i-40):min(len(text), i+40)])
				break
			}
		}
	}
	if !strings.Contains(errb.String(), "could not be started and listed") {
		t.Errorf("no line says the server failed: %s", errb.String())
	}
}
