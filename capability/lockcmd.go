package capability

// The operator's lock commands (SPEC 15): `spear-shell --lock [ID...]` approves what providers
// list now, `--lock --diff [ID...]` says what drifted since, and --check's lock lines. Each
// starts providers as --check does (startAndList: the answers' own start path).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spear-shell/spear-shell/audit"
	"github.com/spear-shell/spear-shell/capability/broker"
	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/capability/provlink"
	"github.com/spear-shell/spear-shell/mcpstdio"
	"github.com/spear-shell/spear-shell/policy"
	"github.com/spear-shell/spear-shell/policy/lock"
)

// operator is what an operator command works on: the registry, the lock and a provider core
// to start providers with.
type operator struct {
	reg      *policy.Registry
	red      *audit.Redactor
	e        *turnEnv
	lockPath string
	roots    []string // where the agent may write: no lock is read or written there

	statusOnce sync.Once
	status     *provlink.BrokerStatus // brokerStatus
}

// loadRegistry loads the deployment's registry as an operator command sees it (--check,
// --lock): never nil; err says why it cannot be used. s.Getenv is set when it was nil.
func loadRegistry(s *Settings) (home string, reg *policy.Registry, err error) {
	if s.Getenv == nil {
		s.Getenv = func(string) string { return "" }
	}
	home = policy.DefaultHome(s.Getenv)
	reg, err = policy.Load(policy.Paths{Home: home, CapabilitiesFile: s.Getenv("SPEAR_CAPABILITIES_FILE"), AuditFile: s.Getenv("SPEAR_AUDIT_FILE")})
	if reg == nil {
		reg = &policy.Registry{Home: home}
	}
	return home, reg, err
}

// newOperator loads the registry (err: it cannot be used) and the manifest, if one is named.
func newOperator(s Settings) (*operator, error) {
	_, reg, err := loadRegistry(&s)
	var man *policy.Manifest
	if s.ManifestPath != "" {
		man, _ = policy.LoadManifest(s.ManifestPath, s.Cwd)
	}
	o := &operator{reg: reg, e: operatorEnv(s, reg, man), lockPath: providers.LockPath(s.Getenv), roots: operatorRoots(s, reg, man)}
	o.red = o.e.Redactor // the turn's: an env_file read when a provider starts adds to it
	return o, err
}

// operatorEnv is an operator command's turn (--check, the lock commands): the registry and the
// manifest (nil: none), and a redactor of the secrets of the env_files a start would read
// (Turn.OperatorsEnvFile).
func operatorEnv(s Settings, reg *policy.Registry, man *policy.Manifest) *turnEnv {
	e := &turnEnv{Turn: &providers.Turn{Settings: s.Settings, Registry: reg, Manifest: man}, s: s}
	e.Redactor = audit.NewRedactor(reg.Secrets(e.OperatorsEnvFile))
	return e
}

// operatorRoots are the writable roots an operator command holds the lock against: the
// manifest's, when one is named, and every registered project's root, since without a turn
// each is a workspace some turn writes: a lock that lies in one, or is reached through a
// symlink in one, could be the agent's.
func operatorRoots(s Settings, reg *policy.Registry, man *policy.Manifest) []string {
	roots := slices.Clone(s.WritableRoots)
	if man != nil {
		roots = append(append(roots, man.Workspace), man.Writable...)
	}
	for _, p := range reg.Projects {
		roots = append(roots, p.Root)
	}
	return roots
}

// readLock reads the lock as a turn of this configuration would, against the operator's roots,
// and verifies every definition besides (lock.File.Verify), which a turn leaves out for speed.
func (o *operator) readLock() *providers.Lock {
	lk := providers.ReadLock(o.lockPath, o.reg.LockRequired, o.e.Settings.CheckTrusted, o.roots)
	if lk.File != nil {
		if err := lk.File.Verify(); err != nil {
			lk.File, lk.Err = nil, &lock.Error{Path: lk.Path, Msg: err.Error()}
		}
	}
	return lk
}

