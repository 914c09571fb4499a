package capability

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spear-shell/spear-shell/audit"
	"github.com/spear-shell/spear-shell/capability/broker"
	"github.com/spear-shell/spear-shell/capability/keeper"
	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/capability/provlink"
	"github.com/spear-shell/spear-shell/mcpstdio"
	"github.com/spear-shell/spear-shell/policy"
	"github.com/spear-shell/spear-shell/policy/lock"
)

// Whole-or-index limits (SPEC 2.6).
const (
	wholeMaxCapabilities = 8
	wholeMaxBytes        = 6000
	indexLineMax         = 120 // bytes of a description's first line in the index
)

// prov is one offered provider as this process knows it.
type prov struct {
	cfg       *policy.Provider
	readOnly  bool           // general turn: WRITE tools are hidden
	locked    *lock.Provider // the operator's lock entry; nil when no lock governs (locked.go)
	client    providers.Client
	tools     []*tool // valid, visible tools in listing order
	byName    map[string]*tool
	down      string // non-empty: unavailable for the rest of the turn (what the turn is told)
	listedSeq int    // the answer in which the tools were last listed

	unusable []rejectedTool // listed but left out, that this offer may tell of (unusable.go)
	listedAt time.Time      // when the tools were last listed (relist.go)

	// partial: tools, byName and unusable hold only the names in fetched, as the keeper's last
	// listing holds them (providers.Definer), not the whole listing.
	partial bool
	fetched map[string]bool
	// listing: the hash of the keeper's listing that fetched came from, when the client sends
	// calls guarded by it (providers.GuardedCaller); "" otherwise.
	listing string

	// A shared entry (SPEC 14) is never down for the rest of the turn: unavail says why its
	// upstream could not be had for this answer (restarting, held down, no broker), and shareKey
	// is the share key the broker is asked for (the turn's project for share project).
	unavail  string
	shareKey string
}

// tool is one capability: a provider's tool whose definition passed the checks.
type tool struct {
	id     string // "<provider>/<tool>"
	prov   *prov
	name   string
	desc   string
	input  json.RawMessage // compact
	output json.RawMessage // compact; nil when absent
	class  string          // from the configuration only
	hash   string          // pin of the definition (under a lock, the locked definition's)
	drift  bool            // the provider lists another definition than the locked one (locked.go)

	declared map[string]bool // the input schema's top-level property names, once known
}

// validToolName is [A-Za-z0-9_.-]{1,128} (SPEC 2.6).
func validToolName(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// isJSONObject: the value comes from a message that was decoded whole, so it is valid JSON
// and its first byte says what it is.
func isJSONObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}

// compactJSON removes insignificant blanks; most servers send compact JSON, which is kept as is.
func compactJSON(raw json.RawMessage) json.RawMessage {
	if isCompact(raw) {
		return raw
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}

// isCompact reports whether raw has no blank outside its strings, so that json.Compact would
// return it unchanged (blanks inside strings, as in most descriptions, are content).
func isCompact(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case ' ', '\t', '\r', '\n':
			return false
		case '"':
			for i++; i < len(raw) && raw[i] != '"'; i++ {
				if raw[i] == '\\' {
					i++
				}
			}
		}
	}
	return true
}

