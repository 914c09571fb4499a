package policy

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"
)

// LoadManifest reads and validates the turn manifest (SPEC 2.4) strictly: unknown
// keys, duplicate keys, wrong types and bad values are errors (a *Problem naming the
// key). No value is expanded: `$HOME/x` is a relative path, and refused as such.
// Workspace defaults to cwd, which must then be absolute. The file, like the
// registry, must not be group- or world-writable.
func LoadManifest(path, cwd string) (*Manifest, error) {
	data, prob := readConfig(path, MaxManifestBytes)
	if prob != nil {
		return nil, prob
	}
	return parseManifest(path, data, cwd)
}

// parseManifest validates the manifest's bytes (valid UTF-8 JSON already).
func parseManifest(file string, data []byte, cwd string) (*Manifest, error) {
	members, err := decodeObject(data)
	var dup *dupKeyError
	if errors.As(err, &dup) {
		return nil, &Problem{File: file, Key: keyName(dup.key), Msg: err.Error()}
	}
	if err != nil {
		return nil, &Problem{File: file, Msg: fmt.Sprintf("top level %v", err)}
	}
	m := &Manifest{Source: data, Runtime: RuntimeGateway, PermissionMode: ModeAsk, Terminal: TerminalNone, ApproverTimeout: DefaultApproverTimeout,
		KeepProviders: DefaultKeepProviders}
	bad := func(key, format string, args ...any) error {
		return &Problem{File: file, Key: keyName(key), Msg: fmt.Sprintf(format, args...)}
	}
	match := func(re namePattern) func(string) string {
		return func(s string) string {
			if !re.MatchString(s) {
				return "must match " + re.String()[1:len(re.String())-1]
			}
			return ""
		}
	}
	oneOf := func(allowed ...string) func(string) string {
		return func(s string) string {
			if !slices.Contains(allowed, s) {
				return fmt.Sprintf("must be one of %v", allowed)
			}
			return ""
		}
	}
	absolute := func(s string) string {
		if !filepath.IsAbs(s) || hasNUL(s) {
			return "must be an absolute path (nothing is expanded)"
		}
		return ""
	}
	fields := map[string]struct {
		dst   *string
		check func(string) string
	}{
		"turn":            {&m.Turn, match(turnRe)},
		"session":         {&m.Session, match(turnRe)},
		"workspace":       {&m.Workspace, absolute},
		"project":         {&m.Project, match(nameRe)},
		"task":            {&m.Task, oneOf(TaskImplementation, TaskMixed, TaskGeneral, TaskStandardQuestion)},
		"pass":            {&m.Pass, oneOf(PassNormativePrepass, PassImplementation, PassComplianceCheck)},
		"runtime":         {&m.Runtime, oneOf(RuntimeGateway, RuntimeEarlier)},
		"permission_mode": {&m.PermissionMode, oneOf(ModeAsk, ModeReadOnly, ModeAutoApprove)},
		"audit":           {&m.Audit, absolute},
		"state_dir":       {&m.StateDir, absolute},
		"terminal":        {&m.Terminal, oneOf(TerminalClaudeCode, TerminalCodex, TerminalGemini, TerminalTerminalBench, TerminalNone)},
	}
	seen := map[string]bool{}
	for _, mem := range members {
		key, val := mem.key, mem.val
		seen[key] = true
		switch key {
		case "approver":
			args, msg := asStrings(val)
			switch {
			case msg != "":
				return nil, bad(key, "%s", msg)
			case len(args) == 0:
				return nil, bad(key, "must not be empty")
			case slices.ContainsFunc(args, hasNUL):
				return nil, bad(key, "must not contain NUL")
			case !filepath.IsAbs(args[0]):
				return nil, bad(key, "program must be an absolute path")
			}
			m.Approver = args
			continue
		case "writable":
			paths, msg := asStrings(val)
			if msg != "" {
				return nil, bad(key, "%s", msg)
			}
			for i, w := range paths {
				if msg := absolute(w); msg != "" {
					return nil, bad(key, "element %d %s", i, msg)
				}
				paths[i] = filepath.Clean(w)
			}
			m.Writable = paths
			continue
		case "approver_timeout":
			d, msg := asSeconds(val)
			if msg != "" {
				return nil, bad(key, "%s", msg)
			}
			m.ApproverTimeout = d
			continue
		case "keep_providers":
			n, msg := asWholeSeconds(val, int64(MaxKeepProviders/time.Second))
			if msg != "" {
				return nil, bad(key, "%s", msg)
			}
			m.KeepProviders = time.Duration(n) * time.Second
			continue
		}
		field, ok := fields[key]
		if !ok {
			return nil, bad(key, "unknown key")
		}
		s, msg := asString(val)
		if msg == "" {
			msg = field.check(s)
		}
		if msg != "" {
			return nil, bad(key, "%s", msg)
		}
		*field.dst = s
	}
	for _, k := range []string{"turn", "task"} {
		if !seen[k] {
			return nil, bad(k, "required")
		}
	}
	if m.Task == TaskMixed && m.Pass == "" {
		return nil, bad("pass", "required with task mixed")
	}
	if m.Task != TaskMixed && seen["pass"] {
		return nil, bad("pass", "only allowed with task mixed")
	}
	if !seen["workspace"] {
		if !filepath.IsAbs(cwd) {
			return nil, bad("workspace", "absent, and the current directory %q is not absolute", cwd)
		}
		m.Workspace, m.WorkspaceDefaulted = cwd, true
	}
	return m, nil
}
