// Package importer is `spear-shell --import` (SPEC 15, docs/import.md): it reads an agent
// terminal's own MCP server settings and proposes capabilities.json entries for the operator to
// review, writing inline environment values to env_files and never printing them.
//
// Layer 2 of the capability side (docs/layout.md): it imports policy, policy/paths and
// mcpstdio, never capability, the keeper or anything under interp/. It links the TOML library,
// so only cmd/spear-shell-import imports it: spear-shell's -c fast path must not initialise it.
package importer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spear-shell/spear-shell/policy"
	"github.com/spear-shell/spear-shell/policy/paths"
)

// MaxSettingsBytes bounds a terminal's settings file.
const MaxSettingsBytes = 16 << 20

// MaxServers bounds the servers one import proposes.
const MaxServers = 1000

// Options say what to import and where.
type Options struct {
	Terminal string // claude-code, codex or gemini
	File     string // the settings file; "" = the terminal's user file under Home
	Home     string // the user's home directory
	Path     string // the user's PATH, on which command[0] is found
	Scope    string // the entries' scope; "" = none (they apply nowhere)

	// ReadFromAnnotations starts each server and proposes its tools annotated readOnlyHint
	// as read.
	ReadFromAnnotations bool

	SpearHome        string   // where env/ is written
	CapabilitiesFile string   // "" = SpearHome/capabilities.json; its ids are taken
	WritableRoots    []string // the settings file may not lie here with ReadFromAnnotations
	Getenv           func(string) string
}

// Entry is one proposed capabilities.json entry.
type Entry struct {
	ID      string   `json:"id"`
	Command []string `json:"command"`
	Scope   string   `json:"scope,omitempty"`
	EnvFile string   `json:"env_file,omitempty"`
	Read    []string `json:"read,omitempty"`
	Write   string   `json:"write"`
}

// leftOut is a server not imported, and why (never with a value, a URL or a header).
type leftOut struct{ Name, Reason string }

// Plan is what an import decided before anything is written.
type Plan struct {
	File    string
	Entries []Entry
	LeftOut []leftOut
	Notes   []string // said on stderr: unknown keys, keys not carried over, filters

	envs    map[string][]envVar // by id: the env_file's lines
	filters map[string]filter   // by id: the terminal's tool filter
	names   map[string]string   // by id: the server's name in the settings file
}

// Error is an import that cannot be done at all (exit 2): a file that cannot be read or parsed,
// ids that clash, an env_file that cannot be written.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

func fail(format string, a ...any) *Error { return &Error{Msg: fmt.Sprintf(format, a...)} }

// Decide reads the settings and decides every server; nothing is written or started.
func Decide(o Options) (*Plan, error) {
	if o.File == "" {
		o.File = DefaultFile(o.Terminal, o.Home)
		if o.File == "" {
			return nil, fail("unknown terminal %q: claude-code, codex or gemini", o.Terminal)
		}
	}
	if o.Scope != "" {
		if _, err := policy.ParseScope(o.Scope); err != nil {
			return nil, fail("--scope: %v", err)
		}
	}
	if !filepath.IsAbs(o.SpearHome) {
		return nil, fail("SPEAR_HOME %q is not an absolute directory", o.SpearHome)
	}
	data, err := readSettings(o.File)
	if err != nil {
		return nil, err
	}
	st, perr := parse(o.Terminal, data, readExtra(filepath.Dir(o.File)))
	if perr != nil {
		return nil, fail("%s: %v", o.File, perr)
	}
	if len(st.servers) > MaxServers {
		return nil, fail("%s: %d servers, more than the %d one import takes", o.File, len(st.servers), MaxServers)
	}
	taken, err := takenIDs(o)
	if err != nil {
		return nil, err
	}
	p := &Plan{File: o.File, envs: map[string][]envVar{}, filters: map[string]filter{}, names: map[string]string{}, LeftOut: st.others}
	byID := map[string]string{} // id -> the server it came from
	var clashes []string
	for _, s := range st.servers {
		if why := p.judge(o, s); why != "" {
			p.LeftOut = append(p.LeftOut, leftOut{s.name, why})
			continue
		}
		id := ID(s.name)
		switch {
		case !policy.ValidID(id) && id == "spear":
			clashes = append(clashes, fmt.Sprintf("server %s maps to the id %q, which is reserved", strconv.Quote(s.name), id))
		case !policy.ValidID(id):
			clashes = append(clashes, fmt.Sprintf("server %s maps to %q, which is not a valid id ([a-z][a-z0-9_-]{0,62})", strconv.Quote(s.name), id))
		case taken[id] != "":
			clashes = append(clashes, fmt.Sprintf("server %s maps to the id %q, which %s already holds", strconv.Quote(s.name), id, taken[id]))
		case byID[id] != "":
			clashes = append(clashes, fmt.Sprintf("servers %s and %s both map to the id %q", strconv.Quote(byID[id]), strconv.Quote(s.name), id))
		}
		if byID[id] == "" {
			byID[id] = s.name
		}
		path, _ := lookPath(s.command, o.Path) // judge found it
		e := Entry{ID: id, Command: append([]string{path}, s.args...), Scope: o.Scope, Write: policy.WriteRefuse}
		if len(s.env) > 0 {
			e.EnvFile = filepath.Join(o.SpearHome, "env", id+".env")
			p.envs[id] = s.env
		}
		p.Entries = append(p.Entries, e)
		p.filters[id] = filter{s.include, s.exclude}
		p.names[id] = s.name
		p.note(s)
	}
	if len(clashes) > 0 {
		return nil, fail("%s: %s; nothing was written", o.File, strings.Join(clashes, "; "))
	}
	return p, nil
}