// definitionHash pins name, description, input and output schema: SHA-256 over the four,
// each preceded by its length so that no two definitions share an encoding. buf is scratch
// space the caller may pass again.
func definitionHash(buf *[]byte, name, desc string, in, out json.RawMessage) string {
	b := (*buf)[:0]
	b = binary.BigEndian.AppendUint64(b, uint64(len(name)))
	b = append(b, name...)
	b = binary.BigEndian.AppendUint64(b, uint64(len(desc)))
	b = append(b, desc...)
	b = binary.BigEndian.AppendUint64(b, uint64(len(in)))
	b = append(b, in...)
	b = binary.BigEndian.AppendUint64(b, uint64(len(out)))
	b = append(b, out...)
	*buf = b
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

type rejectedTool struct{ name, reason string }

// judgeTools keeps the tools that may be offered; rejected ones are returned with why.
// WRITE tools of a read-only (general) offer are hidden, not rejected.
func judgeTools(p *policy.Provider, readOnly bool, locked *lock.Provider, list []mcpstdio.Tool) (kept []*tool, rejected []rejectedTool) {
	count := make(map[string]int, len(list))
	for _, t := range list {
		count[t.Name]++
	}
	return judgeListed(p, readOnly, locked, list, count)
}

// judgeDefinitions judges the tools of a listing that an answer asked for by name
// (providers.Definer), exactly as judgeTools judges them in the whole listing: a name the
// listing carries more than once is rejected as a duplicate on the listing's count.
func judgeDefinitions(p *policy.Provider, readOnly bool, locked *lock.Provider, defs []providers.Definition) (kept []*tool, rejected []rejectedTool) {
	list := make([]mcpstdio.Tool, 0, len(defs))
	count := make(map[string]int, len(defs))
	for _, d := range defs {
		if d.Tool == nil || count[d.Tool.Name] > 0 {
			continue // not listed, or asked twice
		}
		list = append(list, *d.Tool)
		count[d.Tool.Name] = d.Count
	}
	return judgeListed(p, readOnly, locked, list, count)
}

// judgeListed judges list, where count says how many times the provider's listing holds each
// name; locked, when not nil, is the lock's entry (locked.go).
func judgeListed(p *policy.Provider, readOnly bool, locked *lock.Provider, list []mcpstdio.Tool, count map[string]int) (kept []*tool, rejected []rejectedTool) {
	all := make([]tool, 0, len(list)) // one allocation for the provider's tools
	var scratch []byte
	for _, t := range list {
		var lt *lock.Tool
		if locked != nil {
			if lt = locked.Tool(t.Name); lt == nil {
				rejected = append(rejected, rejectedTool{t.Name, lock.NotLocked})
				continue
			}
		}
		switch {
		case !validToolName(t.Name):
			rejected = append(rejected, rejectedTool{t.Name, "the name is not [A-Za-z0-9_.-]{1,128}"})
			continue
		case count[t.Name] > 1:
			rejected = append(rejected, rejectedTool{t.Name, "the name is listed more than once"})
			continue
		case lt != nil && !matchesLock(lt, t):
			desc, in, out, ok := lockedDefinition(lt)
			if !ok {
				rejected = append(rejected, rejectedTool{t.Name, "its locked definition cannot be used"})
			} else if class := p.Class(t.Name); !readOnly || class == "READ" {
				all = append(all, tool{id: p.ID + "/" + t.Name, name: t.Name, desc: desc,
					input: in, output: out, class: class, hash: lt.SHA256, drift: true})
			}
			continue
		case !isJSONObject(t.InputSchema):
			rejected = append(rejected, rejectedTool{t.Name, "the inputSchema is not a JSON object"})
			continue
		}
		out := t.OutputSchema
		if o := bytes.TrimSpace(out); len(o) == 0 || string(o) == "null" {
			out = nil
		} else if !isJSONObject(out) {
			rejected = append(rejected, rejectedTool{t.Name, "the outputSchema is not a JSON object"})
			continue
		}
		class := p.Class(t.Name)
		if readOnly && class != "READ" {
			continue
		}
		in := compactJSON(t.InputSchema)
		if out != nil {
			out = compactJSON(out)
		}
		hash := ""
		if lt != nil {
			hash = lt.SHA256
		} else {
			hash = definitionHash(&scratch, t.Name, t.Description, in, out)
		}
		all = append(all, tool{
			id: p.ID + "/" + t.Name, name: t.Name, desc: t.Description,
			input: in, output: out, class: class, hash: hash,
		})
	}
	if len(all) > 0 {
		kept = make([]*tool, len(all))
		for i := range all {
			kept[i] = &all[i]
		}
	}
	return kept, rejected
}

// showMode decides whole or index for a family (SPEC 2.6).
func showMode(tools []*tool) string {
	if len(tools) > wholeMaxCapabilities {
		return "index"
	}
	n := 0
	for _, t := range tools {
		n += len(t.desc) + len(t.input)
	}
	if n > wholeMaxBytes {
		return "index"
	}
	return "whole"
}

// family makes sure the family is selected in this turn and that the providers in need are
// up and freshly listed. The first need of the turn starts every offered provider; a later
// process (the family already selected) starts only what it needs. only, when not nil, names
// the tools the answer needs of each provider in need (describe, invoke, preflight): a provider
// kept by the turn's keeper is then asked for just those (fetch), not its whole listing. It
// returns false when ctx ended (interrupted).
func (t *Turn) family(ctx context.Context, a *answer, need []string, only map[string][]string) bool {
	e := t.env
	if !e.familyKnown {
		if content, ok, err := e.State.Read(providers.FamilyFact); err == nil && ok {
			e.mode = modeOf(content)
			e.familyKnown = true
		} else {
			if !t.ensure(ctx, a, e.order, nil) {
				return false
			}
			t.selectFamily()
			return true
		}
	}
	return t.ensure(ctx, a, need, only)
}

func modeOf(b []byte) string {
	if strings.TrimSpace(string(b)) == "whole" {
		return "whole"
	}
	return "index" // anything else is the stricter reading
}

// selectFamily pins the family's tools and records the selection, once per turn.
func (t *Turn) selectFamily() {
	e := t.env
	n := 0
	for _, id := range e.order {
		n += len(e.provs[id].tools)
	}
	all := make([]*tool, 0, n)
	for _, id := range e.order {
		all = append(all, e.provs[id].tools...)
	}
	// A provider down at this point is out of the turn, so nothing of it needs a pin later.
	pins := make([]providers.Pin, len(all))
	for i, tl := range all {
		pins[i] = providers.Pin{ID: tl.id, Hash: tl.hash}
	}
	_, _ = e.PinFamily(pins)
	mode := showMode(all)
	created, err := e.State.Create(providers.FamilyFact, []byte(mode))
	if err == nil && !created {
		if content, ok, err := e.State.Read(providers.FamilyFact); err == nil && ok {
			mode = modeOf(content) // another process of the turn selected it first
		}
	}
	e.mode, e.familyKnown = mode, true
	if created {
		ids := make([]string, 0, len(all))
		bytesTotal := 0
		for _, tl := range all {
			ids = append(ids, tl.id+" "+tl.class)
			bytesTotal += len(tl.desc) + len(tl.input)
		}
		var down []string
		for _, id := range e.order {
			if p := e.provs[id]; p.down != "" {
				down = append(down, id)
			}
		}
		_ = e.Log(audit.Event{Name: audit.EventFamilySelected, Mode: mode, Fields: map[string]any{
			"project": e.Offer.Project, "providers": providers.DecisionsField(e.Offer.Decisions),
			"family": ids, "count": len(all), "bytes": bytesTotal, "unavailable": down,
			"lock": e.Lock.LockField(),
		}})
	}
}

type startResult struct {
	client providers.Client
	tools  []mcpstdio.Tool
	stage  string
	err    error
	took   time.Duration

	// The tools judged (judgeTools) in the provider's own goroutine, so that providers are
	// judged in parallel and while others still start.
	kept     []*tool
	rejected []rejectedTool
	byName   map[string]*tool

	fetched map[string]bool // not nil: only these names were asked (and judged) of the listing
	listing string          // with fetched: the listing's hash, when calls can be guarded by it
	began   time.Time
}

// leftTheTurn reports whether p is out of the turn: said so in this process, or recorded in
// the turn's state since another process (or another turn of the MCP face's pool) saw it fail,
// in which case a copy of it this process still runs is stopped.
func (e *turnEnv) leftTheTurn(p *prov) bool {
	if p.down != "" {
		return true
	}
	reason, ok, err := e.State.Read(providers.DownFact(p.cfg.ID))
	if err != nil || !ok {
		return false
	}
	if p.client != nil {
		e.closeLater(p.client)
		p.client = nil
	}
	p.down = shown(string(reason), reasonMax)
	if p.down == "" {
		p.down = "it failed earlier in this turn"
	}
	return true
}

// ensure starts (or re-lists) the providers in ids that this answer needs, in parallel, each
// bounded by its timeout; only is family's. It returns false when ctx ended.
func (t *Turn) ensure(ctx context.Context, a *answer, ids []string, only map[string][]string) bool {
	e := t.env
	var todo []*prov
	for _, id := range ids {
		p := e.provs[id]
		if p == nil || e.leftTheTurn(p) {
			continue
		}
		// A running provider is listed again only when its listing is stale (relist.go): a
		// session's answers mostly cost one round trip each, and a changed definition still
		// meets its pin. An invoke of a tool whose definition came from a listing the call can
		// be guarded by (a.guarded, p.listing) needs none: the call is sent only if that listing
		// is still the provider's (Turn.call).
		if p.client != nil && (!t.stale(p) || a.guarded && p.listing != "") && p.holds(only[id], only != nil) {
			continue
		}
		todo = append(todo, p)
	}
	if len(todo) == 0 {
		return ctx.Err() == nil
	}
	results := make([]startResult, len(todo))
	listOnly := t.listOnly
	var wg sync.WaitGroup
	for i, p := range todo {
		early := e.takeEarly(p)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if early != nil {
				results[i] = <-early
				return
			}
			var names []string
			if only != nil {
				names = only[p.cfg.ID]
			}
			results[i] = startAndFetch(ctx, e, p, listOnly, names)
		}()
	}
	wg.Wait()
	interrupted := ctx.Err() != nil
	for i, p := range todo {
		r := results[i]
		if r.err != nil {
			e.closeLater(r.client)
			p.client = nil
			if interrupted {
				continue // Ctrl-C is not the provider's fault
			}
			if p.cfg.Share != "" {
				t.sharedDown(a, p, r.stage, r.err)
				continue
			}
			t.markDown(a, p, r.stage, r.err, r.client)
			continue
		}
		p.client, p.unavail = r.client, ""
		p.tools, p.byName = r.kept, r.byName
		p.unusable = visibleRejected(p, r.rejected)
		p.listedSeq, p.listedAt = t.seq, t.now()
		p.partial, p.fetched, p.listing = r.fetched != nil, r.fetched, r.listing
		for _, rj := range r.rejected {
			sum := sha256.Sum256([]byte(rj.name + "\x00" + rj.reason))
			if e.State.Once("tool_rejected@" + p.cfg.ID + "@" + hex.EncodeToString(sum[:8])) {
				_ = e.Log(audit.Event{Name: audit.EventToolRejected, Provider: p.cfg.ID,
					Capability: p.cfg.ID + "/" + boundName(rj.name), Reason: rj.reason})
			}
		}
	}
	return !interrupted
}

