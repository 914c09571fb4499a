package providers

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// State is the turn's state directory (state_dir), shared by the processes of one turn: pins, what was described,
// and what was said once. It never holds offers or classes: every process recomputes those
// from the configuration and the manifest, so editing the state can never widen them.
//
// Each fact is one small file created atomically (written under a temporary name, then
// hard-linked to its final name, which fails if it exists), so concurrent processes agree on
// who recorded a fact first and never read a half-written one.
//
// A fact, once recorded, never changes, so what this process has read or written is kept in
// memory: a session's answers do not reread their pins.
type State struct {
	dir     string
	mu      sync.Mutex
	known   map[string][]byte
	created bool // this process made the directory
}

// Names of facts; the separator '@' occurs in neither provider ids nor tool names.

// DescribedFact names the fact that capability capID was described in this turn.
func DescribedFact(capID string) string { return "described@" + strings.Replace(capID, "/", "@", 1) }

// DownFact names the fact that provider id is out of the turn; its content is what the turn is told.
func DownFact(id string) string { return "unavailable@" + id }

func saidName(what string) string { return "said@" + what }

// FamilyFact names the fact that the family is selected; its content is how it is shown
// ("whole" or "index").
const FamilyFact = "family"

// EndedFact is --end-turn's mark: after it every answer of the turn is no-capabilities.
const EndedFact = "ended"

const pinsFact = "pins" // content: one "<id>/<tool> <definition hash>" line per capability

// factLimit bounds what is read of a fact: the pins of 10,000 tools fit with room to spare.
const factLimit = 16 << 20

