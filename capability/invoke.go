package capability

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spear-shell/spear-shell/audit"
	"github.com/spear-shell/spear-shell/capability/broker"
	"github.com/spear-shell/spear-shell/capability/keeper"
	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/capability/schema"
	"github.com/spear-shell/spear-shell/mcpstdio"
	"github.com/spear-shell/spear-shell/policy"
)

// ResultLimit bounds the framed content of one result, in bytes of cleaned text.
const ResultLimit = 64 << 10

// invoke answers `invoke`, with SPEC 5's checks in order, all before the call is sent.
func (t *Turn) invoke(ctx context.Context, a *answer, r Request) string {
	if len(r.Targets) != 1 {
		return a.refuse(CodeMalformed, "usage: spear-capability invoke <id>/<tool> '<JSON object>'")
	}
	tl, forward, approval, code := t.checkInvoke(ctx, a, r.Targets[0], r.Arguments, false)
	if tl == nil {
		return code
	}
	return t.call(ctx, a, tl, forward, approval)
}

// preflight decides whether an invoke would go ahead now (spear_preflight): every check of
// invoke, without the approver and without the call; recorded capability_preflighted.
func (t *Turn) preflight(ctx context.Context, a *answer, target, args string) string {
	tl, _, approval, code := t.checkInvoke(ctx, a, target, args, true)
	if tl == nil && (code == CodeAuditUnavailable || a.preflight == nil) {
		return code
	}
	if tl != nil {
		decision := PreflightOK
		if approval == "ask" {
			decision = PreflightNeedsConfirmation
		}
		a.preflight = &Preflight{Capability: tl.id, Decision: decision}
	}
	ev := audit.Event{Name: audit.EventPreflighted, Capability: boundName(target),
		Fields: map[string]any{"decision": a.preflight.Decision}}
	if a.preflight.Decision != PreflightOK && a.preflight.Decision != PreflightNeedsConfirmation {
		ev.Code, ev.Reason = a.preflight.Decision, a.preflight.Reason
	}
	if err := t.env.Log(ev); err != nil {
		return a.auditUnavailable(err)
	}
	return ""
}

