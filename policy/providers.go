package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/spear-shell/spear-shell/policy/paths"
)

// MinSecretLen is the length from which an env value counts as a secret (SPEC 7).
const MinSecretLen = 6

type providersResult struct {
	providers []Provider
	problems  []*Problem
	rejected  []Rejected
	secrets   []string
	fatal     *Problem
	prompts   []string // the prompt directories (SPEC 2.3, 13)
	broker    Broker   // the broker's settings (SPEC 14)

	lockRequired bool // "lock": "required" (SPEC 15)
}

// parseProviders validates capabilities.json (file; home is SPEAR_HOME). command[0] is
// resolved with the entry's own env.PATH, else SystemPath: never with spear-shell's PATH,
// which the agent may shape.
func parseProviders(file, home string, data []byte) providersResult {
	var res providersResult
	elems, top, fatal := topArrayWith(file, data, "providers", "prompts", "lock", "broker")
	if fatal != nil {
		res.fatal = fatal
		// Secrets are still collected when the file's top level is wrong but it is
		// JSON, so a redactor covers them whatever happens next.
		res.secrets = scavengeSecrets(data, false)
		return res
	}
	entries := make([]*entry, len(elems))
	provs := make([]Provider, len(elems))
	secrets := map[string]bool{}
	for i, raw := range elems {
		e, members, ok := openEntry(file, "provider", "providers", "id", i, raw)
		entries[i] = e
		if !ok {
			for _, s := range scavengeSecrets(raw, false) {
				secrets[s] = true
			}
			continue
		}
		p := &provs[i]
		p.Write, p.Enabled, p.Timeout, p.MaxMessage = WriteRefuse, true, DefaultTimeout, DefaultMaxMessage
		p.Tasks = []string{TaskImplementation, TaskMixed}
		seen := map[string]bool{}
		for _, m := range members {
			seen[m.key] = true
			parseProviderKey(e, p, m, secrets)
			if m.key == "env_file" && p.EnvFile != "" {
				if msg := envFileWhere(p.EnvFile, home, filepath.Dir(file)); msg != "" {
					e.bad(m.key, "%s", msg)
				}
			}
		}
		for _, k := range []string{"id", "command"} {
			if !seen[k] {
				e.bad(k, "required")
			}
		}
		checkShared(e, p, seen)
		if len(p.Command) > 0 {
			// After every key: env may come after command in the entry.
			path, msg := resolveCommand(p.Command[0], searchDirs(p.Env))
			if msg != "" {
				e.bad("command", "%s", msg)
			} else {
				p.Command[0] = path
			}
		}
	}
	markDuplicates(entries, func(i int) string { return provs[i].ID }, "id", "duplicate id")

	for i, e := range entries {
		if len(e.problems) > 0 {
			res.problems = append(res.problems, e.problems...)
			res.rejected = append(res.rejected, Rejected{ID: e.id, Reason: rejectReason(e.problems)})
			continue
		}
		res.providers = append(res.providers, provs[i])
	}
	res.secrets = sortSecrets(secrets)
	if raw := top["prompts"]; raw != nil {
		var p *Problem
		if res.prompts, p = parsePrompts(file, raw); p != nil {
			res.problems = append(res.problems, p)
		}
	}
	if raw := top["lock"]; raw != nil {
		// Only "required" is known. Anything else is a problem and read as required: a typo
		// must not turn the lock off (SPEC 15).
		res.lockRequired = true
		if v, why := asString(raw); why != "" || v != "required" {
			if why == "" {
				why = fmt.Sprintf(`must be "required", not %q`, v)
			}
			res.problems = append(res.problems, &Problem{File: file, Entry: "lock", Key: "lock", Msg: why + " (read as required)"})
		}
	}
	res.broker = DefaultBroker()
	if raw := top["broker"]; raw != nil {
		res.problems = append(res.problems, parseBroker(file, raw, &res.broker)...)
	}
	return res
}

// rejectReason joins an entry's problems without repeating the file and entry.
func rejectReason(problems []*Problem) string {
	parts := make([]string, len(problems))
	for i, p := range problems {
		if p.Key != "" {
			parts[i] = fmt.Sprintf("key %q: %s", p.Key, p.Msg)
		} else {
			parts[i] = p.Msg
		}
	}
	return strings.Join(parts, "; ")
}