// judge says why s cannot be imported ("" when it can).
func (p *Plan) judge(o Options, s *server) string {
	switch {
	case s.transport != "stdio":
		return "not a stdio server (" + strconv.Quote(s.transport) + "): spear-shell runs stdio servers only"
	case s.disabled != "":
		return "disabled in the terminal: " + s.disabled
	case s.leaveOut != "":
		return s.leaveOut
	case s.command == "":
		return "no command"
	}
	if refersToVariable(s.command) {
		return "its command refers to a variable, which the terminal expands and spear-shell does not"
	}
	for i, a := range s.args {
		if refersToVariable(a) {
			return fmt.Sprintf("argument %d refers to a variable, which the terminal expands and spear-shell does not", i+1)
		}
		if strings.IndexByte(a, 0) >= 0 {
			return fmt.Sprintf("argument %d holds NUL", i+1)
		}
	}
	for _, v := range s.env {
		switch {
		case !policy.ValidEnvName(v.name):
			return fmt.Sprintf("env: %s is not a variable name ([A-Za-z_][A-Za-z0-9_]*)", strconv.Quote(v.name))
		case refersToVariable(v.value):
			return fmt.Sprintf("env %s refers to a variable, which the terminal expands and spear-shell does not", v.name)
		case strings.ContainsAny(v.value, "\n\x00") || strings.HasSuffix(v.value, "\r"):
			return fmt.Sprintf("env %s holds a line break or NUL, which an env_file line cannot", v.name)
		}
	}
	if _, err := lookPath(s.command, o.Path); err != nil {
		return err.Error()
	}
	return ""
}

// note records what the operator should know about an imported server.
func (p *Plan) note(s *server) {
	name := strconv.Quote(s.name)
	for _, k := range s.unknown {
		p.Notes = append(p.Notes, fmt.Sprintf("server %s: unknown key %s, not carried over", name, strconv.Quote(k)))
	}
	for _, k := range s.notCarried {
		p.Notes = append(p.Notes, fmt.Sprintf("server %s: key %s has no counterpart in spear-shell, not carried over", name, strconv.Quote(k)))
	}
	if s.include != nil {
		p.Notes = append(p.Notes, fmt.Sprintf("server %s: the terminal offers only %d of its tools: no other is proposed as read (a tool not in read is WRITE, and write is refuse)", name, len(s.include)))
	}
	if len(s.exclude) > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("server %s: the terminal excludes %d of its tools: none of them is proposed as read (a tool not in read is WRITE, and write is refuse)", name, len(s.exclude)))
	}
}

// ID is the provider id a server name maps to: lower case, every other character '-'.
func ID(name string) string {
	b := []byte(strings.ToLower(name))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '-'
		}
	}
	return string(b)
}

// refersToVariable reports whether s names a variable as the terminals expand them: ${NAME}
// (Claude Code, Gemini, with :- defaults) or $NAME (Gemini).
func refersToVariable(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] != '$' {
			continue
		}
		if c := s[i+1]; c == '{' || c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' {
			return true
		}
	}
	return false
}

// lookPath finds a server's command on the user's PATH (absolute directories only), as the
// terminal would; a command with a slash must be absolute.
func lookPath(cmd, path string) (string, error) {
	if strings.Contains(cmd, "/") {
		if !filepath.IsAbs(cmd) {
			return "", fmt.Errorf("its command is a relative path, which depends on where the terminal ran")
		}
		if !executable(cmd) {
			return "", fmt.Errorf("its command %s is not an executable file", strconv.Quote(cmd))
		}
		return filepath.Clean(cmd), nil
	}
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		if p := filepath.Join(dir, cmd); executable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("its command %s is not found on your PATH", strconv.Quote(cmd))
}

func executable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}

// readSettings reads a terminal's settings file, bounded.
func readSettings(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fail("%s: cannot be read: %v", file, paths.UnwrapPath(err))
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fail("%s: not a regular file", file)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxSettingsBytes+1))
	if err != nil {
		return nil, fail("%s: cannot be read: %v", file, paths.UnwrapPath(err))
	}
	if len(data) > MaxSettingsBytes {
		return nil, fail("%s: larger than %d bytes", file, MaxSettingsBytes)
	}
	return data, nil
}

// takenIDs are the ids of the capabilities file's entries, valid or not, each with where.
func takenIDs(o Options) (map[string]string, error) {
	file := o.CapabilitiesFile
	if file == "" {
		file = filepath.Join(o.SpearHome, "capabilities.json")
	}
	data, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fail("%s: cannot be read, so the ids it holds cannot be told: %v", file, paths.UnwrapPath(err))
	}
	var caps struct {
		Providers []struct {
			ID any `json:"id"`
		} `json:"providers"`
	}
	if err := json.Unmarshal(data, &caps); err != nil {
		return nil, fail("%s: not valid JSON, so the ids it holds cannot be told: %v", file, err)
	}
	taken := map[string]string{}
	for i, p := range caps.Providers {
		if id, ok := p.ID.(string); ok {
			taken[id] = fmt.Sprintf("%s's providers[%d]", file, i)
		}
	}
	return taken, nil
}
