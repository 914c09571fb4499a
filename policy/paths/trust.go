package paths

// Trusted paths (SPEC 9): everything spear-shell runs or reads must be out of the agent's reach.
// Inside the boundary the agent writes only the writable roots, so a path is trusted when
// neither it nor any symlink on its way lies in one: the agent can then neither replace the
// file nor redirect the path.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxSymlinks bounds the symlinks followed on one path, as the kernel's ELOOP does.
const maxSymlinks = 40

// CheckTrusted tells why path cannot be trusted when writable are the writable roots (absolute,
// clean and resolved, as WritableRoots makes them): it is relative, it lies in a writable root,
// or a symlink on its way (any component, or a symlink's target) lies in one. nil when it can be
// trusted. A path that does not exist is judged by what exists of it and where the rest would
// be created. The error text is a phrase for "boundary: <path>: <why>".
func CheckTrusted(path string, writable []string) error {
	if !filepath.IsAbs(path) {
		return errors.New("not an absolute path")
	}
	cur := "/"
	rest := splitPath(path)
	hops := 0
	crossed := "" // a writable root a directory on the way lay in
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		if c == ".." {
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			// Nothing further exists: the rest would be created lexically below next.
			next = filepath.Join(append([]string{next}, rest...)...)
			if root := rootOf(next, writable); root != "" {
				return fmt.Errorf("would be created in the writable root %s", root)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("cannot be checked: %w", err)
		}
		isLink := fi.Mode()&fs.ModeSymlink != 0
		root := rootOf(next, writable)
		if root != "" && isLink {
			return fmt.Errorf("passes through the symlink %s in the writable root %s", next, root)
		}
		if !isLink {
			if root != "" && crossed == "" {
				crossed = root
			}
			cur = next
			continue
		}
		if hops++; hops > maxSymlinks {
			return errors.New("too many symlinks")
		}
		target, err := os.Readlink(next)
		if err != nil {
			return fmt.Errorf("cannot be checked: %w", err)
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		rest = append(splitPath(target), rest...)
	}
	if root := rootOf(cur, writable); root != "" {
		return fmt.Errorf("lies in the writable root %s", root)
	}
	if crossed != "" {
		// ws/sub/..: the agent could make sub a symlink.
		return fmt.Errorf("passes through the writable root %s", crossed)
	}
	return nil
}

// WritableRoots returns the writable roots as CheckTrusted wants them: absolute, clean, symlinks
// resolved. A root that does not exist (yet) is kept as given, made clean.
func WritableRoots(paths ...string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			continue
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		out = append(out, filepath.Clean(p))
	}
	return out
}

// splitPath lists the components of p, without empty ones and ".".
func splitPath(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// rootOf returns the writable root that holds p (p itself or an ancestor), or "".
func rootOf(p string, roots []string) string {
	for _, r := range roots {
		if Within(p, r) {
			return r
		}
	}
	return ""
}

// Within reports whether p is d or inside d (both clean and absolute).
func Within(p, d string) bool {
	return p == d || d == "/" || strings.HasPrefix(p, d+"/")
}