// checkInvoke runs invoke's checks in SPEC 5's order. It returns the capability, the
// arguments to send and how the call was approved, or a nil tool and the code the answer
// ends with. A preflight records no refusal and asks no approver: a refusal becomes
// a.preflight, and a call that needs the approver comes back with approval "ask".
func (t *Turn) checkInvoke(ctx context.Context, a *answer, target, arguments string, preflight bool) (*tool, json.RawMessage, string, string) {
	if code := t.prelude(a); code != "" {
		return nil, nil, "", code
	}
	e := t.env
	args := json.RawMessage(arguments)
	refuse := func(code, reason string, tl *tool) (*tool, json.RawMessage, string, string) {
		if preflight {
			a.preflight = &Preflight{Capability: target, Decision: code, Reason: reason}
			return nil, nil, "", code
		}
		ev := audit.Event{Code: code, Reason: reason, Capability: boundName(target), Args: args}
		if tl != nil {
			ev.Provider, ev.Class = tl.prov.cfg.ID, tl.class
		}
		return nil, nil, "", a.refuseEv(ev)
	}
	id, name, _ := strings.Cut(target, "/")
	if e.provs[id] == nil {
		return refuse(CodeUnknown, boundName(target)+": no such capability is offered to this turn", nil)
	}
	// A preflight says what an invoke would meet now, so it looks at the listing now; an invoke
	// may use the definitions it has when its call is guarded by their listing (call).
	a.guarded = !preflight
	ok := t.family(ctx, a, []string{id}, map[string][]string{id: {name}})
	a.guarded = false
	if !ok {
		return nil, nil, "", t.interrupted(a, target, "")
	}
	tl, code, reason := t.lookup(target)
	if code != "" {
		return refuse(code, reason, nil)
	}
	if e.mode != "whole" {
		if _, ok, err := e.State.Read(providers.DescribedFact(tl.id)); err != nil || !ok {
			return refuse(CodeNotDescribed, fmt.Sprintf("%s must be described in this turn before it is invoked: spear-capability describe %s", tl.id, tl.id), tl)
		}
	}
	forward, why := e.checkArguments(tl, arguments)
	if why != "" {
		return refuse(CodeInvalidArguments, tl.id+": "+why, tl)
	}
	gate := policy.GateRun
	if tl.class != "READ" {
		gate = policy.WriteGate(tl.prov.cfg.Write, e.Manifest.PermissionMode)
	}
	if gate == policy.GateRefuse {
		return refuse(CodeWriteRefused, fmt.Sprintf("%s is a WRITE capability; its write policy %q under permission mode %q refuses calls",
			tl.id, tl.prov.cfg.Write, e.Manifest.PermissionMode), tl)
	}
	if tl.drift {
		return refuse(CodeDefinitionChanged, tl.id+lockChanged, tl)
	}
	if !e.pinMatches(tl) {
		return refuse(CodeDefinitionChanged, tl.id+": the tool's definition changed since this turn's family was selected", tl)
	}
	approval := "not-needed"
	switch gate {
	case policy.GateAsk:
		if len(e.Manifest.Approver) == 0 {
			return refuse(CodeNotConfirmed, tl.id+": this WRITE needs confirmation and the turn has no approver", tl)
		}
		if err := e.TrustPrograms(e.Manifest.ApproverPrograms()); err != nil {
			return refuse(CodeNotConfirmed, tl.id+": the approver cannot be asked: "+err.Error(), tl)
		}
		if preflight {
			return tl, forward, "ask", ""
		}
		ok, why := policy.Approve(ctx, e.Manifest.Approver, e.Manifest.ApproverTimeout, policy.ApprovalRequest{
			Turn: e.Manifest.Turn, Session: e.Manifest.Session, Capability: tl.id, Class: tl.class,
			Description: clean(tl.desc), Arguments: forward,
		})
		if ctx.Err() != nil {
			return nil, nil, "", t.interrupted(a, tl.id, "")
		}
		if !ok {
			return refuse(CodeNotConfirmed, tl.id+": not confirmed: "+why, tl)
		}
		approval = "approved"
	case policy.GateAutoApproved:
		approval = "auto-approved"
	}
	return tl, forward, approval, ""
}