// listed is one provider started and listed for an operator command.
type listed struct {
	server   string
	current  []lock.Current // the tools that can be offered, with their canonical definitions
	rejected []rejectedTool // the tools that cannot be offered (names, duplicates, schemas)
	err      error
}

// list starts the providers ps in parallel, lists and judges them (a full offer, no lock),
// and stops them.
func (o *operator) list(ctx context.Context, ps []*policy.Provider) []listed {
	out := make([]listed, len(ps))
	var wg sync.WaitGroup
	for i, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A shared entry only through the broker: a running upstream, else the first project.
			r := startAndList(ctx, o.e, &prov{cfg: p, shareKey: checkKeys(o.reg, p, o.brokerStatus())[0]}, false)
			if r.client != nil {
				if si, ok := r.client.(interface{ ServerInfo() (string, string) }); ok {
					out[i].server, _ = si.ServerInfo()
				}
				defer r.client.Close()
			}
			if r.err != nil {
				out[i].err = r.err
				return
			}
			out[i].rejected = r.rejected
			out[i].current = currents(r.kept, r.tools)
		}()
	}
	wg.Wait()
	return out
}

// pick returns the providers ids names, or those keep selects when ids is empty; unknown names
// the ids that name no registered provider.
func (o *operator) pick(ids []string, keep func(*policy.Provider) bool) (ps []*policy.Provider, unknown []string) {
	for _, id := range ids {
		i := slices.IndexFunc(o.reg.Providers, func(p policy.Provider) bool { return p.ID == id })
		if i < 0 {
			unknown = append(unknown, id)
			continue
		}
		if !slices.Contains(ps, &o.reg.Providers[i]) {
			ps = append(ps, &o.reg.Providers[i])
		}
	}
	if len(ids) == 0 {
		for i := range o.reg.Providers {
			if p := &o.reg.Providers[i]; p.Enabled && keep(p) {
				ps = append(ps, p)
			}
		}
	}
	return ps, unknown
}

// Lock is `spear-shell --lock [ID...]` and, with diff, `--lock --diff [ID...]` (SPEC 15).
func Lock(ctx context.Context, s Settings, ids []string, diff bool, stdout, stderr io.Writer) int {
	o, err := newOperator(s)
	if err != nil {
		fmt.Fprintf(stderr, "spear-shell: --lock: the configuration cannot be used: %v\n", err)
		return 2
	}
	if !diff {
		release, err := lock.Hold(o.lockPath)
		if err != nil {
			fmt.Fprintf(stderr, "spear-shell: --lock: %v\n", err)
			return 2
		}
		defer release()
	}
	lk := o.readLock()
	var lf *lock.File
	switch {
	case lk.File != nil:
		lf = lk.File
	case errors.Is(lk.Err, providers.ErrLockMissing) && !diff:
		// required and missing: --lock is how it comes to exist
	case lk.Err != nil:
		fmt.Fprintf(stderr, "spear-shell: --lock: %s\n", o.red.String(lk.Err.Error()))
		return 2
	}
	if lf == nil && diff {
		fmt.Fprintf(stderr, "spear-shell: --lock --diff: there is no lock (%s): run spear-shell --lock first\n", o.lockPath)
		return 2
	}
	if lf == nil {
		// A new lock: where it would be created must be out of the agent's reach too.
		why := "no trust check was given"
		if check := o.e.Settings.CheckTrusted; check != nil {
			if err := check(o.lockPath, o.roots); err != nil {
				why = err.Error()
			} else {
				why = ""
			}
		}
		if why != "" {
			fmt.Fprintf(stderr, "spear-shell: --lock: %s: not a trusted path: %s\n", o.lockPath, why)
			return 2
		}
		lf = &lock.File{Version: lock.Version}
	}
	keep := func(p *policy.Provider) bool { return lf.Provider(p.ID) == nil } // bare --lock: the new ones
	if diff {
		keep = func(*policy.Provider) bool { return true }
	}
	ps, unknown := o.pick(ids, keep)
	if len(unknown) > 0 {
		fmt.Fprintf(stderr, "spear-shell: --lock: no registered provider %s\n", strings.Join(quoteAll(unknown), ", "))
		return 2
	}
	var out bytes.Buffer
	var code int
	if diff {
		code = o.diff(ctx, &out, lf, ps)
	} else {
		code = o.lock(ctx, &out, stderr, lf, ps)
	}
	stdout.Write(o.red.Bytes(out.Bytes()))
	return code
}