func boundName(s string) string { return shown(s, nameMax) }

// holds reports whether what this process knows of p's listing covers an answer's need: the
// whole listing, or (some true) the names in names.
func (p *prov) holds(names []string, some bool) bool {
	if !p.partial {
		return true
	}
	if !some {
		return false
	}
	for _, n := range names {
		if !p.fetched[n] {
			return false
		}
	}
	return true
}

// startAndFetch is startAndList for an answer that needs only the tools in names (when not
// nil): a provider the turn's keeper runs is asked for just those, as its last listing holds
// them, and they alone are judged. A provider this process runs itself, too many names, or a
// keeper gone under the request: the whole listing, as startAndList.
func startAndFetch(ctx context.Context, e *turnEnv, p *prov, listOnly bool, names []string) startResult {
	if names == nil || listOnly || len(names) > provlink.MaxNames {
		return startAndList(ctx, e, p, listOnly)
	}
	r := startOnce(ctx, e, p, false)
	if r.err != nil {
		return r
	}
	d, ok := r.client.(providers.Definer)
	if !ok {
		return listStarted(ctx, e, p, r, false)
	}
	lctx, cancel := context.WithTimeout(ctx, providers.Timeout(p.cfg))
	defs, listing, err := d.Definitions(lctx, names)
	cancel()
	if errors.Is(err, keeper.ErrLost) {
		return listStarted(ctx, e, p, r, false) // listTools starts the provider here
	}
	r.took = time.Since(r.began)
	if err != nil {
		r.stage, r.err = "list", err
		return r
	}
	r.kept, r.rejected = judgeDefinitions(p.cfg, p.readOnly, p.locked, defs)
	r.index(p)
	r.fetched = make(map[string]bool, len(names))
	for _, n := range names {
		r.fetched[n] = true
	}
	if _, ok := r.client.(providers.GuardedCaller); ok {
		r.listing = listing.Hash
	}
	return r
}

