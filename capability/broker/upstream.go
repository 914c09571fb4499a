package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spear-shell/spear-shell/audit"
	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/capability/provlink"
	"github.com/spear-shell/spear-shell/mcpstdio"
	"github.com/spear-shell/spear-shell/policy"
	"github.com/spear-shell/spear-shell/policy/paths"
)

// Upstream states (provlink.Upstream.State).
const (
	stateNew        = "new"
	stateStarting   = "starting"
	stateUp         = "up"
	stateRestarting = "restarting"
	stateHeld       = "held"
	stateRetired    = "retired" // its launch keys changed: stopped when its last call ends
)

// timeoutsInARow is how many call timeouts in a row stop an upstream (SPEC 14).
const timeoutsInARow = 3

// upstream is one server process slot: entry id, share key key, launch keys launch. It is
// started, restarted after the entry's restart_delay, held down after flapping, and retired
// when the configuration no longer holds it.
type upstream struct {
	b               *server
	id, key, launch string

	mu       sync.Mutex
	state    string
	why      string // restarting or held: what a caller is told
	failure  string // why it last stopped, for --check (the broker's records have it whole)
	client   *mcpstdio.Client
	starts   int
	flaps    flaps
	timeouts int // in a row
	calls    int // in flight
	timer    *time.Timer
	started  chan struct{} // closed when the start in progress ends
	// secrets are the values of 6 bytes or more that the running process's environment got from
	// env and env_file: redacted from its results and listings before they reach a caller (SPEC
	// 14: they reach the server's environment and nothing else). nil when there are none.
	secrets *audit.Redactor

	listMu  sync.Mutex        // one listing at a time; held while a guarded call checks its listing
	listing *provlink.Listing // the last listing; kept while the upstream is down
}

func (u *upstream) log(ev audit.Event) {
	ev.Provider, ev.ShareKey = u.id, u.key
	u.b.log(ev)
}

// ensure starts the upstream when it never was, or waits for a start in progress, and reports
// whether a caller may use it: up, or down with a listing kept from before (SPEC 14: a turn
// pins from it; its calls are refused while it is down). err is the start's failure, or why it
// is down when it never listed.
func (u *upstream) ensure(ctx context.Context) error {
	u.mu.Lock()
	if u.state == stateNew {
		u.state, u.started = stateStarting, make(chan struct{})
		u.mu.Unlock()
		u.start()
		u.mu.Lock()
	}
	for u.state == stateStarting {
		ch := u.started
		u.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		u.mu.Lock()
	}
	if u.state == stateUp {
		u.mu.Unlock()
		return nil
	}
	down := u.downError()
	u.mu.Unlock()
	u.listMu.Lock() // after u.mu, never under it: relist takes them the other way round
	listed := u.listing != nil
	u.listMu.Unlock()
	if listed {
		return nil
	}
	return down
}

// downError is what a caller is told while the upstream is down; u.mu held.
func (u *upstream) downError() error {
	why := u.why
	if why == "" {
		why = u.state
	}
	return &downErr{msg: why}
}

type downErr struct{ msg string }

func (e *downErr) Error() string { return e.msg }

