package importer

// Each terminal's MCP server settings, read into one shape. What each terminal's keys mean was
// read from the pinned versions (docs/import.md): Claude Code 2.1.332, Codex 0.171.0, Gemini
// CLI 0.61.0.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// Terminals are the terminals whose settings can be imported.
var Terminals = []string{"claude-code", "codex", "gemini"}

// server is one MCP server as a terminal's settings hold it.
type server struct {
	name      string
	transport string // "stdio", or what else it is ("http", "sse", ...)
	command   string
	args      []string
	env       []envVar // in the file's order

	disabled   string   // why the terminal does not run it; "" when it does
	include    []string // tools the terminal offers alone (nil: all)
	exclude    []string // tools the terminal never offers
	unknown    []string // keys this import does not know
	notCarried []string // known keys with no spear-shell counterpart
	leaveOut   string   // why it cannot be imported as the terminal runs it ("" when it can)
}

type envVar struct{ name, value string }

// settings is what a terminal's file holds: its servers in the file's order, and servers found
// but never imported (another scope's), each with why.
type settings struct {
	servers []*server
	others  []leftOut
}

// DefaultFile is the terminal's user settings file under home.
func DefaultFile(terminal, home string) string {
	switch terminal {
	case "claude-code":
		return filepath.Join(home, ".claude.json")
	case "codex":
		return filepath.Join(home, ".codex", "config.toml")
	case "gemini":
		return filepath.Join(home, ".gemini", "settings.json")
	}
	return ""
}

// parse reads data as terminal's settings. extra reads a file beside it that the terminal
// also consults (Claude Code's settings.json, Gemini's enablement file); it returns nil data
// when the file does not exist.
func parse(terminal string, data []byte, extra func(name string) ([]byte, error)) (*settings, error) {
	switch terminal {
	case "claude-code":
		return parseClaude(data, extra)
	case "codex":
		return parseCodex(data)
	case "gemini":
		return parseGemini(data, extra)
	}
	return nil, fmt.Errorf("unknown terminal %q: claude-code, codex or gemini", terminal)
}

// member is one key of a JSON object, in the object's order.
type member struct {
	key string
	val json.RawMessage
}

// objectMembers reads a JSON object's members in order; duplicate keys are an error (which one
// a terminal would use cannot be told).
func objectMembers(raw json.RawMessage) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	var out []member
	seen := map[string]bool{}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key := k.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if seen[key] {
			return nil, fmt.Errorf("key %q given twice", key)
		}
		seen[key] = true
		out = append(out, member{key, v})
	}
	return out, nil
}

// jsonStrings decodes a JSON array of strings.
func jsonStrings(raw json.RawMessage) ([]string, error) {
	var s []string
	if err := json.Unmarshal(raw, &s); err != nil || s == nil && string(raw) != "[]" {
		return nil, errors.New("not an array of strings")
	}
	return s, nil
}

// topJSON reads a settings file's top-level object.
func topJSON(data []byte) (map[string]json.RawMessage, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	if top == nil {
		return nil, errors.New("not a JSON object")
	}
	return top, nil
}

// jsonServers reads a settings file's top level and its "mcpServers" object: command, args,
// env and type as all JSON terminals write them, every other key with the terminal's key.
func jsonServers(data []byte, key func(s *server, k string, v json.RawMessage) error) (map[string]json.RawMessage, []*server, error) {
	top, err := topJSON(data)
	if err != nil {
		return nil, nil, err
	}
	servers, err := mcpServers(top["mcpServers"], key)
	return top, servers, err
}