func parseProviderKey(e *entry, p *Provider, m member, secrets map[string]bool) {
	switch m.key {
	case "id":
		s, msg := asString(m.val)
		switch {
		case !e.read(m.key, msg):
		case !idRe.MatchString(s):
			e.bad(m.key, "must match [a-z][a-z0-9_-]{0,62}")
		case s == "spear":
			e.bad(m.key, "%q is reserved", s)
		default:
			p.ID = s
		}
	case "command":
		args, msg := asStrings(m.val)
		switch {
		case !e.read(m.key, msg):
		case len(args) == 0:
			e.bad(m.key, "must not be empty")
		case slices.ContainsFunc(args, hasNUL):
			e.bad(m.key, "must not contain NUL")
		default:
			p.Command = args // command[0] is resolved once every key is known
		}
	case "scope":
		s, msg := asString(m.val)
		if !e.read(m.key, msg) {
			return
		}
		sc, err := ParseScope(s)
		if err != nil {
			e.bad(m.key, "%v", err)
			return
		}
		p.Scope = sc
	case "tasks":
		tasks, msg := asStrings(m.val)
		if !e.read(m.key, msg) {
			return
		}
		if len(tasks) == 0 {
			e.bad(m.key, "must not be empty")
			return
		}
		for i, t := range tasks {
			if t != TaskImplementation && t != TaskMixed && t != TaskGeneral {
				e.bad(m.key, "element %d: unknown task class: must be implementation, mixed or general", i)
				return
			}
			if slices.Index(tasks, t) != i {
				e.bad(m.key, "duplicate %q", t)
				return
			}
		}
		p.Tasks = tasks
	case "env":
		p.Env = parseEnv(e, m, secrets)
	case "env_file":
		if s, msg := asString(m.val); e.read(m.key, msg) {
			p.EnvFile = s
		}
	case "read":
		read, msg := asStrings(m.val)
		if !e.read(m.key, msg) {
			return
		}
		for i, r := range read {
			if !toolNameRe.MatchString(r) {
				e.bad(m.key, "element %d is not a tool name ([A-Za-z0-9_.-]{1,128})", i)
				return
			}
			if slices.Index(read, r) != i {
				e.bad(m.key, "duplicate %q", r)
				return
			}
		}
		p.Read = read
	case "write":
		s, msg := asString(m.val)
		switch {
		case !e.read(m.key, msg):
		case s != WriteRefuse && s != WriteConfirm && s != WriteAllow:
			e.bad(m.key, "must be refuse, confirm or allow")
		default:
			p.Write = s
		}
	case "enabled":
		if b, msg := asBool(m.val); e.read(m.key, msg) {
			p.Enabled = b
		}
	case "timeout":
		if d, msg := asSeconds(m.val); e.read(m.key, msg) {
			p.Timeout = d
		}
	case "max_message":
		if n, msg := asBytes(m.val, MinMaxMessage, MaxMaxMessage); e.read(m.key, msg) {
			p.MaxMessage = n
		}
	case "share":
		s, msg := asString(m.val)
		switch {
		case !e.read(m.key, msg):
		case s != ShareProject && s != ShareAll:
			e.bad(m.key, "must be project or all")
		default:
			p.Share = s
		}
	case "restart_delay":
		if d, msg := asSecondsIn(m.val, 0, MaxRestartDelay); e.read(m.key, msg) {
			p.RestartDelay = d
		}
	default:
		e.bad(m.key, "unknown key")
	}
}

// parseEnv validates env. Messages name variables, never values; every string value
// long enough to be a secret is recorded even when the entry is rejected.
func parseEnv(e *entry, m member, secrets map[string]bool) map[string]string {
	for _, s := range scavengeSecrets(m.val, true) {
		secrets[s] = true
	}
	members, err := decodeObject(m.val)
	var dup *dupKeyError
	switch {
	case errors.Is(err, errNotObject):
		e.bad(m.key, "%s", wrongType("an object of strings", m.val))
		return nil
	case errors.As(err, &dup) && readable(dup.key):
		e.bad(m.key, "variable %q given twice", dup.key)
		return nil
	case err != nil:
		e.bad(m.key, "%v", err)
		return nil
	}
	env := map[string]string{}
	ok := true
	for _, v := range members {
		name := v.key
		if !readable(name) {
			name = "(unprintable)"
		}
		s, msg := asString(v.val)
		switch {
		case !envNameRe.MatchString(v.key):
			e.bad(m.key, "variable %q: name must match [A-Za-z_][A-Za-z0-9_]*", name)
			ok = false
		case msg != "":
			e.bad(m.key, "variable %q: %s", name, msg)
			ok = false
		case hasNUL(s):
			e.bad(m.key, "variable %q: value must not contain NUL", name)
			ok = false
		default:
			env[v.key] = s
		}
	}
	if !ok {
		return nil
	}
	return env
}

