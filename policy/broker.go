package policy

// The broker's settings and what decides a shared server's process (SPEC 2.3, 14).

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

// Share values of an entry.
const (
	ShareProject = "project"
	ShareAll     = "all"
)

// Bounds and defaults of the broker's settings and of restart_delay.
const (
	DefaultRestartDelay   = time.Second
	MaxRestartDelay       = 300 * time.Second
	DefaultBrokerIdle     = 600 * time.Second
	MinBrokerIdle         = 10 * time.Second
	MaxBrokerIdle         = 86400 * time.Second
	DefaultFlappingExits  = 5
	MaxFlappingExits      = 100
	DefaultFlappingWithin = 60 * time.Second
	MaxFlappingWithin     = 3600 * time.Second
)

// Broker is the file's "broker" object: how long an on-demand broker waits with no caller, where
// its records go, and when an upstream that keeps stopping is held down.
type Broker struct {
	Idle           time.Duration
	Audit          string // absolute; "" until Load fills in $SPEAR_HOME/audit.jsonl
	FlappingExits  int
	FlappingWithin time.Duration
}

// DefaultBroker is the broker's settings when the file says nothing.
func DefaultBroker() Broker {
	return Broker{Idle: DefaultBrokerIdle, FlappingExits: DefaultFlappingExits, FlappingWithin: DefaultFlappingWithin}
}

// checkShared checks what an entry's share keys need once every key is read: restart_delay only
// with share, and its default with it.
func checkShared(e *entry, p *Provider, seen map[string]bool) {
	switch {
	case seen["restart_delay"] && p.Share == "" && !seen["share"]:
		e.bad("restart_delay", "only with share (an entry the broker runs)")
	case p.Share != "" && !seen["restart_delay"]:
		p.RestartDelay = DefaultRestartDelay
	}
}

// parseBroker reads the "broker" object into b; a bad key is a problem naming it and keeps
// that key's default.
func parseBroker(file string, raw json.RawMessage, b *Broker) []*Problem {
	var problems []*Problem
	bad := func(key, format string, args ...any) {
		problems = append(problems, &Problem{File: file, Entry: "broker", Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	members, err := decodeObject(raw)
	if err != nil {
		bad("", "%s", wrongType("an object", raw))
		return problems
	}
	for _, m := range members {
		switch m.key {
		case "idle":
			if d, msg := asSecondsIn(m.val, MinBrokerIdle, MaxBrokerIdle); msg != "" {
				bad(m.key, "%s", msg)
			} else {
				b.Idle = d
			}
		case "audit":
			s, msg := asString(m.val)
			switch {
			case msg != "":
				bad(m.key, "%s", msg)
			case !filepath.IsAbs(s) || filepath.Clean(s) != s || hasNUL(s):
				bad(m.key, "must be an absolute, clean file path")
			default:
				b.Audit = s
			}
		case "flapping":
			fm, err := decodeObject(m.val)
			if err != nil {
				bad(m.key, "%s", wrongType("an object", m.val))
				continue
			}
			for _, f := range fm {
				key := "flapping." + f.key
				switch f.key {
				case "exits":
					if n, msg := asWhole(f.val, 1, MaxFlappingExits); msg != "" {
						bad(key, "%s", msg)
					} else {
						b.FlappingExits = n
					}
				case "within":
					if d, msg := asSecondsIn(f.val, time.Second, MaxFlappingWithin); msg != "" {
						bad(key, "%s", msg)
					} else {
						b.FlappingWithin = d
					}
				default:
					bad(key, "unknown key: want only \"exits\" and \"within\"")
				}
			}
		default:
			bad(m.key, "unknown key: want only \"idle\", \"audit\" and \"flapping\"")
		}
	}
	return problems
}

// checkBrokerAudit fills in broker.audit's default and refuses a path outside SPEAR_HOME and the
// directory of SPEAR_AUDIT_FILE (both hidden inside the boundary), which then takes the default.
func checkBrokerAudit(capsFile string, p Paths, b *Broker, problems *[]*Problem) {
	def := filepath.Join(p.Home, "audit.jsonl")
	if b.Audit == "" {
		b.Audit = def
		return
	}
	dirs := []string{filepath.Clean(p.Home)}
	if p.AuditFile != "" && filepath.IsAbs(p.AuditFile) {
		dirs = append(dirs, filepath.Dir(filepath.Clean(p.AuditFile)))
	}
	if !slices.ContainsFunc(dirs, func(d string) bool { return within(d, b.Audit) && b.Audit != d }) {
		*problems = append(*problems, &Problem{File: capsFile, Entry: "broker", Key: "audit",
			Msg: fmt.Sprintf("%s lies outside SPEAR_HOME and the directory of SPEAR_AUDIT_FILE: the default %s is used", b.Audit, def)})
		b.Audit = def
	}
}

// asSecondsIn decodes a number of seconds (fractions allowed) within [lo, hi].
func asSecondsIn(raw json.RawMessage, lo, hi time.Duration) (time.Duration, string) {
	if jsonKind(raw) != "number" {
		return 0, wrongType("a number of seconds", raw)
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, "must be a finite number of seconds"
	}
	if f < lo.Seconds() || f > hi.Seconds() {
		return 0, fmt.Sprintf("must be between %g and %g seconds", lo.Seconds(), hi.Seconds())
	}
	return time.Duration(f * float64(time.Second)), ""
}

// asWhole decodes a whole number within [lo, hi].
func asWhole(raw json.RawMessage, lo, hi int) (int, string) {
	if jsonKind(raw) != "number" {
		return 0, wrongType("a whole number", raw)
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		return 0, fmt.Sprintf("must be a whole number between %d and %d", lo, hi)
	}
	return int(f), ""
}

// LaunchKey fingerprints what decides a shared server's process (SPEC 14): the resolved
// command, env, env_file (its path and the file's identity, so that an edit starts a new
// process), max_message and share. Every other key applies per call. fileID says what the
// env_file is now ("" for none, or when it cannot be read: a start then fails on it).
func (p *Provider) LaunchKey(fileID string) string {
	h := sha256.New()
	field := func(s string) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	// Each list is preceded by its length, so that no argument can pass for a key or the
	// reverse (["x", "env", "K", "V"] with no env is not ["x"] with K=V).
	field("command")
	field(fmt.Sprint(len(p.Command)))
	for _, a := range p.Command {
		field(a)
	}
	field("env")
	keys := make([]string, 0, len(p.Env))
	for k := range p.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	field(fmt.Sprint(len(keys)))
	for _, k := range keys {
		field(k)
		field(p.Env[k])
	}
	field("env_file")
	field(p.EnvFile)
	field(fileID)
	field("max_message")
	field(fmt.Sprint(p.MaxMessage))
	field("share")
	field(p.Share)
	return hex.EncodeToString(h.Sum(nil))
}

// FileID says which file is at path now (device, inode, size, modification time), for a
// launch key: "" when there is none or it cannot be inspected.
func FileID(path string) string {
	if path == "" {
		return ""
	}
	st, err := os.Stat(path)
	if err != nil {
		return ""
	}
	sys, _ := st.Sys().(*syscall.Stat_t)
	if sys == nil {
		return fmt.Sprintf("%d:%d", st.Size(), st.ModTime().UnixNano())
	}
	return fmt.Sprintf("%d:%d:%d:%d", sys.Dev, sys.Ino, st.Size(), st.ModTime().UnixNano())
}

// LaunchKeyNow is LaunchKey with the env_file as it is now.
func (p *Provider) LaunchKeyNow() string { return p.LaunchKey(FileID(p.EnvFile)) }