func mcpServers(raw json.RawMessage, key func(s *server, k string, v json.RawMessage) error) ([]*server, error) {
	if raw == nil {
		return nil, nil
	}
	members, err := objectMembers(raw)
	if err != nil {
		return nil, fmt.Errorf("mcpServers: %w", err)
	}
	var out []*server
	for _, m := range members {
		keys, err := objectMembers(m.val)
		if err != nil {
			return nil, fmt.Errorf("mcpServers: server %q: %w", m.key, err)
		}
		s := &server{name: m.key}
		for _, k := range keys {
			err := key(s, k.key, k.val)
			if ok, cerr := commonKey(s, k.key, k.val); ok {
				err = cerr
			}
			if err != nil {
				return nil, fmt.Errorf("mcpServers: server %q: key %q: %w", m.key, k.key, err)
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// commonKey reads the keys both JSON terminals share: command, args, env, type. It reports
// whether k was one.
func commonKey(s *server, k string, v json.RawMessage) (bool, error) {
	switch k {
	case "command":
		if err := json.Unmarshal(v, &s.command); err != nil {
			return true, errors.New("not a string")
		}
	case "args":
		a, err := jsonStrings(v)
		s.args = a
		return true, err
	case "type":
		if err := json.Unmarshal(v, &s.transport); err != nil {
			return true, errors.New("not a string")
		}
	case "env":
		members, err := objectMembers(v)
		if err != nil {
			return true, err
		}
		for _, m := range members {
			var val string
			if err := json.Unmarshal(m.val, &val); err != nil {
				return true, fmt.Errorf("variable %q: not a string", m.key)
			}
			s.env = append(s.env, envVar{m.key, val})
		}
	default:
		return false, nil
	}
	return true, nil
}

// Claude Code: ~/.claude.json's mcpServers (user scope) or a --mcp-config file; servers of a
// project (local scope, under projects) are another scope's; a server named in a project's
// disabledMcpServers is disabled there; ~/.claude/settings.json's permissions.deny names
// excluded tools as mcp__SERVER__TOOL (or the whole server as mcp__SERVER).
func parseClaude(data []byte, extra func(string) ([]byte, error)) (*settings, error) {
	top, servers, err := jsonServers(data, func(s *server, k string, v json.RawMessage) error {
		switch k {
		case "command", "args", "env", "type":
		case "url":
			if s.transport == "" {
				s.transport = "http"
			}
		case "headers", "headersHelper", "oauth", "tools", "request_timeout_ms", "displayName":
			// a remote server's: it is left out whole
		case "timeout", "alwaysLoad", "role":
			s.notCarried = append(s.notCarried, k)
		default:
			s.unknown = append(s.unknown, k)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	st := &settings{servers: servers}
	var projects map[string]struct {
		MCPServers json.RawMessage `json:"mcpServers"`
		Disabled   []string        `json:"disabledMcpServers"`
	}
	if raw := top["projects"]; raw != nil {
		if err := json.Unmarshal(raw, &projects); err != nil {
			return nil, fmt.Errorf("projects: %w", err)
		}
	}
	roots := make([]string, 0, len(projects))
	for root := range projects {
		roots = append(roots, root)
	}
	slices.Sort(roots)
	for _, root := range roots {
		p := projects[root]
		for _, name := range p.Disabled {
			for _, s := range servers {
				if s.name == name && s.disabled == "" {
					s.disabled = "disabled in project " + root + " (disabledMcpServers)"
				}
			}
		}
		local, err := objectMembers(orEmpty(p.MCPServers))
		if err != nil {
			return nil, fmt.Errorf("projects: %q: mcpServers: %w", root, err)
		}
		for _, m := range local {
			st.others = append(st.others, leftOut{Name: m.key, Reason: "local to the project " + root + " (Claude Code's local scope)"})
		}
	}
	deny, err := claudeDeny(extra)
	if err != nil {
		return nil, err
	}
	for _, d := range deny {
		rest, ok := strings.CutPrefix(d, "mcp__")
		if !ok {
			continue
		}
		for _, s := range servers {
			switch {
			case rest == s.name || rest == s.name+"__*":
				s.disabled = "denied whole in Claude Code's permissions.deny"
			case strings.HasPrefix(rest, s.name+"__"):
				s.exclude = append(s.exclude, strings.TrimPrefix(rest, s.name+"__"))
			}
		}
	}
	for _, s := range servers {
		if s.transport == "" {
			s.transport = "stdio"
		}
	}
	return st, nil
}

// claudeDeny reads permissions.deny from Claude Code's settings.json, when there is one.
func claudeDeny(extra func(string) ([]byte, error)) ([]string, error) {
	data, err := extra(filepath.Join(".claude", "settings.json"))
	if err != nil || data == nil {
		return nil, err
	}
	var s struct {
		Permissions struct {
			Deny []string `json:"deny"`
		} `json:"permissions"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf(".claude/settings.json: not valid JSON of the expected shape: %w", err)
	}
	return s.Permissions.Deny, nil
}

func orEmpty(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return json.RawMessage("{}")
	}
	return raw
}

// Gemini CLI: settings.json's mcpServers; a server is disabled by mcp.excluded, by missing from
// mcp.allowed when that is set, or by mcp-server-enablement.json beside the file (what
// `gemini mcp disable` writes, keyed by the name in lower case); includeTools and excludeTools
// filter its tools (entries are split at commas too: `gemini mcp add --exclude-tools a,b`
// writes "a,b" as one entry).
func parseGemini(data []byte, extra func(string) ([]byte, error)) (*settings, error) {
	top, servers, err := jsonServers(data, func(s *server, k string, v json.RawMessage) error {
		switch k {
		case "command", "args", "env", "type":
		case "url":
			if s.transport == "" {
				s.transport = "sse"
			}
		case "httpUrl":
			s.transport = "http"
		case "tcp":
			s.transport = "tcp"
		case "includeTools", "excludeTools":
			list, err := jsonStrings(v)
			if err != nil {
				return err
			}
			var split []string
			for _, t := range list {
				for _, part := range strings.Split(t, ",") {
					if part = strings.TrimSpace(part); part != "" {
						split = append(split, part)
					}
				}
			}
			if k == "includeTools" {
				s.include = split
				if s.include == nil {
					s.include = []string{}
				}
			} else {
				s.exclude = split
			}
		case "headers", "oauth", "authProviderType", "targetAudience", "targetServiceAccount":
			// a remote server's: it is left out whole
		case "cwd", "timeout", "trust", "description", "extension":
			s.notCarried = append(s.notCarried, k)
		default:
			s.unknown = append(s.unknown, k)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var mcp struct {
		Allowed  *[]string `json:"allowed"`
		Excluded []string  `json:"excluded"`
	}
	if raw := top["mcp"]; raw != nil {
		if err := json.Unmarshal(raw, &mcp); err != nil {
			return nil, fmt.Errorf("mcp: %w", err)
		}
	}
	enablement := map[string]struct {
		Enabled *bool `json:"enabled"`
	}{}
	if data, err := extra("mcp-server-enablement.json"); err != nil {
		return nil, err
	} else if data != nil {
		if err := json.Unmarshal(data, &enablement); err != nil {
			return nil, fmt.Errorf("mcp-server-enablement.json: %w", err)
		}
	}
	lower := func(list []string) []string {
		out := make([]string, len(list))
		for i, n := range list {
			out[i] = strings.ToLower(strings.TrimSpace(n))
		}
		return out
	}
	for _, s := range servers {
		n := strings.ToLower(strings.TrimSpace(s.name))
		switch {
		case slices.Contains(lower(mcp.Excluded), n):
			s.disabled = "listed in mcp.excluded"
		case mcp.Allowed != nil && !slices.Contains(lower(*mcp.Allowed), n):
			s.disabled = "not listed in mcp.allowed"
		case enablement[n].Enabled != nil && !*enablement[n].Enabled:
			s.disabled = "disabled (mcp-server-enablement.json)"
		}
		if s.transport == "" {
			s.transport = "stdio"
		}
	}
	return &settings{servers: servers}, nil
}

// Codex: config.toml's [mcp_servers.NAME] tables; enabled = false disables one; enabled_tools
// and disabled_tools filter its tools; env_vars passes variables of Codex's own environment.
func parseCodex(data []byte) (*settings, error) {
	var top map[string]any
	md, err := toml.Decode(string(data), &top)
	if err != nil {
		return nil, fmt.Errorf("not valid TOML: %w", err)
	}
	raw, ok := top["mcp_servers"]
	if !ok {
		return &settings{}, nil
	}
	table, ok := raw.(map[string]any)
	if !ok {
		return nil, errors.New("mcp_servers: not a table")
	}
	// The file's order, however a server was written: [mcp_servers.a], mcp_servers.a.command
	// = ..., or a = {...} in [mcp_servers].
	var names []string
	for _, k := range md.Keys() {
		if len(k) >= 2 && k[0] == "mcp_servers" && !slices.Contains(names, k[1]) {
			names = append(names, k[1])
		}
	}
	st := &settings{}
	for _, name := range names {
		conf, ok := table[name].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("mcp_servers.%s: not a table", name)
		}
		s := &server{name: name, transport: "stdio"}
		var keys []string
		for k := range conf {
			keys = append(keys, k)
		}
		// The file's order, for messages that read like the file.
		slices.SortFunc(keys, func(a, b string) int { return keyIndex(md, name, a) - keyIndex(md, name, b) })
		for _, k := range keys {
			if err := codexKey(s, k, conf[k]); err != nil {
				return nil, fmt.Errorf("mcp_servers.%s.%s: %w", name, k, err)
			}
		}
		st.servers = append(st.servers, s)
	}
	return st, nil
}

func keyIndex(md toml.MetaData, name, key string) int {
	for i, k := range md.Keys() {
		if len(k) >= 3 && k[0] == "mcp_servers" && k[1] == name && k[2] == key {
			return i
		}
	}
	return 0
}

func codexKey(s *server, k string, v any) error {
	str := func() (string, error) {
		x, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("not a string")
		}
		return x, nil
	}
	strs := func() ([]string, error) {
		list, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("not an array of strings")
		}
		out := make([]string, 0, len(list))
		for _, e := range list {
			x, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("not an array of strings")
			}
			out = append(out, x)
		}
		return out, nil
	}
	var err error
	switch k {
	case "command":
		s.command, err = str()
	case "args":
		s.args, err = strs()
	case "env":
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("not a table")
		}
		names := make([]string, 0, len(m))
		for n := range m {
			names = append(names, n)
		}
		slices.Sort(names) // a TOML table's order is not kept by the decoder's map
		for _, n := range names {
			val, ok := m[n].(string)
			if !ok {
				return fmt.Errorf("variable %q: not a string", n)
			}
			s.env = append(s.env, envVar{n, val})
		}
	case "enabled":
		b, ok := v.(bool)
		if !ok {
			return fmt.Errorf("not a boolean")
		}
		if !b {
			s.disabled = "enabled = false"
		}
	case "enabled_tools":
		s.include, err = strs()
		if s.include == nil && err == nil {
			s.include = []string{}
		}
	case "disabled_tools":
		s.exclude, err = strs()
	case "env_vars":
		s.leaveOut = "it takes variables from Codex's own environment (env_vars), which spear-shell never passes on"
	case "url", "bearer_token", "bearer_token_env_var", "http_headers", "env_http_headers", "http_headers_helper", "oauth", "oauth_resource", "scopes":
		if k == "url" {
			s.transport = "http"
		}
	case "cwd", "startup_timeout_sec", "startup_timeout_ms", "tool_timeout_sec", "required", "default_tools_approval_mode",
		"tools", "supports_parallel_tool_calls", "startup_readiness", "environment_id":
		s.notCarried = append(s.notCarried, k)
	default:
		s.unknown = append(s.unknown, k)
	}
	return err
}

// readExtra returns a reader of files relative to dir that gives nil data for a missing file.
func readExtra(dir string) func(string) ([]byte, error) {
	return func(name string) ([]byte, error) {
		p := filepath.Join(dir, name)
		data, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		return data, nil
	}
}