// scavengeSecrets returns every JSON string of MinSecretLen bytes or more inside raw
// that is (inside) the value of some "env" key, or anywhere when inEnv, whatever the
// structure around it is. It walks tokens, not maps, so a value hidden behind a
// duplicate key is found too. raw is valid JSON (nesting bounded by encoding/json).
func scavengeSecrets(raw json.RawMessage, inEnv bool) []string {
	var out []string
	var walk func(dec *json.Decoder, inEnv bool) error
	walk = func(dec *json.Decoder, inEnv bool) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch v := tok.(type) {
		case string:
			if inEnv && len(v) >= MinSecretLen {
				out = append(out, v)
			}
		case json.Delim:
			for dec.More() {
				under := inEnv
				if v == '{' {
					key, err := dec.Token()
					if err != nil {
						return err
					}
					under = under || key == "env"
				}
				if err := walk(dec, under); err != nil {
					return err
				}
			}
			_, err = dec.Token() // the closing delimiter
			return err
		}
		return nil
	}
	_ = walk(json.NewDecoder(bytes.NewReader(raw)), inEnv)
	return out
}

// sortSecrets orders secrets longest first, so a redactor replacing them in order
// never leaves the tail of a longer secret that contains a shorter one.
func sortSecrets(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	return out
}

// searchDirs is the PATH a provider's programs are found on: its entry's env.PATH when
// given, else SystemPath; relative entries ("" and "." among them) are never searched.
func searchDirs(env map[string]string) []string {
	pathEnv, ok := env["PATH"]
	if !ok {
		pathEnv = SystemPath
	}
	var dirs []string
	for _, d := range filepath.SplitList(pathEnv) {
		if !filepath.IsAbs(d) {
			continue
		}
		if d = filepath.Clean(d); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// resolveCommand makes command[0] absolute: a name with a slash must already be
// absolute; a bare name is looked up in dirs. The result is an executable regular file.
func resolveCommand(name string, dirs []string) (string, string) {
	if name == "" {
		return "", "program name must not be empty"
	}
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) {
			return "", fmt.Sprintf("program %q: a path must be absolute", name)
		}
		path := filepath.Clean(name)
		if msg := checkExecutable(path); msg != "" {
			return "", fmt.Sprintf("program %q %s", name, msg)
		}
		return path, ""
	}
	for _, d := range dirs {
		path := filepath.Join(d, name)
		if checkExecutable(path) == "" {
			return path, ""
		}
	}
	return "", fmt.Sprintf("program %q not found on the system PATH or the entry's env.PATH (relative entries excluded)", name)
}

// checkExecutable says why path is not an executable regular file, "" when it is.
func checkExecutable(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Sprintf("cannot be used: %v", paths.UnwrapPath(err))
	}
	if !st.Mode().IsRegular() {
		return "is not a regular file"
	}
	if err := unix.Faccessat(unix.AT_FDCWD, path, unix.X_OK, unix.AT_EACCESS); err != nil {
		return "is not executable"
	}
	return ""
}

// within reports whether p is dir or inside it, by whole path components
// (/src/fw-a2 is not inside /src/fw-a). Both are clean absolute paths.
func within(dir, p string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// parsePrompts reads {"paths": [ABSOLUTE_DIR, ...]}; a bad value leaves every prompt out (the
// providers stand) and is one problem naming the key.
func parsePrompts(file string, raw json.RawMessage) ([]string, *Problem) {
	bad := func(key, format string, args ...any) ([]string, *Problem) {
		return nil, &Problem{File: file, Entry: "prompts", Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	members, err := decodeObject(raw)
	if err != nil {
		return bad("", "%s", wrongType("an object", raw))
	}
	var dirs []string
	for _, m := range members {
		if m.key != "paths" {
			return bad(m.key, "unknown key: want only \"paths\"")
		}
		if jsonKind(m.val) != "array" {
			return bad("paths", "%s", wrongType("an array of absolute directories", m.val))
		}
		var elems []json.RawMessage
		if err := json.Unmarshal(m.val, &elems); err != nil {
			return bad("paths", "%v", err)
		}
		for _, e := range elems {
			var d string
			if json.Unmarshal(e, &d) != nil || !filepath.IsAbs(d) || filepath.Clean(d) != d {
				return bad("paths", "%s is not an absolute, clean directory path", e)
			}
			dirs = append(dirs, d)
		}
	}
	return dirs, nil
}