// start starts the process, initialises and lists it; u.state is stateStarting, and the start
// ends it (up, or stopped: restarting, held or retired).
func (u *upstream) start() {
	cfg, why := u.b.cfg.lookup(u.id, u.key, u.launch)
	if cfg == nil {
		u.retireStart("its entry changed: " + why)
		return
	}
	stage, err := u.trust(cfg)
	var c *mcpstdio.Client
	if err == nil {
		c, err = u.launchProcess(cfg)
		stage = mcpstdio.StageOf(err)
		switch {
		case errors.Is(err, policy.ErrEnvFile):
			stage = StageEnvFile
		case stage == "":
			stage = mcpstdio.StageStart
		}
	}
	var tools []mcpstdio.Tool
	if err == nil {
		u.b.procs.add(c.Pid())
		ctx, cancel := context.WithTimeout(context.Background(), providers.Timeout(cfg))
		tools, err = c.ListTools(ctx)
		cancel()
		stage = mcpstdio.StageList
	}
	if err != nil {
		tail := mcpstdio.StderrOf(err)
		if c != nil {
			c.Close()
			u.b.procs.remove(c.Pid())
			tail = c.StderrTail()
		}
		u.stopped(nil, stage, err, tail)
		return
	}
	u.setListing(tools)
	u.mu.Lock()
	if u.state != stateStarting {
		// Retired, or the broker ends, while it started: it is not kept.
		if u.started != nil {
			close(u.started)
			u.started = nil
		}
		u.mu.Unlock()
		u.stop(c)
		return
	}
	u.client, u.state, u.why, u.timeouts = c, stateUp, "", 0
	u.starts++
	starts := u.starts
	close(u.started)
	u.mu.Unlock()
	name := audit.EventProviderStarted
	if starts > 1 {
		name = audit.EventProviderRestarted
	}
	u.log(audit.Event{Name: name, Fields: map[string]any{"pid": c.Pid(), "starts": starts}})
	u.b.wg.Go(func() { u.watch(c) })
}

// retireStart ends a start that found its entry changed meanwhile.
func (u *upstream) retireStart(why string) {
	u.mu.Lock()
	u.state, u.why = stateRetired, why
	if u.started != nil {
		close(u.started)
		u.started = nil
	}
	u.mu.Unlock()
}

// trust checks, at each start, that the entry's program, its #! interpreters and its env_file
// lie outside every registered project root (and are reached through no symlink in one).
func (u *upstream) trust(cfg *policy.Provider) (string, error) {
	reg, _, _ := u.b.cfg.load()
	roots := projectRoots(reg)
	progs, err := cfg.Programs()
	if err != nil {
		return StageTrust, fmt.Errorf("%w: %w", providers.ErrUntrusted, err)
	}
	if f := cfg.EnvFile; f != "" {
		progs = append(progs, f)
	}
	for _, p := range progs {
		if err := paths.CheckTrusted(p, roots); err != nil {
			return StageTrust, fmt.Errorf("%w: %s: %w (a shared entry's programs and env_file must lie outside every registered project root)", providers.ErrUntrusted, p, err)
		}
	}
	return "", nil
}

// projectRoots are every registered project's root, resolved: what a shared entry's programs
// and env_file must lie outside, since any turn's agent may write one.
func projectRoots(reg *policy.Registry) []string {
	var roots []string
	for _, p := range reg.Projects {
		roots = append(roots, p.Root)
	}
	return paths.WritableRoots(roots...)
}

// launchProcess starts and initialises the server: the entry's environment over PATH and the
// user's HOME (from the password database), working directory SPEAR_HOME, forked with a
// parent-death signal.
func (u *upstream) launchProcess(cfg *policy.Provider) (*mcpstdio.Client, error) {
	home := u.b.home
	l, err := cfg.Launch(u.b.where.Home, func(k string) string { // env_file read here, at each start
		if k == "HOME" {
			return home
		}
		return ""
	})
	if err != nil {
		return nil, err
	}
	// What this start read (an env_file edited since the configuration was loaded included) is
	// redacted from everything the broker records or passes on.
	var secrets []string
	for _, kv := range l.Env {
		if k, v, _ := strings.Cut(kv, "="); k != "PATH" && k != "HOME" && len(v) >= policy.MinSecretLen {
			secrets = append(secrets, v)
		}
	}
	if _, red, _ := u.b.cfg.load(); red != nil {
		red.Add(secrets...)
	}
	u.mu.Lock()
	u.secrets = nil
	if len(secrets) > 0 {
		u.secrets = audit.NewRedactor(secrets)
	}
	u.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), providers.Timeout(cfg))
	defer cancel()
	return mcpstdio.Start(ctx, mcpstdio.Command{Path: l.Path, Args: l.Args, Dir: l.Dir, Env: mcpstdio.NewEnv(l.Env)},
		mcpstdio.Options{ClientName: "spear-shell", ClientVersion: providers.Version, MaxMessage: cfg.MaxMessage,
			CallTimeoutKeeps: true, Spawn: u.b.spawner.spawn})
}