// startAndList starts p unless it runs, and lists its tools; with stopListed it then stops
// it (in the background), for an answer that only lists.
func startAndList(ctx context.Context, e *turnEnv, p *prov, stopListed bool) startResult {
	r := startOnce(ctx, e, p, stopListed)
	if r.err != nil {
		return r
	}
	return listStarted(ctx, e, p, r, stopListed)
}

// startOnce starts p unless it runs (r.client, or r.err at r.stage).
func startOnce(ctx context.Context, e *turnEnv, p *prov, stopListed bool) startResult {
	r := startResult{client: p.client, began: time.Now()}
	if r.client == nil {
		if err := e.TrustProvider(p.cfg); err != nil {
			r.stage, r.err, r.took = "trust", err, time.Since(r.began)
			return r
		}
		c, err := e.startProvider(ctx, p, stopListed)
		if err != nil {
			r.stage, r.err, r.took = "start", err, time.Since(r.began)
			return r
		}
		r.client = c
	}
	return r
}

// listStarted lists the tools of p, started as r says, and judges them.
func listStarted(ctx context.Context, e *turnEnv, p *prov, r startResult, stopListed bool) startResult {
	c, tools, err := e.listTools(ctx, p, r.client)
	r.client, r.tools, r.took = c, tools, time.Since(r.began)
	if err != nil {
		r.stage, r.err = "list", err
		return r
	}
	if stopListed {
		e.closeLater(r.client)
		r.client = nil
	}
	r.kept, r.rejected = judgeTools(p.cfg, p.readOnly, p.locked, tools)
	r.index(p)
	return r
}

