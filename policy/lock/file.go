// Package lock is the operator's definition lock (SPEC 15): capabilities.lock.json, which keeps,
// per provider, the command it was locked with and each tool's canonical definition with that
// text's SHA-256; reading it strictly, writing it atomically, the canonical form of a
// definition (RFC 8785 style), and what drifted since.
//
// Layer 1 (docs/layout.md): it imports only policy/paths, never policy or anything of
// capability/ or interp/.
package lock

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/spear-shell/spear-shell/policy/paths"
)

// FileName is the lock's name, beside the capabilities file.
const FileName = "capabilities.lock.json"

// Version is the lock format's version.
const Version = 1

// MaxBytes bounds a lock file: 10,000 tools per provider of definitions are large, but not this.
const MaxBytes = 256 << 20

// NotLocked is the reason recorded for what the lock does not approve (tool_rejected,
// provider_rejected).
const NotLocked = "not-locked"

// PathFor returns the lock's path for the capabilities file capsFile.
func PathFor(capsFile string) string { return filepath.Join(filepath.Dir(capsFile), FileName) }

// File is a lock: providers sorted by id, each one's tools by name.
type File struct {
	Version   int        `json:"version"`
	Providers []Provider `json:"providers"`
}

// Provider is one provider as the operator locked it.
type Provider struct {
	ID      string   `json:"id"`
	Command []string `json:"command"` // resolved, as the configuration gave it when locked
	Server  string   `json:"server"`  // the serverInfo name it gave
	Time    string   `json:"time"`    // RFC 3339, UTC
	Tools   []Tool   `json:"tools"`
}

// Tool is one locked tool.
type Tool struct {
	Name       string `json:"name"`
	Definition string `json:"definition"` // canonical (Definition)
	SHA256     string `json:"sha256"`     // of Definition, lower-case hex
}

// Sum is the lower-case hex SHA-256 of text.
func Sum(text []byte) string {
	s := sha256.Sum256(text)
	return hex.EncodeToString(s[:])
}

// Provider returns the entry of id, or nil.
func (f *File) Provider(id string) *Provider {
	i, ok := slices.BinarySearchFunc(f.Providers, id, func(p Provider, id string) int { return strings.Compare(p.ID, id) })
	if !ok {
		return nil
	}
	return &f.Providers[i]
}

// Tool returns the locked tool named name, or nil.
func (p *Provider) Tool(name string) *Tool {
	i, ok := slices.BinarySearchFunc(p.Tools, name, func(t Tool, n string) int { return strings.Compare(t.Name, n) })
	if !ok {
		return nil
	}
	return &p.Tools[i]
}

// Put replaces (or adds) p's entry, keeping the providers sorted.
func (f *File) Put(p Provider) {
	slices.SortFunc(p.Tools, func(a, b Tool) int { return strings.Compare(a.Name, b.Name) })
	i, ok := slices.BinarySearchFunc(f.Providers, p.ID, func(q Provider, id string) int { return strings.Compare(q.ID, id) })
	if ok {
		f.Providers[i] = p
		return
	}
	f.Providers = slices.Insert(f.Providers, i, p)
}

// Error is a lock that cannot be used: its path and why.
type Error struct {
	Path string
	Msg  string
	err  error
}

func (e *Error) Error() string { return "lock " + e.Path + ": " + e.Msg }
func (e *Error) Unwrap() error { return e.err }

// Read reads and checks the lock at path: a regular file, not group- or world-writable, at most
// MaxBytes, valid (Parse). It returns the file and the SHA-256 of its bytes. A missing file's
// error Is fs.ErrNotExist. Where the path lies (a trusted path, SPEC 9) is the caller's check.
func Read(path string) (*File, string, error) {
	fail := func(msg string, err error) (*File, string, error) {
		return nil, "", &Error{Path: path, Msg: msg, err: err}
	}
	if !filepath.IsAbs(path) {
		return fail("the path is not absolute", nil)
	}
	// O_NONBLOCK: a FIFO planted in its place must not hang the turn.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fail("does not exist", err)
		}
		return fail(fmt.Sprintf("cannot be opened: %v", paths.UnwrapPath(err)), err)
	}
	defer f.Close()
	st, err := f.Stat()
	switch {
	case err != nil:
		return fail(fmt.Sprintf("cannot be inspected: %v", paths.UnwrapPath(err)), err)
	case !st.Mode().IsRegular():
		return fail("is not a regular file", nil)
	case st.Mode().Perm()&0o022 != 0:
		return fail(fmt.Sprintf("mode %04o is group- or world-writable: refused", st.Mode().Perm()), nil)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return fail(fmt.Sprintf("cannot be read: %v", err), err)
	}
	if len(data) > MaxBytes {
		return fail(fmt.Sprintf("is larger than %d bytes", MaxBytes), nil)
	}
	lf, err := Parse(data)
	if err != nil {
		return fail(err.Error(), err)
	}
	return lf, Sum(data), nil
}