// watch learns that the upstream exited (or closed its stdout) between calls.
func (u *upstream) watch(c *mcpstdio.Client) {
	select {
	case <-c.Ended():
	case <-c.LeaderExited():
	case <-u.b.quit:
		return
	}
	u.fault(c, StageExit, errors.New("it exited or closed its stdout"))
}

// fault stops client c of the upstream after a failure, unless it was already let go.
func (u *upstream) fault(c *mcpstdio.Client, stage string, err error) {
	u.mu.Lock()
	if u.client != c {
		u.mu.Unlock()
		return
	}
	u.client = nil
	if u.state == stateUp {
		u.state, u.why = stateRestarting, "restarting" // while it stops; stopped decides what follows
	}
	u.mu.Unlock()
	c.Close()
	u.b.procs.remove(c.Pid())
	u.stopped(c, stage, err, c.StderrTail())
}

// stopped is the upstream stopping (c nil: a start that failed): recorded, then restarted after
// the entry's restart_delay as it is now, or held down when it flaps.
func (u *upstream) stopped(c *mcpstdio.Client, stage string, err error, tail string) {
	set := u.b.settings
	now := time.Now()
	u.mu.Lock()
	held := u.flaps.add(now, set.FlappingExits, set.FlappingWithin)
	retired := u.state == stateRetired
	switch {
	case retired:
	case held:
		u.state = stateHeld
		u.why = fmt.Sprintf("held down after %d exits in %s seconds", len(u.flaps.at), strconv.FormatFloat(set.FlappingWithin.Seconds(), 'f', -1, 64))
	default:
		u.state, u.why = stateRestarting, "restarting"
		delay := policy.DefaultRestartDelay
		if e := u.b.cfg.entry(u.id); e != nil && e.Share != "" {
			delay = e.RestartDelay
		}
		u.timer = time.AfterFunc(delay, u.restart)
	}
	if c == nil && u.started != nil {
		close(u.started) // the start that failed has ended (retired meanwhile or not)
		u.started = nil
	}
	why := u.why
	u.failure = stage + ": " + err.Error()
	u.mu.Unlock()
	u.log(audit.Event{Name: audit.EventProviderFailed, Stage: stage, Reason: err.Error(), StderrTail: tail})
	if held && !retired {
		u.log(audit.Event{Name: audit.EventProviderFlapping, Reason: why, Fields: map[string]any{
			"exits": set.FlappingExits, "within_s": set.FlappingWithin.Seconds()}})
	}
}

// restart starts the upstream again after its delay, unless the broker ends or it was retired.
func (u *upstream) restart() {
	u.mu.Lock()
	if u.state != stateRestarting || u.b.ending() {
		u.mu.Unlock()
		return
	}
	u.state, u.started = stateStarting, make(chan struct{})
	u.b.wg.Go(u.start) // under u.mu: shutdown, which follows quit, cannot come between
	u.mu.Unlock()
}

// release clears a hold for flapping and starts the upstream now; false when it was not held.
func (u *upstream) release() bool {
	u.mu.Lock()
	if u.state != stateHeld {
		u.mu.Unlock()
		return false
	}
	u.flaps.reset()
	u.state, u.started = stateStarting, make(chan struct{})
	u.b.wg.Go(u.start)
	u.mu.Unlock()
	return true
}

// retire lets the upstream go: new calls go elsewhere, and its process stops once its last call
// ends (now, when none is in flight).
func (u *upstream) retire() {
	u.mu.Lock()
	u.state, u.why = stateRetired, "retired: its entry changed"
	if u.timer != nil {
		u.timer.Stop()
	}
	c := u.client
	if u.calls > 0 {
		c = nil
	} else {
		u.client = nil
	}
	u.mu.Unlock()
	if c != nil {
		u.b.wg.Go(func() { u.stop(c) })
	}
}