// index makes r.byName of r.kept, the tools being p's.
func (r *startResult) index(p *prov) {
	r.byName = make(map[string]*tool, len(r.kept))
	for _, tl := range r.kept {
		tl.prov = p
		r.byName[tl.name] = tl
	}
}

// markDown leaves a provider out for the rest of the turn: recorded, kept in the state so
// that later processes of the turn know, and said once per turn on stderr.
func (t *Turn) markDown(a *answer, p *prov, stage string, err error, c providers.Client) {
	e := t.env
	reason := failReason(err)
	p.down = reason
	p.client = nil
	if st := providers.StageOf(err); st != "" {
		stage = st
	}
	tail := providers.StderrOf(err)
	if c != nil && tail == "" {
		// Stopped first (a faulty provider gets a short grace): only then has its stderr been
		// read to the end, so its last words are recorded whatever the timing, as the keeper's
		// are (stopFaulty). Read while it ran, the tail missed them under load.
		c.Close()
		tail = c.StderrTail()
	}
	_ = e.Log(audit.Event{Name: audit.EventProviderFailed, Provider: p.cfg.ID, Stage: stage,
		Reason: err.Error(), StderrTail: tail})
	_, _ = e.State.Create(providers.DownFact(p.cfg.ID), []byte(reason))
	if e.State.Once(providers.DownFact(p.cfg.ID)) {
		a.note("provider %s is unavailable for the rest of this turn: %s", p.cfg.ID, reason)
	}
}

// sharedDown is a shared entry's upstream out of this answer's reach (SPEC 14): recorded
// (provider_failed; broker_unavailable when the broker cannot be reached), and said by the answer
// (its listing, or its refusal), but no mark is kept: the next answer asks the broker again.
func (t *Turn) sharedDown(a *answer, p *prov, stage string, err error) {
	e := t.env
	reason := sharedReason(err)
	p.unavail, p.client = reason, nil
	if st := providers.StageOf(err); st != "" {
		stage = st
	}
	if errors.Is(err, broker.ErrUnavailable) {
		_ = e.Log(audit.Event{Name: audit.EventBrokerUnavailable, Provider: p.cfg.ID, Reason: err.Error()})
	}
	_ = e.Log(audit.Event{Name: audit.EventProviderFailed, Provider: p.cfg.ID, Stage: stage,
		Reason: err.Error(), StderrTail: providers.StderrOf(err)})
}

