package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/spear-shell/spear-shell/testdata/harness/fakemodel"
)

// A terminal is one agent terminal as shipped, set up the way docs/harnesses.md says.
type terminal struct {
	name    string // the manifest's terminal key
	variant string // a setting changed from the terminal's defaults, "" for none
	pkg     string // npm package, "" when the protocol is replicated here
	version string // the installed package's (see pinnedVersions), or the protocol's
	// command starts one headless turn against the fake model at baseURL, with the shell at
	// r.shell (a path whose file name is bash) as its shell.
	command func(r *run, baseURL string) (*exec.Cmd, error)
	// result reads what the terminal handed back to the model: the output and the exit code.
	result func(rec fakemodel.Record) (string, int)
	// twoPipes: the terminal reads stdout and stderr from two pipes, so how their lines
	// interleave is not defined, with bash as with spear-shell.
	twoPipes bool
	// shellArg: the shell tool takes the shell to run from the model (Codex's exec_command).
	shellArg bool
	// writable: directories under home the terminal's own shell calls write to, which the
	// manifest's writable list must hold under the boundary's read-only root.
	writable []string
	// mcpResult, for a terminal with an MCP row, reads what it handed back for a call of an
	// MCP tool (mcp.go).
	mcpResult func(rec fakemodel.Record) mcpOutput
}

const prompt = "Run the commands you are given, one per turn."

var terminals = []*terminal{
	{name: "claude-code", pkg: "@anthropic-ai/claude-code", command: claudeCode, result: claudeResult,
		writable: []string{".claude/shell-snapshots", ".claude/tmp"}, mcpResult: claudeMCPResult},
	{name: "codex", pkg: "@openai/codex", command: codex, result: codexResult, twoPipes: true, shellArg: true,
		mcpResult: codexMCPResult},
	{name: "codex", variant: "shell_snapshot=false", pkg: "@openai/codex", command: codex, result: codexResult, twoPipes: true, shellArg: true},
	{name: "gemini", pkg: "@google/gemini-cli", command: gemini, result: geminiResult,
		writable: []string{"tmp"}, mcpResult: geminiMCPResult},
	{name: "mini-swe-agent", version: "2.4 protocol", result: subprocessResult},
}

// label names the terminal in the table: its name and version, and the setting changed if any.
func (t *terminal) label() string {
	l := t.name + " " + t.version
	if t.variant != "" {
		l += " (" + t.variant + ")"
	}
	return l
}

// dirName names a run's directory.
func (t *terminal) dirName() string {
	return strings.NewReplacer(" ", "-", "(", "", ")", "", "=", "-").Replace(t.label())
}

// installedVersions reads each terminal's version from its installed package (what was tested;
// the Makefile installs testdata/harness/package.json's pins).
func installedVersions(cli string, ts []*terminal) error {
	for _, t := range ts {
		if t.pkg == "" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(cli, "node_modules", t.pkg, "package.json"))
		if err != nil {
			return fmt.Errorf("%s is not installed under %s (make harness-deps): %w", t.pkg, cli, err)
		}
		var pkg struct {
			Version string `json:"version"`
		}
		if err := json.Unmarshal(data, &pkg); err != nil || pkg.Version == "" {
			return fmt.Errorf("%s: no version in its package.json", t.pkg)
		}
		t.version = pkg.Version
	}
	return nil
}

