package capability

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/spear-shell/spear-shell/policy/paths"
)

// Prompt is one operator prompt (SPEC 13): a *.md file of a prompt directory.
type Prompt struct {
	Name        string // the file name without .md
	Description string // the YAML front matter's description, if any
	Text        string // the body
	Path        string
}

// SkippedPrompt is a file left out, and why.
type SkippedPrompt struct {
	Path, Reason string
}

// maxPromptFile bounds one prompt file: prompts go into a model's context whole.
const maxPromptFile = 1 << 20

var promptName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`) })

// LoadPrompts reads every *.md file of dirs (in order; the first of two files with one name
// wins, the second is skipped). A directory that cannot be read is one skip.
func LoadPrompts(dirs []string) ([]Prompt, []SkippedPrompt) {
	var out []Prompt
	var skipped []SkippedPrompt
	seen := map[string]string{}
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			skipped = append(skipped, SkippedPrompt{dir, "cannot be read: " + paths.UnwrapPath(err).Error()})
			continue
		}
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".md") || e.IsDir() {
				continue
			}
			path := filepath.Join(dir, e.Name())
			p, err := readPrompt(path)
			if err == nil {
				if first, dup := seen[p.Name]; dup {
					err = fmt.Errorf("its name %q is taken by %s", p.Name, first)
				}
			}
			if err != nil {
				skipped = append(skipped, SkippedPrompt{path, err.Error()})
				continue
			}
			seen[p.Name] = path
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b Prompt) int { return strings.Compare(a.Name, b.Name) })
	return out, skipped
}

// trustedPrompts loads the prompts of dirs, leaving out a directory or a file that cannot be
// trusted: it, or a symlink on its way, lies where the agent can write (SPEC 9).
func (e *turnEnv) trustedPrompts(dirs []string) ([]Prompt, []SkippedPrompt) {
	var trusted []string
	var skipped []SkippedPrompt
	for _, d := range dirs {
		if err := e.TrustPrograms([]string{d}, nil); err != nil {
			skipped = append(skipped, SkippedPrompt{d, "the directory cannot be trusted: " + err.Error()})
			continue
		}
		trusted = append(trusted, d)
	}
	all, more := LoadPrompts(trusted)
	skipped = append(skipped, more...)
	var ps []Prompt
	for _, p := range all {
		if err := e.TrustPrograms([]string{p.Path}, nil); err != nil {
			skipped = append(skipped, SkippedPrompt{p.Path, "the file cannot be trusted: " + err.Error()})
			continue
		}
		ps = append(ps, p)
	}
	return ps, skipped
}

func readPrompt(path string) (Prompt, error) {
	p := Prompt{Name: strings.TrimSuffix(filepath.Base(path), ".md"), Path: path}
	if !promptName().MatchString(p.Name) {
		return p, fmt.Errorf("its name %q is not [A-Za-z0-9][A-Za-z0-9_.-]{0,127}", p.Name)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return p, fmt.Errorf("cannot be read: %w", paths.UnwrapPath(err))
	}
	if !fi.Mode().IsRegular() {
		return p, errors.New("is not a regular file")
	}
	if fi.Size() > maxPromptFile {
		return p, fmt.Errorf("is over %d bytes", maxPromptFile)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return p, fmt.Errorf("cannot be read: %w", paths.UnwrapPath(err))
	}
	if !utf8.Valid(b) {
		return p, errors.New("is not UTF-8 text")
	}
	p.Description, p.Text, err = frontMatter(string(b))
	return p, err
}

// frontMatter splits an optional YAML front matter from the body. Only a flat mapping of
// scalars is read (description is the one key used); anything else in it is an error, so a
// file that YAML would read otherwise is left out rather than misread.
func frontMatter(s string) (description, body string, err error) {
	s = strings.TrimPrefix(s, "\ufeff")
	first, rest, _ := strings.Cut(s, "\n")
	if strings.TrimRight(first, " \r") != "---" {
		return "", s, nil
	}
	for n := 2; ; n++ {
		var line string
		var ok bool
		line, rest, ok = strings.Cut(rest, "\n")
		line = strings.TrimRight(line, "\r")
		if line == "---" || line == "..." {
			return description, rest, nil
		}
		if !ok && rest == "" && line == "" {
			return "", "", errors.New("front matter is not closed by ---")
		}
		if t := strings.TrimSpace(line); t == "" || t[0] == '#' {
			if !ok {
				return "", "", errors.New("front matter is not closed by ---")
			}
			continue
		}
		key, val, found := strings.Cut(line, ":")
		if !found || key != strings.TrimSpace(key) || key == "" || strings.ContainsAny(key, " \t\"'") {
			return "", "", fmt.Errorf("front matter line %d is not key: value", n)
		}
		v, verr := yamlScalar(strings.TrimSpace(val))
		if verr != nil {
			return "", "", fmt.Errorf("front matter line %d: %s: %v", n, key, verr)
		}
		if key == "description" {
			description = v
		}
		if !ok {
			return "", "", errors.New("front matter is not closed by ---")
		}
	}
}

// yamlScalar reads a one-line YAML scalar: plain, 'single' or "double" quoted.
func yamlScalar(v string) (string, error) {
	switch {
	case v == "":
		return "", nil
	case v[0] == '"':
		s, err := strconv.Unquote(v)
		if err != nil {
			return "", errors.New("bad double-quoted string")
		}
		return s, nil
	case v[0] == '\'':
		if len(v) < 2 || v[len(v)-1] != '\'' {
			return "", errors.New("bad single-quoted string")
		}
		inner := v[1 : len(v)-1]
		if strings.Count(strings.ReplaceAll(inner, "''", ""), "'") > 0 {
			return "", errors.New("bad single-quoted string")
		}
		return strings.ReplaceAll(inner, "''", "'"), nil
	case strings.ContainsAny(v[:1], "[{|>&*!%@`"):
		return "", errors.New("only plain or quoted one-line strings are read")
	}
	if i := strings.Index(v, " #"); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	return v, nil
}