// sharedReason is what a turn is told of a shared entry's upstream that could not be had: the
// broker's word when it is down ("restarting", "held down after N exits in S seconds") or out
// of reach, else the failure as failReason says it, with its restart to come.
func sharedReason(err error) string {
	if msg, ok := broker.IsDown(err); ok {
		return shown(msg, reasonMax)
	}
	return failReason(err) + "; the broker restarts it"
}

// failReason says what happened in terms the turn can use, never with the command or its output.
func failReason(err error) string {
	var ve *mcpstdio.VersionError
	var re *mcpstdio.RPCError
	var tl *mcpstdio.TooLargeError
	switch {
	case errors.As(err, &tl):
		return fmt.Sprintf("it sent a message of %d bytes, over its limit of %d bytes (max_message)", tl.Size, tl.Limit)
	case errors.As(err, &ve):
		return fmt.Sprintf("it speaks protocol version %q, not %s", shown(ve.Offered, 40), mcpstdio.ProtocolVersion)
	case errors.Is(err, mcpstdio.ErrVersion):
		return "it speaks another protocol version than " + mcpstdio.ProtocolVersion
	case errors.Is(err, mcpstdio.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return "it did not answer in time"
	case errors.Is(err, policy.ErrEnvFile):
		return "its " + err.Error() // the file and the line, never a value
	case errors.Is(err, providers.ErrUntrusted):
		return "its program is not out of the agent's reach (it, or a link to it, lies where the agent can write)"
	case errors.Is(err, mcpstdio.ErrStart):
		return "it could not be started"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF), errors.Is(err, syscall.EPIPE):
		if st := providers.StageOf(err); st == mcpstdio.StageStart || st == mcpstdio.StageInitialize {
			return "it exited before completing start-up"
		}
		return "it exited or closed its connection"
	case errors.Is(err, mcpstdio.ErrProtocol):
		return "it broke the protocol"
	case errors.As(err, &re):
		return "it answered tools/list with an error"
	}
	return "its connection failed"
}

// closeLater stops a provider this turn no longer uses without making the answer wait for its
// shutdown grace periods; stopAll waits for it.
func (e *turnEnv) closeLater(c providers.Client) {
	if c == nil {
		return
	}
	e.closing.Add(1)
	go func() {
		defer e.closing.Done()
		c.Close()
	}()
}

// stopAll closes every provider in parallel and waits for them, and for those closed earlier.
func (e *turnEnv) stopAll() {
	defer e.closing.Wait()
	var wg sync.WaitGroup
	for _, id := range e.order {
		p := e.provs[id]
		if p.client == nil {
			continue
		}
		c := p.client
		p.client = nil
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Close()
		}()
	}
	wg.Wait()
}

// visible returns the family's tools known to this process, sorted by id, and whether a
// later process saw fewer than all of them (it only lists what it has started).
func (e *turnEnv) visible() []*tool {
	var all []*tool
	for _, id := range e.order {
		p := e.provs[id]
		if p.down != "" {
			continue
		}
		for _, tl := range p.tools {
			if e.pinned(tl) {
				all = append(all, tl)
			}
		}
	}
	sortByID(all)
	return all
}

func sortByID(tools []*tool) {
	slices.SortFunc(tools, func(a, b *tool) int { return strings.Compare(a.id, b.id) })
}

// pin returns the hash a capability was pinned with; ok is false when it is not part of this
// turn's family.
func (e *turnEnv) pin(providerID, name string) (hash string, ok bool) {
	return e.PinOf(providerID + "/" + name)
}

// pinned reports whether the tool belongs to the turn's family (a pin exists for it).
func (e *turnEnv) pinned(tl *tool) bool {
	_, ok := e.PinOf(tl.id)
	return ok
}

// pinMatches compares the tool's current definition with its pin.
func (e *turnEnv) pinMatches(tl *tool) bool {
	h, ok := e.PinOf(tl.id)
	return ok && h == tl.hash
}