// claudeCode: Claude Code takes CLAUDE_CODE_SHELL (or SHELL) only when its path contains bash or
// zsh; -p is headless, and --allowedTools Bash lets the Bash tool run without asking.
//
// With spear-mcp (r.mcp) it is also given --mcp-config with the server and its env, and
// --strict-mcp-config so that no other MCP configuration (a workspace .mcp.json) is read; the
// allowed tools add mcp__spear, every tool of that server.
func claudeCode(r *run, baseURL string) (*exec.Cmd, error) {
	args := []string{"-p", prompt, "--allowedTools", "Bash", "--output-format", "text"}
	if r.mcp != "" {
		config, err := writeMCPConfig(r, "claude-mcp.json", map[string]any{"mcpServers": map[string]any{
			mcpServerName: map[string]any{"type": "stdio", "command": r.mcp, "args": []string{}, "env": r.mcpEnv()}}})
		if err != nil {
			return nil, err
		}
		args = []string{"-p", prompt, "--allowedTools", "Bash,mcp__" + mcpServerName, "--output-format", "text",
			"--mcp-config", config, "--strict-mcp-config"}
	}
	cmd := exec.Command(filepath.Join(r.cli, "node_modules/@anthropic-ai/claude-code/bin/claude.exe"), args...)
	cmd.Env = append(r.env(),
		"CLAUDE_CODE_SHELL="+r.shell,
		// Where its command chain writes the cwd file (pwd -P >| DIR/claude-ID-cwd) for it to read
		// back: a writable root, so the file written inside the boundary is the one it reads.
		"CLAUDE_CODE_TMPDIR="+filepath.Join(r.home, ".claude/tmp"),
		"ANTHROPIC_BASE_URL="+baseURL,
		"ANTHROPIC_API_KEY=sk-harness-dummy",
		"DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	)
	return cmd, nil
}

// Claude Code hands back stdout and stderr together; a non-zero exit is an error result
// starting "Exit code N".
var claudeExit = regexp.MustCompile(`^Exit code (\d+)(?:\n|$)`)

func claudeResult(rec fakemodel.Record) (string, int) {
	if m := claudeExit.FindStringSubmatch(rec.Output); rec.IsError && m != nil {
		code, _ := strconv.Atoi(m[1])
		return rec.Output[len(m[0]):], code
	}
	if rec.IsError {
		return rec.Output, -1
	}
	return rec.Output, 0
}

// codex: Codex CLI's shell is the user's passwd entry's (by file name), never $SHELL. As root
// here, a private mount namespace binds a copy of /etc/passwd whose root entry names r.shell:
// what a deployment does by setting the agent user's login shell. Its own sandbox is off
// (spear-shell brings its own) and it never asks for approval (headless).
func codex(r *run, baseURL string) (*exec.Cmd, error) {
	home := filepath.Join(r.dir, "codex-home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	config := fmt.Sprintf(`model = "gpt-5.1-codex"
model_provider = "harness"

[model_providers.harness]
name = "harness"
base_url = "%s/v1"
wire_api = "responses"
env_key = "HARNESS_API_KEY"
`, baseURL)
	if r.mcp != "" {
		// Codex passes an MCP server only a few variables of its own environment: the turn's go
		// in the server's env table.
		config += fmt.Sprintf("\n[mcp_servers.%s]\ncommand = %q\nargs = []\n\n[mcp_servers.%s.env]\n", mcpServerName, r.mcp, mcpServerName)
		env := r.mcpEnv()
		for _, k := range sortedKeys(env) {
			config += fmt.Sprintf("%s = %q\n", k, env[k])
		}
	}
	if r.term.variant == "shell_snapshot=false" {
		// Every command then runs as `SHELL -lc CMD`, the form used before the snapshot is ready.
		config += "\n[features]\nshell_snapshot = false\n"
	}
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o600); err != nil {
		return nil, err
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("codex: its passwd shell is set in a private mount namespace (unshare -m), which needs root")
	}
	passwd, err := passwdWithShell(r, r.shell)
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(r.cli, "node_modules/@openai/codex/bin/codex.js")
	script := `mount --bind "$1" /etc/passwd && shift 2 && exec "$@"`
	if r.onlySpear {
		script = `mount --bind "$1" /etc/passwd && mount --bind "$2" "$(readlink -f /bin/sh)" && shift 2 && exec "$@"`
	}
	cmd := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", passwd, r.shell,
		"node", bin, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", prompt)
	cmd.Env = append(r.env(), "CODEX_HOME="+home, "HARNESS_API_KEY=harness-dummy")
	return cmd, nil
}

// passwdWithShell writes a copy of /etc/passwd whose entry for this user has shell as its shell.
func passwdWithShell(r *run, shell string) (string, error) {
	data, err := os.ReadFile("/etc/passwd")
	if err != nil {
		return "", err
	}
	uid := strconv.Itoa(os.Getuid())
	lines := strings.Split(string(data), "\n")
	found := false
	for i, l := range lines {
		f := strings.Split(l, ":")
		if len(f) == 7 && f[2] == uid {
			f[5], f[6] = r.home, shell
			lines[i], found = strings.Join(f, ":"), true
		}
	}
	if !found {
		return "", fmt.Errorf("passwd: no entry for uid %s", uid)
	}
	name := filepath.Join(r.dir, "passwd")
	return name, os.WriteFile(name, []byte(strings.Join(lines, "\n")), 0o644)
}

// Codex hands back a header ("Process exited with code N") and then "Output:\n...".
var codexResultRe = regexp.MustCompile(`(?s)Process exited with code (-?\d+)\n.*?Output:\n(.*)$`)

func codexResult(rec fakemodel.Record) (string, int) {
	m := codexResultRe.FindStringSubmatch(rec.Output)
	if m == nil {
		return rec.Output, -1
	}
	code, _ := strconv.Atoi(m[1])
	return m[2], code
}

// gemini: Gemini CLI runs the first bash on PATH. GEMINI_CLI_TRUST_WORKSPACE trusts the
// workspace so that --yolo (no approvals, headless) is not overridden; the settings file picks
// API-key auth.
func gemini(r *run, baseURL string) (*exec.Cmd, error) {
	dir := filepath.Join(r.home, ".gemini")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	settings := map[string]any{"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}}}
	if r.mcp != "" {
		// trust: no confirmation before each of the server's tools.
		settings["mcpServers"] = map[string]any{mcpServerName: map[string]any{
			"command": r.mcp, "args": []string{}, "env": r.mcpEnv(), "trust": true}}
	}
	data, _ := json.MarshalIndent(settings, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), data, 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command("node", filepath.Join(r.cli, "node_modules/@google/gemini-cli/bundle/gemini.js"), "-p", prompt, "--yolo")
	cmd.Env = append(r.env(),
		"GEMINI_API_KEY=harness-dummy",
		"GOOGLE_GEMINI_BASE_URL="+baseURL,
		"GEMINI_CLI_TRUST_WORKSPACE=true",
		// Where its envelope's trap writes the background job ids (TMPDIR/gemini-shell-*/bgpids.tmp)
		// for it to read back: a writable root, so that file is the same inside the boundary and out.
		"TMPDIR="+filepath.Join(r.home, "tmp"),
	)
	cmd.Env = withPath(cmd.Env, filepath.Dir(r.shell))
	return cmd, nil
}

// Gemini hands back "Output: ..." ("(empty)" when there is none), "Exit Code: N" when it is not
// zero, and more lines, wrapped in <untrusted_context>.
var geminiResultRe = regexp.MustCompile(`(?s)^(?:<untrusted_context>\n)?Output: (.*?)(?:\nExit Code: (-?\d+))?(?:\n(?:Error|Signal|Background PIDs|Process Group PGID): .*)?(?:\n</untrusted_context>)?$`)

func geminiResult(rec fakemodel.Record) (string, int) {
	m := geminiResultRe.FindStringSubmatch(rec.Output)
	if m == nil {
		return rec.Output, -1
	}
	out, code := m[1], 0
	if out == "(empty)" {
		out = ""
	}
	if m[2] != "" {
		code, _ = strconv.Atoi(m[2])
	}
	return out, code
}