// stop stops c as SPEC 6 says; a group that cannot be killed is recorded.
func (u *upstream) stop(c *mcpstdio.Client) {
	if err := c.Close(); err != nil {
		u.log(audit.Event{Name: audit.EventProviderFailed, Stage: StageStop, Reason: err.Error(), StderrTail: c.StderrTail()})
	}
	u.b.procs.remove(c.Pid())
}

// shutdown stops the upstream at the broker's end; calls in flight fail (unavailable).
func (u *upstream) shutdown() {
	u.mu.Lock()
	if u.timer != nil {
		u.timer.Stop()
	}
	c := u.client
	u.client = nil
	u.state, u.why = stateRetired, "stopping: the broker ends"
	u.mu.Unlock()
	if c != nil {
		u.stop(c)
	}
}

// status is what --check is told.
func (u *upstream) status() provlink.Upstream {
	u.mu.Lock()
	defer u.mu.Unlock()
	st := provlink.Upstream{Provider: u.id, ShareKey: u.key, State: u.state, Starts: u.starts, Why: u.why, Failure: u.failure}
	if u.client != nil {
		st.Pid = u.client.Pid()
	}
	return st
}

// setListing keeps a listing as the last one.
func (u *upstream) setListing(tools []mcpstdio.Tool) {
	u.listMu.Lock()
	u.keepListing(tools)
	u.listMu.Unlock()
}

// keepListing keeps tools as the last listing, each name placed; u.listMu held.
func (u *upstream) keepListing(tools []mcpstdio.Tool) {
	wt := provlink.ToWireTools(tools)
	if red := u.redactor(); red != nil {
		for i := range wt {
			wt[i] = redactTool(red, wt[i])
		}
	}
	u.listing = provlink.NewListing(tools, wt)
}

// redactor is the running process's secrets' redactor, nil when it has none.
func (u *upstream) redactor() *audit.Redactor {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.secrets
}

// redactTool removes secrets from what a listing says of a tool; a schema that would no longer
// be JSON is left out (the tool is then judged as one without a usable schema).
func redactTool(red *audit.Redactor, t provlink.WireTool) provlink.WireTool {
	t.Name, t.Title, t.Description = red.String(t.Name), red.String(t.Title), red.String(t.Description)
	for _, raw := range []*json.RawMessage{&t.Input, &t.Output, &t.Annotations} {
		if len(*raw) > 0 {
			if r := red.Bytes(*raw); json.Valid(r) {
				*raw = r
			} else {
				*raw = json.RawMessage("null")
			}
		}
	}
	return t
}

// relist lists the upstream again when it announced a change or its listing is
// providers.RelistAfter old; u.listMu held. Down, it keeps the last listing.
func (u *upstream) relist() error {
	u.mu.Lock()
	c := u.client
	u.mu.Unlock()
	if c == nil || u.listing.Fresh(c.ToolsChanged) {
		return nil
	}
	timeout := policy.DefaultTimeout
	if e := u.b.cfg.entry(u.id); e != nil {
		timeout = providers.Timeout(e)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	tools, err := c.ListTools(ctx)
	cancel()
	if err != nil {
		u.listMu.Unlock()
		u.fault(c, mcpstdio.StageList, err)
		u.listMu.Lock()
		return err
	}
	u.keepListing(tools)
	return nil
}

// gone reports whether a retired upstream has nothing left to stop.
func (u *upstream) gone() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.state == stateRetired && u.client == nil && u.calls == 0
}

// serverName is the name the running server gave in initialize's serverInfo ("" when down).
func (u *upstream) serverName() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.client == nil {
		return ""
	}
	name, _ := u.client.ServerInfo()
	return name
}
