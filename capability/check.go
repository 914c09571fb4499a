package capability

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/spear-shell/spear-shell/capability/broker"
	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/capability/provlink"
	"github.com/spear-shell/spear-shell/mcpstdio"
	"github.com/spear-shell/spear-shell/policy"
)

// Check is `spear-shell --check` (SPEC 8): it validates the configuration, starts every
// enabled provider in parallel, and prints one line per provider and what it reaches.
// It exits 0 only when every entry is valid and every enabled provider is ok.
func Check(ctx context.Context, s Settings, stdout, stderr io.Writer) int {
	home, reg, err := loadRegistry(&s)
	var man *policy.Manifest
	var manErr error
	if s.ManifestPath != "" {
		// The manifest's workspace and writable list are writable roots: no program may lie there.
		man, manErr = policy.LoadManifest(s.ManifestPath, s.Cwd)
	}
	roots := operatorRoots(s, reg, man)
	e := operatorEnv(s, reg, man)
	var out bytes.Buffer
	ok := true
	fmt.Fprintf(&out, "home: %s\n", home)
	if err != nil {
		ok = false
		fmt.Fprintf(&out, "configuration: unusable: %v\n", err)
	}
	fmt.Fprintf(&out, "projects: %d\n", len(reg.Projects))
	for _, p := range reg.Projects {
		fam := ""
		if len(p.Families) > 0 {
			fam = " (families " + strings.Join(p.Families, ", ") + ")"
		}
		fmt.Fprintf(&out, "  %s: %s%s\n", p.Name, p.Root, fam)
	}
	for _, pr := range reg.Problems {
		ok = false
		fmt.Fprintf(&out, "problem: %s\n", pr.Error())
	}

	type checked struct {
		tools  []*tool
		reject []rejectedTool
		listed []mcpstdio.Tool // as listed, for the lock's drift
		err    error
	}
	results := make([]checked, len(reg.Providers))
	if manErr != nil {
		ok = false
		fmt.Fprintf(&out, "manifest: unusable: %v\n", manErr)
	}
	lo := &operator{reg: reg, e: e, lockPath: providers.LockPath(s.Getenv), roots: roots}
	lk, lockOK := lo.checkLock(&out)
	ok = ok && lockOK
	bw, bst, berr := broker.Status(s.Getenv)
	var wg sync.WaitGroup
	for i := range reg.Providers {
		p := &reg.Providers[i]
		if !p.Enabled {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A shared entry is reached through the broker under each share key it runs for.
			keys := checkKeys(reg, p, bst)
			for j := len(keys) - 1; j >= 0; j-- { // the first key's result is the one shown
				r := startAndList(ctx, e, &prov{cfg: p, shareKey: keys[j]}, false)
				if r.client != nil {
					r.client.Close()
				}
				if r.err != nil {
					results[i].err = r.err
					return
				}
				results[i].tools, results[i].reject, results[i].listed = r.kept, r.rejected, r.tools // judged for a full offer (readOnly false)
			}
		}()
	}
	wg.Wait()
	if bst != nil || hasShared(reg) {
		bw, bst, berr = broker.Status(s.Getenv) // as it is now that the shared entries were reached
	}

	for i := range reg.Providers {
		p := &reg.Providers[i]
		r := results[i]
		switch {
		case !p.Enabled:
			fmt.Fprintf(&out, "%s: disabled\n", p.ID)
		case r.err != nil && p.Share != "":
			ok = false
			fmt.Fprintf(&out, "%s: unavailable (%s)\n", p.ID, sharedReason(r.err))
		case r.err != nil && errors.Is(r.err, policy.ErrEnvFile):
			ok = false // failReason says all: the file and the line
			fmt.Fprintf(&out, "%s: unavailable (%s)\n", p.ID, shown(failReason(r.err), reasonMax))
		case r.err != nil:
			ok = false
			fmt.Fprintf(&out, "%s: unavailable (%s: %s)\n", p.ID, failReason(r.err), shown(r.err.Error(), reasonMax))
		case p.Share != "" && upstreamDown(bst, p.ID) != "":
			// Listed from the broker's last listing; its server is down.
			ok = false
			fmt.Fprintf(&out, "%s: unavailable (%s)\n", p.ID, clean(upstreamDown(bst, p.ID)))
		default:
			fmt.Fprintf(&out, "%s: ok (%d tools)\n", p.ID, len(r.tools))
			have := map[string]bool{}
			for _, tl := range r.tools {
				have[tl.name] = true
				fmt.Fprintf(&out, "  %-5s %s\n", tl.class, clean(tl.name))
			}
			for _, rj := range r.reject {
				have[rj.name] = true
				fmt.Fprintf(&out, "  left out: %s (%s)\n", boundName(rj.name), rj.reason)
			}
			for _, name := range p.Read {
				if !have[name] {
					fmt.Fprintf(&out, "  read entry %q names no tool of this provider\n", name)
				}
			}
			ok = checkLocked(&out, lk, p, r.listed) && ok
		}
		projects, unknown := reg.Reach(p)
		if p.Share != "" {
			checkShared(&out, p, projects, bst)
		}
		for _, u := range unknown {
			fmt.Fprintf(&out, "  scope names unknown %s %q\n", p.Scope.Kind, u)
		}
		reach := "no project"
		if len(projects) > 0 {
			reach = "projects " + strings.Join(projects, ", ")
		}
		fmt.Fprintf(&out, "  reaches %s; tasks %s; write %s\n", reach, strings.Join(p.Tasks, ", "), p.Write)
	}
	for _, rj := range reg.Rejected {
		ok = false
		id := rj.ID
		if id == "" {
			id = "(entry without a valid id)"
		}
		fmt.Fprintf(&out, "%s: rejected (%s)\n", id, rj.Reason)
	}
	checkBroker(&out, reg, bw, bst, berr)
	iso := s.Isolation
	if iso == "" {
		iso = "unknown"
	}
	fmt.Fprintf(&out, "isolation: %s\n", iso)
	if !checkPrompts(&out, e, reg.PromptDirs) {
		ok = false
	}
	out.WriteString("mcp face: spear-mcp serves this configuration to terminals that speak MCP; its guarantees hold only " +
		"where the agent's commands run inside spear-shell's boundary, which keeps SPEAR_HOME, the state parent and the " +
		"keeper's and the broker's sockets out of the agent's reach: register it only in a terminal whose shell is spear-shell with " +
		"isolation on (docs/mcp.md)\n")
	stdout.Write(e.Redactor.Bytes(out.Bytes()))
	if !ok {
		fmt.Fprintln(stderr, "spear-shell: --check found problems")
		return 1
	}
	return 0
}

