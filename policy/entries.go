package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// entry collects what is known about one array element while it is validated.
type entry struct {
	file     string
	name     string // `provider "x"` or `providers[3]`
	pos      string // `providers[3]`
	id       string // the readable id or name, "" if none
	problems []*Problem
}

func (e *entry) bad(key, format string, args ...any) {
	e.problems = append(e.problems, &Problem{File: e.file, Entry: e.name, Key: keyName(key), Msg: fmt.Sprintf(format, args...)})
}

// read records msg, what reading key's value found wrong with it (as asString and the other
// readers say it), and reports whether the value was read: msg is empty.
func (e *entry) read(key, msg string) bool {
	if msg != "" {
		e.bad(key, "%s", msg)
	}
	return msg == ""
}

// keyName is how a key is named in a Problem: an empty key ("") gets a visible name,
// since an empty Key means "no key" (file-level or not an object).
func keyName(key string) string {
	if key == "" {
		return "(empty)"
	}
	return key
}

// readable reports whether an id can be quoted in a message as is: short printable
// ASCII without quotes or backslashes (anything else is named by its index).
func readable(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c > '~' || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// topArray decodes `{"<key>": [ ... ]}` exactly; anything else is a file-level problem.
func topArray(file string, data []byte, key string) ([]json.RawMessage, *Problem) {
	elems, _, problem := topArrayWith(file, data, key)
	return elems, problem
}

// topArrayWith is topArray for a file whose top level may also hold optional keys, whose
// values (absent: not in the map) it returns as they are.
func topArrayWith(file string, data []byte, key string, optional ...string) ([]json.RawMessage, map[string]json.RawMessage, *Problem) {
	members, err := decodeObject(data)
	var dup *dupKeyError
	if errors.As(err, &dup) {
		return nil, nil, &Problem{File: file, Msg: fmt.Sprintf("top level: key %q given twice", dup.key)}
	}
	if err != nil {
		return nil, nil, &Problem{File: file, Msg: fmt.Sprintf("top level %v: want {%q: [...]}", err, key)}
	}
	var arr json.RawMessage
	opt := map[string]json.RawMessage{}
	for _, m := range members {
		switch {
		case m.key == key:
			arr = m.val
		case slices.Contains(optional, m.key):
			opt[m.key] = m.val
		default:
			want := make([]string, 0, 1+len(optional))
			for _, k := range append([]string{key}, optional...) {
				want = append(want, strconv.Quote(k))
			}
			return nil, nil, &Problem{File: file, Msg: fmt.Sprintf("top level: unknown key %q: want only %s", m.key, strings.Join(want, ", "))}
		}
	}
	if arr == nil {
		return nil, nil, &Problem{File: file, Msg: fmt.Sprintf("top level: missing key %q", key)}
	}
	if jsonKind(arr) != "array" {
		return nil, nil, &Problem{File: file, Msg: fmt.Sprintf("top level: key %q %s", key, wrongType("an array", arr))}
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(arr, &elems); err != nil {
		return nil, nil, &Problem{File: file, Msg: fmt.Sprintf("top level: key %q: %v", key, err)}
	}
	return elems, opt, nil
}

// openEntry decodes one element into its members and names the entry by idKey's
// value when that is readable, else by its index. ok is false when the element is
// not an object (or repeats a key), which is recorded.
func openEntry(file, kind, arrayKey, idKey string, i int, raw json.RawMessage) (e *entry, members []member, ok bool) {
	pos := fmt.Sprintf("%s[%d]", arrayKey, i)
	e = &entry{file: file, name: pos, pos: pos}
	members, err := decodeObject(raw)
	var dup *dupKeyError
	if errors.As(err, &dup) {
		e.bad(dup.key, "%v", err)
		return e, nil, false
	}
	if err != nil {
		e.problems = append(e.problems, &Problem{File: file, Entry: e.name, Msg: err.Error()})
		return e, nil, false
	}
	for _, m := range members {
		if m.key == idKey {
			if s, msg := asString(m.val); msg == "" && readable(s) {
				e.id = s
				e.name = fmt.Sprintf("%s %q", kind, s)
			}
		}
	}
	return e, members, true
}

// parseProjects validates projects.json; it returns the valid projects, the problems
// of the others, and a fatal problem when the file as a whole is unusable.
func parseProjects(file string, data []byte) ([]Project, []*Problem, *Problem) {
	elems, fatal := topArray(file, data, "projects")
	if fatal != nil {
		return nil, nil, fatal
	}
	entries := make([]*entry, len(elems))
	projects := make([]Project, len(elems))
	for i, raw := range elems {
		e, members, ok := openEntry(file, "project", "projects", "name", i, raw)
		entries[i] = e
		if !ok {
			continue
		}
		p := &projects[i]
		seen := map[string]bool{}
		for _, m := range members {
			seen[m.key] = true
			switch m.key {
			case "name":
				s, msg := asString(m.val)
				switch {
				case !e.read(m.key, msg):
				case !nameRe.MatchString(s):
					e.bad(m.key, "must match [a-z][a-z0-9_-]*")
				default:
					p.Name = s
				}
			case "root":
				s, msg := asString(m.val)
				switch {
				case !e.read(m.key, msg):
				case !filepath.IsAbs(s) || hasNUL(s):
					e.bad(m.key, "must be an absolute directory")
				default:
					p.Root = filepath.Clean(s)
				}
			case "families":
				fams, msg := asStrings(m.val)
				if !e.read(m.key, msg) {
					break
				}
				if msg := checkNames(fams); msg != "" {
					e.bad(m.key, "%s", msg)
					break
				}
				p.Families = fams
			default:
				e.bad(m.key, "unknown key")
			}
		}
		for _, k := range []string{"name", "root"} {
			if !seen[k] {
				e.bad(k, "required")
			}
		}
	}
	markDuplicates(entries, func(i int) string { return projects[i].Name }, "name", "duplicate project name")
	markDuplicates(entries, func(i int) string { return projects[i].Root }, "root", "duplicate root")

	var valid []Project
	var problems []*Problem
	for i, e := range entries {
		if len(e.problems) > 0 {
			problems = append(problems, e.problems...)
			continue
		}
		valid = append(valid, projects[i])
	}
	return valid, problems, nil
}

// checkNames checks a list of family names: the name charset, no duplicates.
func checkNames(names []string) string {
	for i, n := range names {
		if !nameRe.MatchString(n) {
			return fmt.Sprintf("element %d must match [a-z][a-z0-9_-]*", i)
		}
		if slices.Index(names, n) != i {
			return fmt.Sprintf("duplicate %q", n)
		}
	}
	return ""
}

// markDuplicates adds a problem to every entry whose value (non-empty) is shared with
// another entry: all of them are left out, not just the later ones.
func markDuplicates(entries []*entry, value func(int) string, key, what string) {
	where := map[string][]int{}
	for i := range entries {
		if v := value(i); v != "" {
			where[v] = append(where[v], i)
		}
	}
	for i, e := range entries {
		v := value(i)
		if v == "" || len(where[v]) < 2 {
			continue
		}
		var others []string
		for _, j := range where[v] {
			if j != i {
				others = append(others, entries[j].pos)
			}
		}
		e.bad(key, "%s (also %s): both left out", what, strings.Join(others, ", "))
	}
}