// call sends the validated arguments, records intent and outcome, and frames the result.
func (t *Turn) call(ctx context.Context, a *answer, tl *tool, forward json.RawMessage, approval string) string {
	e := t.env
	p := tl.prov
	auditID := audit.NewAuditID()
	// The intent is written only with room kept for what follows it: the call is never sent
	// unless its outcome can be recorded (docs/audit.md says what a disk that fills guarantees).
	intent := audit.Event{Name: audit.EventInvoked, Provider: p.cfg.ID, Capability: tl.id,
		Class: tl.class, AuditID: auditID, Args: forward, Mode: e.mode,
		Fields: map[string]any{"phase": "intent", "approval": approval}}
	if e.Audit == nil {
		return a.auditUnavailable(e.Log(intent))
	}
	if err := e.Audit.LogReserving(intent); err != nil {
		return a.auditUnavailable(err)
	}
	timeout := providers.Timeout(p.cfg)
	began := time.Now()
	cctx, cancel := context.WithTimeout(ctx, timeout)
	res, moved, err := t.send(cctx, p, tl, forward)
	cancel()
	took := time.Since(began)

	outcome := audit.Event{Name: audit.EventInvoked, Provider: p.cfg.ID, Capability: tl.id, Class: tl.class,
		AuditID: auditID, Duration: took, Fields: map[string]any{"phase": "outcome"}}
	if moved != "" && err == nil {
		// Not sent: the tool's definition is not the pinned one any more (send). The intent
		// gets its outcome; the answer is the refusal the checks would have made.
		p.listing, p.partial, p.fetched = "", true, nil // the next answer fetches it again
		outcome.Code, outcome.Reason = CodeDefinitionChanged, moved
		outcome.Fields["sent"] = false
		a.outcome = &CallOutcome{Capability: tl.id, Provider: p.cfg.ID, AuditID: auditID, Code: CodeDefinitionChanged, Reason: moved}
		if err := e.Log(outcome); err != nil {
			return a.auditUnavailable(err)
		}
		a.errf(CodeDefinitionChanged, "%s", moved)
		return CodeDefinitionChanged
	}
	var rpc *mcpstdio.RPCError
	var tooLarge *mcpstdio.TooLargeError
	var body, code, reason string
	a.outcome = &CallOutcome{Capability: tl.id, Provider: p.cfg.ID, AuditID: auditID}
	switch {
	case ctx.Err() != nil:
		// Ctrl-C: the provider may still be busy with the call; stop it, a later need restarts it.
		// A provider of the turn's keeper stays: closing lets the keeper go, which cancels the call.
		e.closeLater(p.client)
		p.client = nil
		outcome.Code = CodeInterrupted
		a.outcome.Code = CodeInterrupted
		_ = e.Log(outcome)
		return t.interrupted(a, tl.id, auditID)
	case errors.As(err, &rpc):
		code = CodeToolError
		body = clean(fmt.Sprintf("JSON-RPC error %d: %s", rpc.Code, rpc.Message))
		reason = fmt.Sprintf("%s answered with a JSON-RPC error (%d)", tl.id, rpc.Code)
	case errors.As(err, &tooLarge) && !errors.Is(err, mcpstdio.ErrProtocol):
		// Read through and discarded by the client: the provider stays (SPEC 6).
		code = CodeToolError
		reason = fmt.Sprintf("%s: the result (%d bytes) was larger than the limit of %d bytes (max_message) and was discarded",
			tl.id, tooLarge.Size, tooLarge.Limit)
		body = reason
	case errors.Is(err, keeper.ErrLost):
		// The call was sent and may have run: it is not sent again (SPEC 6), and the provider,
		// which did nothing wrong, stays in the turn; the next answer starts it itself.
		e.closeLater(p.client)
		p.client = nil
		return a.callFailed(e, outcome, CodeUnavailable, err,
			tl.id+": the turn's keeper went away during the call, which is not sent again: its outcome is unknown")
	case err != nil && p.cfg.Share != "":
		return t.sharedCallFailed(a, p, tl, err, timeout, outcome)
	case err != nil:
		code = callFailure(err)
		c := p.client
		e.closeLater(c)
		t.markDown(a, p, "call", err, c)
		msg := fmt.Sprintf("%s: provider %s is unavailable for the rest of this turn: %s", tl.id, p.cfg.ID, p.down)
		if code == CodeTimeout {
			msg = fmt.Sprintf("%s did not answer within %v; provider %s is unavailable for the rest of this turn", tl.id, timeout, p.cfg.ID)
		}
		return a.callFailed(e, outcome, code, err, msg)
	default:
		body = renderContent(res)
		switch {
		case res.IsError:
			code, reason = CodeToolError, tl.id+" reported an error"
		case tl.output != nil:
			if why := e.checkOutput(tl, res.StructuredContent); why != "" {
				code, reason = CodeInvalidOutput, tl.id+": "+why
			}
		}
	}
	full := len(body)
	shown, _ := truncate(body, ResultLimit)
	outcome.Code, outcome.Reason, outcome.Result, outcome.ResultBytes = code, reason, shown, full
	if outcome.Code == "" {
		outcome.Code = "ok"
	}
	if err := e.Log(outcome); err != nil {
		return a.auditUnavailable(err)
	}
	a.outcome.Code, a.outcome.Reason, a.outcome.Result = code, reason, res
	a.outcome.Body, a.outcome.Full, a.outcome.Framed = shown, full, true
	if code != "" {
		a.errf(code, "%s", reason)
	}
	return code
}