// Parse checks a lock's content strictly: valid UTF-8 JSON, no unknown member, every type as
// it should be, version 1, providers sorted by unique id with an absolute command[0], tools
// sorted by unique name, each definition hashing to its sha256 (Verify checks the rest). Any
// fault makes the whole lock unusable: a lock that was damaged approves nothing.
func Parse(data []byte) (*File, error) {
	if !utf8.Valid(data) || !json.Valid(data) {
		return nil, errors.New("not valid JSON (truncated, or not written by spear-shell --lock)")
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	var f File
	if err := d.Decode(&f); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("%s: a %s where a %s belongs", te.Field, te.Value, te.Type)
		}
		return nil, err
	}
	if bytes.TrimSpace(data)[0] != '{' {
		return nil, errors.New("not a JSON object")
	}
	if f.Version != Version {
		return nil, fmt.Errorf("version %d: this spear-shell reads version %d", f.Version, Version)
	}
	for i, p := range f.Providers {
		where := fmt.Sprintf("providers[%d]", i)
		switch {
		case p.ID == "":
			return nil, fmt.Errorf("%s: no id", where)
		case i > 0 && strings.Compare(f.Providers[i-1].ID, p.ID) >= 0:
			return nil, fmt.Errorf("%s (%q): providers are not sorted by unique id", where, p.ID)
		case len(p.Command) == 0 || !filepath.IsAbs(p.Command[0]):
			return nil, fmt.Errorf("%s (%q): command must start with an absolute path", where, p.ID)
		}
		for j, t := range p.Tools {
			tw := fmt.Sprintf("%s (%q) tools[%d] (%q)", where, p.ID, j, t.Name)
			if j > 0 && strings.Compare(p.Tools[j-1].Name, t.Name) >= 0 {
				return nil, fmt.Errorf("%s: tools are not sorted by unique name", tw)
			}
			if Sum([]byte(t.Definition)) != t.SHA256 {
				return nil, fmt.Errorf("%s: the definition does not hash to its sha256", tw)
			}
		}
	}
	return &f, nil
}

// Verify checks what Parse leaves to the operator's commands (--lock, --lock --diff, --check),
// since it costs every definition a parse: each is in canonical form, names its tool and holds
// an inputSchema object. A turn need not: a locked text that is not what --lock writes can only
// fail to match what a provider lists, and its tool is then refused (definition-changed).
func (f *File) Verify() error {
	for i, p := range f.Providers {
		for j, t := range p.Tools {
			tw := fmt.Sprintf("providers[%d] (%q) tools[%d] (%q)", i, p.ID, j, t.Name)
			canon, err := Canonical([]byte(t.Definition))
			if err != nil {
				return fmt.Errorf("%s: the definition is not JSON: %w", tw, err)
			}
			if canon != t.Definition {
				return fmt.Errorf("%s: the definition is not in canonical form", tw)
			}
			var named struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"inputSchema"`
			}
			if err := json.Unmarshal([]byte(t.Definition), &named); err != nil || named.Name != t.Name {
				return fmt.Errorf("%s: the definition names another tool", tw)
			}
			if len(named.InputSchema) == 0 || named.InputSchema[0] != '{' {
				return fmt.Errorf("%s: the definition has no inputSchema object", tw)
			}
		}
	}
	return nil
}

// Marshal is the lock's text: indented, one member per line, so that a review of the file in
// version control reads well; each definition stays one canonical string.
func (f *File) Marshal() []byte {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		panic(err) // strings and slices of them only
	}
	return append(b, '\n')
}

// Write writes f to path atomically: a new file in the same directory (0600), synced, renamed
// over path, the directory synced. A reader sees the old lock or the new one, never a part.
func Write(path string, f *File) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+FileName+".*")
	if err != nil {
		return fmt.Errorf("lock %s: %w", path, paths.UnwrapPath(err))
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return fmt.Errorf("lock %s: %w", path, err)
	}
	if _, err := tmp.Write(f.Marshal()); err != nil {
		return fmt.Errorf("lock %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("lock %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("lock %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("lock %s: %w", path, paths.UnwrapPath(err))
	}
	done = true
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// Hold takes an exclusive lock (flock) on the directory that holds path, for one --lock run
// from its read to its write: two operators locking different providers at once then keep
// both entries. release ends it.
func Hold(path string) (release func(), err error) {
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, paths.UnwrapPath(err))
	}
	if err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX); err != nil {
		d.Close()
		return nil, fmt.Errorf("lock %s: flock: %w", path, err)
	}
	return func() { d.Close() }, nil // closing the descriptor releases the flock
}
