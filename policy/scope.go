package policy

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// ParseScope parses a scope value: `global`, `corpus a[, b ...]`, `family x[, y ...]`
// or `path /abs/dir`. Keywords are exact lower case and separated from their operand
// by blanks (spaces or tabs); names are `[a-z][a-z0-9_-]*`, separated by commas with
// optional blanks, without duplicates. Nothing is trimmed: leading or trailing blanks
// are an error. The path is kept as written; symlinks and `..` in it are resolved when
// deciding, as the kernel would.
func ParseScope(s string) (Scope, error) {
	if s == ScopeGlobal {
		return Scope{Kind: ScopeGlobal}, nil
	}
	if s == "" {
		return Scope{}, errors.New("must not be empty: omit the key to apply nowhere")
	}
	if strings.TrimSpace(s) != s {
		return Scope{}, errors.New("must not start or end with blanks")
	}
	kw, rest := s, ""
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		kw, rest = s[:i], strings.TrimLeft(s[i:], " \t")
	}
	switch kw {
	case ScopeCorpus, ScopeFamily:
		names, err := parseNames(rest)
		if err != nil {
			return Scope{}, fmt.Errorf("%s: %w", kw, err)
		}
		return Scope{Kind: kw, Names: names}, nil
	case ScopePath:
		if rest == "" || !filepath.IsAbs(rest) {
			return Scope{}, errors.New("path: must be an absolute directory")
		}
		if hasNUL(rest) {
			return Scope{}, errors.New("path: must not contain NUL")
		}
		return Scope{Kind: ScopePath, Path: rest}, nil
	}
	if kw == ScopeGlobal {
		return Scope{}, errors.New("global takes no operand")
	}
	return Scope{}, errors.New("must be global, corpus <project>[, ...], family <name>[, ...] or path <absolute dir> (keywords in lower case)")
}

// parseNames parses `a, b,c` into names; blanks are allowed around commas only.
func parseNames(s string) ([]string, error) {
	if s == "" {
		return nil, errors.New("needs at least one name")
	}
	parts := strings.Split(s, ",")
	names := make([]string, 0, len(parts))
	seen := map[string]bool{}
	for i, part := range parts {
		n := part
		if i > 0 {
			n = strings.TrimLeft(n, " \t")
		}
		n = strings.TrimRight(n, " \t")
		if n == "" {
			return nil, errors.New("empty name in list")
		}
		if !nameRe.MatchString(n) {
			return nil, fmt.Errorf("name %q must match [a-z][a-z0-9_-]*", n)
		}
		if seen[n] {
			return nil, fmt.Errorf("duplicate name %q", n)
		}
		seen[n] = true
		names = append(names, n)
	}
	return names, nil
}

// String renders the scope in the registry's syntax (for reasons and --check).
func (s Scope) String() string {
	switch s.Kind {
	case "":
		return "none"
	case ScopeGlobal:
		return ScopeGlobal
	case ScopePath:
		return ScopePath + " " + s.Path
	}
	return s.Kind + " " + strings.Join(s.Names, ", ")
}