// sharedCallFailed answers a call to a shared entry that failed (SPEC 14): its upstream down or
// stopped under the call, the broker gone, or a timeout. The entry is not left out of the turn:
// the broker restarts its upstream, and a later call works again under the turn's pins. The call
// is never sent again.
func (t *Turn) sharedCallFailed(a *answer, p *prov, tl *tool, err error, timeout time.Duration, outcome audit.Event) string {
	e := t.env
	code := callFailure(err)
	reason := sharedReason(err)
	if errors.Is(err, broker.ErrLost) {
		reason = "the broker went away during the call, which is not sent again: its outcome is unknown"
		_ = e.Log(audit.Event{Name: audit.EventBrokerUnavailable, Provider: p.cfg.ID, Reason: err.Error()})
	}
	e.closeLater(p.client) // a new connection for the next answer: the broker's state is its own
	p.client = nil
	if code != CodeTimeout {
		_ = e.Log(audit.Event{Name: audit.EventProviderFailed, Provider: p.cfg.ID, Stage: "call",
			Reason: err.Error(), StderrTail: providers.StderrOf(err)})
	}
	msg := fmt.Sprintf("%s: provider %s is unavailable: %s", tl.id, p.cfg.ID, reason)
	if code == CodeTimeout {
		msg = fmt.Sprintf("%s did not answer within %v", tl.id, timeout)
	}
	return a.callFailed(e, outcome, code, err, msg)
}

// callFailure is the code of a call that failed: timeout when the provider did not answer in
// time, else unavailable.
func callFailure(err error) string {
	if errors.Is(err, mcpstdio.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
		return CodeTimeout
	}
	return CodeUnavailable
}

// callFailed records a call's outcome as code, for err, and then says msg; an outcome that
// cannot be recorded makes the answer audit-unavailable.
func (a *answer) callFailed(e *turnEnv, outcome audit.Event, code string, err error, msg string) string {
	outcome.Code, outcome.Reason = code, err.Error()
	a.outcome.Code, a.outcome.Reason = code, err.Error()
	if lerr := e.Log(outcome); lerr != nil {
		return a.auditUnavailable(lerr)
	}
	a.errf(code, "%s", msg)
	return code
}

// guardedTries bounds the guarded sends of one call whose provider's listing keeps changing
// under it while the tool itself stays as pinned.
const guardedTries = 3

// send sends the call. A provider whose calls can be guarded by the listing tl's definition
// came from (p.listing) gets it so: a listing that changed since stops the call before it is
// sent, and the tool as the new listing holds it is judged again as a fetched definition is;
// when it still matches its pin the call is sent on the new listing, otherwise moved says why
// the tool no longer matches (definition-changed) and nothing was sent.
func (t *Turn) send(ctx context.Context, p *prov, tl *tool, forward json.RawMessage) (res *mcpstdio.CallResult, moved string, err error) {
	gc, ok := p.client.(providers.GuardedCaller)
	if !ok || p.listing == "" {
		res, err = p.client.CallTool(ctx, tl.name, forward)
		return res, "", err
	}
	for range guardedTries {
		res, m, err := gc.CallToolIf(ctx, tl.name, forward, p.listing)
		if err != nil || m == nil {
			return res, "", err
		}
		kept, _ := judgeDefinitions(p.cfg, p.readOnly, p.locked, []providers.Definition{m.Def})
		if len(kept) == 1 && kept[0].drift {
			return nil, tl.id + lockChanged, nil
		}
		if len(kept) != 1 || kept[0].hash != tl.hash || !t.env.pinMatches(tl) {
			return nil, tl.id + ": the tool's definition changed since this turn's family was selected", nil
		}
		p.listing = m.Listing.Hash // the same tool in another listing: sent on that one
	}
	return nil, tl.id + ": the provider's listing kept changing while the call was being sent; it was not sent", nil
}