// stateKey derives the default directory's name from session, turn, the manifest and the config.
func stateKey(session, turn string, blobs ...[]byte) string {
	h := sha256.New()
	for _, b := range append([][]byte{[]byte(session), []byte(turn)}, blobs...) {
		fmt.Fprintf(h, "%d:", len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// openState creates (0700) or reuses dir, refusing a symlink, a directory owned by
// someone else, or one that others can enter.
func openState(dir string, parent string) (*State, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("state directory %q: not an absolute path", dir)
	}
	if parent != "" {
		if _, err := privateDir(parent); err != nil {
			return nil, err
		}
	}
	created, err := privateDir(dir)
	if err != nil {
		return nil, err
	}
	return &State{dir: filepath.Clean(dir), known: map[string][]byte{}, created: created}, nil
}

// Dir is the state directory's path.
func (s *State) Dir() string { return s.dir }

// privateDir makes dir if it is missing (created says this call made it) and checks that it is
// a directory of ours, not a symlink, closed to others.
func privateDir(dir string) (created bool, err error) {
	err = os.Mkdir(dir, 0o700)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return false, fmt.Errorf("state directory: %w", err)
	}
	created = err == nil
	fi, err := os.Lstat(dir)
	if err != nil {
		return false, fmt.Errorf("state directory: %w", err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir() {
		return false, fmt.Errorf("state directory %q: not a directory (symlinks are not followed)", dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return false, fmt.Errorf("state directory %q: owned by uid %d, not by us", dir, st.Uid)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return false, fmt.Errorf("state directory %q: mode %v lets others in", dir, fi.Mode().Perm())
	}
	return created, nil
}

// Create records a fact; created is false when another process (or an earlier answer)
// recorded it first, in which case content is not written.
func (s *State) Create(name string, content []byte) (created bool, err error) {
	tmp, err := os.CreateTemp(s.dir, ".tmp-*")
	if err != nil {
		return false, fmt.Errorf("state: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(content); err != nil {
		tmp.Close()
		return false, fmt.Errorf("state: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return false, fmt.Errorf("state: %w", err)
	}
	if err := os.Link(tmp.Name(), filepath.Join(s.dir, name)); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		return false, fmt.Errorf("state: %w", err)
	}
	s.remember(name, content)
	return true, nil
}

func (s *State) remember(name string, content []byte) {
	s.mu.Lock()
	s.known[name] = content
	s.mu.Unlock()
}

// Read returns a fact's content; ok is false when it is absent. A symlink or a non-regular
// file is an error, never followed.
func (s *State) Read(name string) (content []byte, ok bool, err error) {
	return s.fetch(name, readFact)
}

// Map returns a fact's content as Read does, mapped from the file rather than copied: for a
// large fact that a process reads little of (the search index, where a query reads a few
// terms' postings), mapping spares the copy and the heap. A fact never changes once recorded,
// nor is it ever truncated (Create links a whole file), so the mapping stays what Read would
// have returned; it is read-only, and is never unmapped (a process maps a fact once, as Read
// keeps what it read).
func (s *State) Map(name string) (content []byte, ok bool, err error) {
	return s.fetch(name, mapFact)
}

// fetch is Read and Map: what this process knows of the fact, else the file, opened as open
// does, given to load (with its size) and then known.
func (s *State) fetch(name string, load func(f *os.File, size int64) ([]byte, error)) (content []byte, ok bool, err error) {
	s.mu.Lock()
	content, ok = s.known[name]
	s.mu.Unlock()
	if ok {
		return content, true, nil
	}
	f, size, ok, err := s.open(name)
	if err != nil || !ok {
		return nil, false, err
	}
	defer f.Close()
	b, err := load(f, size)
	if err != nil {
		return nil, false, fmt.Errorf("state: %w", err)
	}
	s.remember(name, b)
	return b, true, nil
}

// readFact reads an open fact of size bytes, at most factLimit of them.
func readFact(f *os.File, size int64) ([]byte, error) {
	b := make([]byte, 0, min(size, factLimit)+1) // +1: the read that meets the end
	return readAll(io.LimitReader(f, factLimit), b)
}

// mapFact maps an open fact of size bytes; an empty one (nothing to map), one larger than a
// fact may hold (readFact bounds it) or one that cannot be mapped here is read instead.
func mapFact(f *os.File, size int64) ([]byte, error) {
	if size > 0 && size <= factLimit {
		if b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED); err == nil {
			return b, nil
		}
	}
	return readFact(f, size)
}

// readAll is io.ReadAll into b's room.
func readAll(r io.Reader, b []byte) ([]byte, error) {
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// open opens fact name for reading, as Read does (no symlink, a regular file), with its size.
func (s *State) open(name string) (f *os.File, size int64, ok bool, err error) {
	f, err = os.OpenFile(filepath.Join(s.dir, name), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, 0, false, nil
		}
		return nil, 0, false, fmt.Errorf("state: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, false, fmt.Errorf("state: %w", err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, false, fmt.Errorf("state: %s: not a regular file", name)
	}
	return f, fi.Size(), true, nil
}

// Known returns a fact's content if this process has read or written it already.
func (s *State) Known(name string) (content []byte, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	content, ok = s.known[name]
	return content, ok
}

// Search looks a fact up without reading it whole: find is given the opened fact, read
// only where it looks, and its size. ok is false when the fact is absent. A fact this
// process knows already is searched in memory.
func (s *State) Search(name string, find func(r io.ReaderAt, size int64) error) (ok bool, err error) {
	if b, known := s.Known(name); known {
		return true, find(bytes.NewReader(b), int64(len(b)))
	}
	f, size, ok, err := s.open(name)
	if err != nil || !ok {
		return false, err
	}
	defer f.Close()
	return true, find(f, min(size, factLimit))
}

// Once reports whether this call is the first in the turn to claim what; a state that
// cannot be written says "first" so that a notice is repeated rather than lost.
func (s *State) Once(what string) bool {
	// An empty fact needs no write-then-link: creating the name is the claim.
	name := saidName(what)
	f, err := os.OpenFile(filepath.Join(s.dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return false
	}
	if err == nil {
		f.Close()
		s.remember(name, nil)
	}
	return true
}