// checkPrompts lists the operator's prompts (SPEC 2.3) and the files left out; false when a
// directory or a file is left out.
func checkPrompts(out *bytes.Buffer, e *turnEnv, dirs []string) bool {
	if len(dirs) == 0 {
		return true
	}
	ps, skipped := e.trustedPrompts(dirs)
	fmt.Fprintf(out, "prompts: %d (for the MCP face)\n", len(ps))
	for _, p := range ps {
		fmt.Fprintf(out, "  %s: %s\n", p.Name, firstLine(clean(p.Description), indexLineMax))
	}
	for _, sk := range skipped {
		fmt.Fprintf(out, "  left out: %s (%s)\n", sk.Path, shown(sk.Reason, reasonMax))
	}
	return len(skipped) == 0
}

// checkKeys are the share keys --check reaches a shared entry under (SPEC 8): those of its
// running upstreams, else the first project (in registry order) it reaches for share project,
// "" for share all. An entry that is not shared has one, unused.
func checkKeys(reg *policy.Registry, p *policy.Provider, st *provlink.BrokerStatus) []string {
	if p.Share == "" {
		return []string{""}
	}
	var keys []string
	if st != nil {
		for _, u := range st.Upstreams {
			if u.Provider == p.ID && u.State != "retired" && !slices.Contains(keys, u.ShareKey) {
				keys = append(keys, u.ShareKey)
			}
		}
	}
	if len(keys) > 0 {
		return keys
	}
	if projects, _ := reg.Reach(p); p.Share == policy.ShareProject && len(projects) > 0 {
		return projects[:1]
	}
	return []string{""}
}

// upstreamDown says why an upstream of entry id is down (restarting, held down), "" when none is.
func upstreamDown(st *provlink.BrokerStatus, id string) string {
	if st == nil {
		return ""
	}
	for _, u := range st.Upstreams {
		if u.Provider == id && (u.State == "held" || u.State == "restarting") {
			return u.Why
		}
	}
	return ""
}

// checkShared says how a shared entry is run: by the broker, per upstream its state (never its
// environment), and a share all entry that reaches more than one project.
func checkShared(out *bytes.Buffer, p *policy.Provider, projects []string, st *provlink.BrokerStatus) {
	fmt.Fprintf(out, "  shared (%s) through the broker; restart_delay %gs\n", p.Share, p.RestartDelay.Seconds())
	if p.Share == policy.ShareAll && len(projects) > 1 {
		fmt.Fprintf(out, "  warning: %s is shared with all and reaches more than one project (%s): they share one server and its state\n",
			p.ID, strings.Join(projects, ", "))
	}
	if st == nil {
		return
	}
	for _, u := range st.Upstreams {
		if u.Provider != p.ID {
			continue
		}
		key := u.ShareKey
		if key == "" {
			key = "(all)"
		}
		switch u.State {
		case "up":
			fmt.Fprintf(out, "  upstream %s: up (pid %d, started %d times)\n", key, u.Pid, u.Starts)
		case "held":
			fmt.Fprintf(out, "  upstream %s: %s\n", key, clean(u.Why))
		default:
			fmt.Fprintf(out, "  upstream %s: %s (started %d times)\n", key, clean(u.State), u.Starts)
		}
		if u.State != "up" && u.Failure != "" {
			fmt.Fprintf(out, "    last stop: %s\n", shown(u.Failure, reasonMax))
		}
	}
}

func hasShared(reg *policy.Registry) bool {
	return slices.ContainsFunc(reg.Providers, func(p policy.Provider) bool { return p.Share != "" && p.Enabled })
}

// checkBroker says which broker socket this process reaches and whether a broker runs there.
func checkBroker(out *bytes.Buffer, reg *policy.Registry, w broker.Where, st *provlink.BrokerStatus, err error) {
	shared := 0
	for _, p := range reg.Providers {
		if p.Share != "" {
			shared++
		}
	}
	switch {
	case err != nil && shared == 0:
		// No entry needs a broker: a state parent that cannot be used is the shell's to say.
	case err != nil && w.Socket == "":
		fmt.Fprintf(out, "broker: unusable: %v\n", err)
	case err != nil:
		fmt.Fprintf(out, "broker: %s: %v\n", w.Socket, err)
	case st == nil:
		fmt.Fprintf(out, "broker: %s: not running (%d shared entries)\n", w.Socket, shared)
	default:
		mode := "on demand"
		if st.Foreground {
			mode = "foreground"
		}
		fmt.Fprintf(out, "broker: %s: running (pid %d, %s; %d shared entries)\n", w.Socket, st.Pid, mode, shared)
	}
}