// checkArguments decodes the arguments with exact numbers, checks the top-level names
// against inputSchema.properties, validates them, and re-encodes the validated value.
// reason is empty on success and otherwise says what to fix, with JSON pointers.
func (e *turnEnv) checkArguments(tl *tool, text string) (forward json.RawMessage, reason string) {
	v, err := schema.Decode(strings.NewReader(text))
	if err != nil {
		return nil, "the arguments are not JSON: " + err.Error()
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, "the arguments must be one JSON object"
	}
	if tl.declared == nil {
		tl.declared = schema.Declared(tl.input) // a session invokes a tool many times
	}
	declared := tl.declared
	var undeclared []string
	for k := range obj {
		if !declared[k] {
			undeclared = append(undeclared, k)
		}
	}
	if len(undeclared) > 0 {
		sort.Strings(undeclared)
		names := make([]string, 0, len(declared))
		for k := range declared {
			names = append(names, k)
		}
		sort.Strings(names)
		q := make([]string, len(undeclared))
		for i, k := range undeclared {
			q[i] = quote(k)
		}
		dq := make([]string, len(names))
		for i, k := range names {
			dq[i] = quote(k)
		}
		allowed := "none"
		if len(dq) > 0 {
			allowed = strings.Join(dq, ", ")
		}
		return nil, fmt.Sprintf("argument %s is not declared in the tool's inputSchema properties (declared: %s)",
			strings.Join(q, ", "), allowed)
	}
	unusable, failures := e.schemas.Check(tl.input, v)
	if unusable != "" {
		return nil, "the tool's schema cannot be used: " + shown(unusable, schemaMax)
	}
	if len(failures) > 0 {
		return nil, "the arguments do not match the tool's inputSchema: " + joinFailures(failures)
	}
	return schema.Encode(v), ""
}

// checkOutput enforces an outputSchema on structuredContent.
func (e *turnEnv) checkOutput(tl *tool, structured json.RawMessage) string {
	if s := strings.TrimSpace(string(structured)); s == "" || s == "null" {
		return "the tool declares an outputSchema but returned no structuredContent"
	}
	v, err := schema.Decode(strings.NewReader(string(structured)))
	if err != nil {
		return "structuredContent is not JSON"
	}
	unusable, failures := e.schemas.Check(tl.output, v)
	if unusable != "" {
		return "the tool's outputSchema cannot be used: " + shown(unusable, schemaMax)
	}
	if len(failures) > 0 {
		return "structuredContent does not match the tool's outputSchema: " + joinFailures(failures)
	}
	return ""
}

// maxFailures bounds the schema failures named in one reason.
const maxFailures = 5

// joinFailures names at most maxFailures failures, cleaned, and how many more there are.
func joinFailures(failures []string) string {
	more := ""
	if len(failures) > maxFailures {
		more = fmt.Sprintf(" (and %d more)", len(failures)-maxFailures)
		failures = failures[:maxFailures]
	}
	parts := make([]string, len(failures))
	for i, l := range failures {
		parts[i] = shown(l, schemaMax)
	}
	return strings.Join(parts, "; ") + more
}

func (t *Turn) interrupted(a *answer, capID, auditID string) string {
	if e := t.env; e != nil && e.Manifest != nil {
		_ = e.Log(audit.Event{Name: audit.EventInterrupted, Capability: capID, AuditID: auditID})
	}
	a.errf(CodeInterrupted, "the answer was interrupted")
	return CodeInterrupted
}