// lock locks ps into lf and writes it: every provider that could be listed, the others' earlier
// entries kept.
func (o *operator) lock(ctx context.Context, out *bytes.Buffer, stderr io.Writer, lf *lock.File, ps []*policy.Provider) int {
	if len(ps) == 0 {
		fmt.Fprintln(out, "nothing to lock: every enabled provider has a lock entry (re-approve one with spear-shell --lock ID)")
		return 0
	}
	code := 0
	now := time.Now().UTC().Format(time.RFC3339)
	for i, r := range o.list(ctx, ps) {
		p := ps[i]
		if r.err != nil {
			code = 1
			fmt.Fprintf(stderr, "spear-shell: --lock: %s: not locked (%s: %s); its earlier entry is kept\n",
				p.ID, failReason(r.err), o.red.String(shown(r.err.Error(), reasonMax)))
			continue
		}
		entry := lock.Provider{ID: p.ID, Command: slices.Clone(p.Command), Server: r.server, Time: now, Tools: []lock.Tool{}}
		var left []string
		for _, c := range r.current {
			if c.Err != nil {
				left = append(left, fmt.Sprintf("%s (its definition cannot be put in canonical form: %v)", clean(c.Name), c.Err))
				continue
			}
			entry.Tools = append(entry.Tools, lock.Tool{Name: c.Name, Definition: c.Definition, SHA256: lock.Sum([]byte(c.Definition))})
		}
		for _, rj := range r.rejected {
			left = append(left, fmt.Sprintf("%s (%s)", boundName(rj.name), rj.reason))
		}
		lf.Put(entry)
		fmt.Fprintf(out, "locked %s: %d tools (server %q)\n", p.ID, len(entry.Tools), clean(r.server))
		for _, l := range left {
			fmt.Fprintf(out, "  left out, so never offered: %s\n", l)
		}
	}
	if err := lock.Write(o.lockPath, lf); err != nil {
		fmt.Fprintf(stderr, "spear-shell: --lock: %v\n", err)
		return 2
	}
	fmt.Fprintf(out, "lock: %s\n", o.lockPath)
	return code
}

