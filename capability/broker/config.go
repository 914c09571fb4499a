package broker

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"

	"github.com/spear-shell/spear-shell/audit"
	"github.com/spear-shell/spear-shell/policy"
	"github.com/spear-shell/spear-shell/policy/paths"
)

// config is the configuration as the broker reads it itself: loaded again only when
// projects.json or the capabilities file is another file, or was changed, since the last read
// (each request costs two stats, not a parse).
type config struct {
	paths policy.Paths

	mu   sync.Mutex
	ids  [2]string
	reg  *policy.Registry
	err  error
	red  *audit.Redactor
	read bool
}

func newConfig(w Where, auditFile string) *config {
	return &config{paths: policy.Paths{Home: w.Home, CapabilitiesFile: w.Caps, AuditFile: auditFile}}
}

// fileID says which file is at path and when it last changed (inode, size, times).
func fileID(path string) string {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return "-"
	}
	return fmt.Sprintf("%d:%d:%d:%d.%d:%d.%d", st.Dev, st.Ino, st.Size, st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
}

// load returns the registry as the files are now. err is a fatal error (the file is invalid:
// turns get no providers, and the broker stops none of its upstreams for it).
func (c *config) load() (*policy.Registry, *audit.Redactor, error) {
	return c.loadIf(false)
}

// loadIf is load, read again when fresh even if the files did not change: what the files name
// (a program, resolved when they are loaded) may have.
func (c *config) loadIf(fresh bool) (*policy.Registry, *audit.Redactor, error) {
	ids := [2]string{fileID(filepath.Join(c.paths.Home, "projects.json")), fileID(c.paths.CapabilitiesFile)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if fresh || !c.read || ids != c.ids {
		c.reg, c.err = policy.Load(c.paths)
		// What earlier starts read stays redacted: an upstream started with an env_file's old
		// value still runs after the file (and then the configuration) is edited.
		// An env_file within a project's root could be an agent's: its values are no secrets.
		roots := projectRoots(c.reg)
		red := audit.NewRedactor(c.reg.Secrets(func(p *policy.Provider) bool { return paths.CheckTrusted(p.EnvFile, roots) == nil }))
		red.AddFrom(c.red)
		c.red = red
		c.ids, c.read = ids, true
	}
	return c.reg, c.red, c.err
}

// lookup finds the shared entry a request names: enabled, shared, reaching share key key (the
// project for share project, "" for all), with launch keys hashing to launch. why says what was
// not found.
func (c *config) lookup(id, key, launch string) (p *policy.Provider, why string) {
	if p, why = c.find(id, key, launch, false); p == nil {
		p, why = c.find(id, key, launch, true) // not found as cached: as the files are read now
	}
	return p, why
}

func (c *config) find(id, key, launch string, fresh bool) (p *policy.Provider, why string) {
	reg, _, err := c.loadIf(fresh)
	if err != nil {
		return nil, "the configuration cannot be used: " + err.Error()
	}
	p = reg.Provider(id)
	switch {
	case p == nil:
		return nil, "the configuration has no usable entry " + strconv.Quote(id)
	case !p.Enabled:
		return nil, "entry " + strconv.Quote(id) + " is disabled"
	case p.Share == "":
		return nil, "entry " + strconv.Quote(id) + " is not shared"
	case p.Share == policy.ShareAll && key != "":
		return nil, "entry " + strconv.Quote(id) + " is shared with all: its share key is empty, not " + strconv.Quote(key)
	case p.Share == policy.ShareProject:
		projects, _ := reg.Reach(p)
		if !slices.Contains(projects, key) {
			return nil, "entry " + strconv.Quote(id) + " reaches no registered project " + strconv.Quote(key)
		}
	}
	if p.LaunchKeyNow() != launch {
		return nil, "entry " + strconv.Quote(id) + " has other launch keys than the caller's (its configuration changed)"
	}
	return p, ""
}

// current says whether an upstream of entry id, share key key and launch keys launch still
// belongs to the configuration: false once the entry was removed, disabled, unshared or given
// other launch keys, or no longer reaches the key. A configuration that cannot be used, or an
// entry that is rejected, says nothing against it (SPEC 14: it stops no running upstream).
func (c *config) current(id, key, launch string) bool {
	reg, _, err := c.load()
	if err != nil || slices.ContainsFunc(reg.Rejected, func(r policy.Rejected) bool { return r.ID == id }) {
		return true
	}
	p, _ := c.lookup(id, key, launch)
	return p != nil
}

// entry is entry id as the configuration holds it now (nil: none), for the keys that apply per
// call or from the next stop (timeout, restart_delay).
func (c *config) entry(id string) *policy.Provider {
	reg, _, _ := c.load()
	if reg == nil {
		return nil
	}
	return reg.Provider(id)
}

// userHome is the user's home from the password database, the same whoever started the broker
// (SPEC 14); HOME, then "/", when the database has none.
func userHome() string {
	if h := passwdHome(); h != "" {
		return h
	}
	if h := os.Getenv("HOME"); filepath.IsAbs(h) {
		return h
	}
	return "/"
}