// renderContent prints text items in order; images, audio and resources summarised; then
// structuredContent as compact JSON unless a text item already holds the same JSON value (a
// server that says "Graph read successfully" and puts the graph only there must not hide it).
// Everything is cleaned; the caller bounds the whole.
func renderContent(res *mcpstdio.CallResult) string {
	var b strings.Builder
	line := func(s string) {
		b.WriteString(s)
		if !strings.HasSuffix(s, "\n") {
			b.WriteByte('\n')
		}
	}
	for _, it := range Items(res) {
		line(it.Text)
	}
	if res.StructuredContent != nil && !textHoldsJSON(res.Content, res.StructuredContent) {
		line(clean(string(compactJSON(res.StructuredContent))))
	}
	return b.String()
}

// Item is one content item of a result as both faces pass it on: its text, cleaned (for an
// image or audio item, the summary the shell prints in its place), and, for media, the base64
// data and type the MCP face passes on as they are.
type Item struct {
	Text  string
	Media string // "image" or "audio", else ""
	MIME  string // media only, cleaned
	Data  string // media only: base64 as the provider sent it
}

// Items decodes a result's content items, in order.
func Items(res *mcpstdio.CallResult) []Item {
	out := make([]Item, 0, len(res.Content))
	for _, c := range res.Content {
		switch c.Type {
		case "text":
			out = append(out, Item{Text: clean(c.Text)})
		case "image", "audio":
			var d struct {
				Data string `json:"data"`
			}
			_ = json.Unmarshal(c.Raw, &d)
			out = append(out, Item{Media: c.Type, MIME: clean(c.MimeType), Data: d.Data,
				Text: fmt.Sprintf("[%s content: %s, %d bytes of base64 data, not shown]", c.Type, clean(c.MimeType), len(d.Data))})
		case "resource_link":
			var d struct{ URI, Name string }
			_ = json.Unmarshal(c.Raw, &d)
			out = append(out, Item{Text: fmt.Sprintf("[resource link: %s %s]", clean(d.URI), clean(d.Name))})
		case "resource":
			var d struct {
				Resource struct {
					URI, MimeType, Text string
					Blob                *string
				}
			}
			_ = json.Unmarshal(c.Raw, &d)
			r := d.Resource
			if r.Blob != nil {
				out = append(out, Item{Text: fmt.Sprintf("[embedded resource: %s %s, %d bytes of base64 data, not shown]", clean(r.URI), clean(r.MimeType), len(*r.Blob))})
			} else {
				out = append(out, Item{Text: fmt.Sprintf("[embedded resource: %s %s]\n%s", clean(r.URI), clean(r.MimeType), clean(r.Text))})
			}
		default:
			out = append(out, Item{Text: fmt.Sprintf("[content of type %s, not shown]", quote(c.Type))})
		}
	}
	return out
}

// textHoldsJSON reports whether a text item parses as JSON to a value equal to raw's (numbers
// compared exactly), so that printing raw again would only repeat it.
func textHoldsJSON(content []mcpstdio.Content, raw json.RawMessage) bool {
	var want any
	decoded := false
	for _, c := range content {
		t := strings.TrimSpace(c.Text)
		if c.Type != "text" || t == "" || !json.Valid([]byte(t)) {
			continue
		}
		if !decoded {
			v, err := schema.Decode(bytes.NewReader(raw))
			if err != nil {
				return false
			}
			want, decoded = v, true
		}
		if got, err := schema.Decode(strings.NewReader(t)); err == nil && schema.Equal(got, want) {
			return true
		}
	}
	return false
}

// frame wraps content in markers carrying a random per-answer token, which the content
// cannot contain (it is drawn again if it does), so hostile content cannot close early.
func frame(capID, auditID, body string) string {
	var token string
	for {
		var b [12]byte
		if _, err := rand.Read(b[:]); err != nil {
			panic(fmt.Errorf("capability: random token: %w", err))
		}
		token = hex.EncodeToString(b[:])
		if !strings.Contains(body, token) {
			break
		}
	}
	if body != "" && !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	return fmt.Sprintf("<<<spear-capability result %s token=%s audit_id=%s>>>\n%s<<<end spear-capability result token=%s>>>\n",
		clean(capID), token, clean(auditID), body, token)
}