// diff prints what drifted per provider of ps: 0 nothing, 1 something, 2 could not tell.
func (o *operator) diff(ctx context.Context, out *bytes.Buffer, lf *lock.File, ps []*policy.Provider) int {
	code := 0
	worse := func(c int) { code = max(code, c) }
	for i, r := range o.list(ctx, ps) {
		p := ps[i]
		entry := lf.Provider(p.ID)
		if entry == nil {
			worse(1)
			fmt.Fprintf(out, "%s: not locked: it offers nothing until the operator locks it (spear-shell --lock %s)\n", p.ID, p.ID)
			continue
		}
		if !slices.Equal(entry.Command, p.Command) {
			worse(1)
			fmt.Fprintf(out, "%s: its command differs from the locked one: it offers nothing until it is locked again\n", p.ID)
			ud := lock.UnifiedDiff("locked command", "command now", strings.Join(entry.Command, "\n")+"\n", strings.Join(p.Command, "\n")+"\n")
			fmt.Fprint(out, indent(clean(strings.TrimSuffix(ud, "\n")), "  "))
			out.WriteByte('\n')
		}
		if r.err != nil {
			worse(2)
			fmt.Fprintf(out, "%s: cannot tell its tools: %s: %s\n", p.ID, failReason(r.err), shown(r.err.Error(), reasonMax))
			continue
		}
		d := lock.Compare(entry, r.current)
		if d.None() {
			fmt.Fprintf(out, "%s: no drift (%d tools)\n", p.ID, len(entry.Tools))
			continue
		}
		worse(1)
		fmt.Fprintf(out, "%s: %d added, %d removed, %d changed since the lock\n", p.ID, len(d.Added), len(d.Removed), len(d.Changed))
		for _, n := range d.Added {
			fmt.Fprintf(out, "  added: %s (absent from turns until locked)\n", boundName(n))
		}
		for _, n := range d.Removed {
			fmt.Fprintf(out, "  removed: %s\n", boundName(n))
		}
		for _, c := range d.Changed {
			fmt.Fprintf(out, "  changed: %s (shown as locked, calls refused definition-changed)\n", boundName(c.Name))
			now := lock.Pretty(c.Now) + "\n"
			if c.Err != nil {
				now = fmt.Sprintf("(no canonical form: %v)\n", c.Err)
			}
			ud := lock.UnifiedDiff(p.ID+"/"+c.Name+" (locked)", p.ID+"/"+c.Name+" (now)", lock.Pretty(c.Locked)+"\n", now)
			fmt.Fprint(out, indent(clean(strings.TrimSuffix(ud, "\n")), "    "))
			out.WriteByte('\n')
		}
	}
	return code
}

// checkLock prints --check's lock line; false when the lock makes turns offer nothing.
func (o *operator) checkLock(out *bytes.Buffer) (*providers.Lock, bool) {
	lk := o.readLock()
	switch {
	case lk.Err != nil:
		fmt.Fprintf(out, "lock: unusable: %s: no provider is offered to any turn\n", lk.Err)
		return lk, false
	case lk.File == nil:
		fmt.Fprintf(out, "lock: none (%s): every enabled provider offers what it lists (spear-shell --lock approves it)\n", o.lockPath)
	default:
		fmt.Fprintf(out, "lock: %s (sha256 %s): %d providers locked\n", lk.Path, lk.Hash, len(lk.File.Providers))
	}
	return lk, true
}

// checkLocked prints --check's line on p under the lock lk, given what it lists now; false when
// the lock leaves it out or something drifted.
func checkLocked(out *bytes.Buffer, lk *providers.Lock, p *policy.Provider, tools []mcpstdio.Tool) bool {
	if lk.File == nil {
		return true
	}
	entry, why := lk.Entry(p)
	if entry == nil {
		fmt.Fprintf(out, "  lock: not locked (%s): offers nothing\n", why)
		return false
	}
	kept, _ := judgeTools(p, false, nil, tools)
	d := lock.Compare(entry, currents(kept, tools))
	fmt.Fprintf(out, "  lock: locked, %d tools drifted (%d added, %d removed, %d changed)\n", d.Count(), len(d.Added), len(d.Removed), len(d.Changed))
	return d.None()
}

// currents are the canonical definitions of the tools kept of a listing (judged for a full
// offer, no lock): what a lock approves and what drift is measured on.
func currents(kept []*tool, listing []mcpstdio.Tool) []lock.Current {
	byName := make(map[string]mcpstdio.Tool, len(listing))
	for _, t := range listing {
		if _, dup := byName[t.Name]; !dup {
			byName[t.Name] = t
		}
	}
	out := make([]lock.Current, 0, len(kept))
	for _, tl := range kept {
		def, err := currentDefinition(byName[tl.name])
		out = append(out, lock.Current{Name: tl.name, Definition: def, Err: err})
	}
	return out
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// brokerStatus is the broker's word on its upstreams, asked once (nil: none runs, or no entry is
// shared).
func (o *operator) brokerStatus() *provlink.BrokerStatus {
	o.statusOnce.Do(func() {
		if hasShared(o.reg) {
			_, o.status, _ = broker.Status(o.e.Settings.Getenv)
		}
	})
	return o.status
}
