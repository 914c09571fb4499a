package capability

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spear-shell/spear-shell/audit"
	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/policy"
)

// prelude runs the checks shared by every answer: load, no-capabilities, audit-unavailable.
// It returns a code to stop with, or "".
func (t *Turn) prelude(a *answer) string {
	t.load()
	e := t.env
	if e.None != "" {
		return a.refuse(CodeNoCapabilities, e.None)
	}
	if moved := e.Rescope(); moved != "" {
		return a.refuse(CodeNoCapabilities, providers.NothingOffered+" ("+moved+")")
	}
	if e.Audit == nil {
		return a.auditUnavailable(e.AuditErr)
	}
	return ""
}

// list answers `list` and --context (via says which): what the turn is shown.
func (t *Turn) list(ctx context.Context, a *answer, via string) string {
	if code := t.prelude(a); code != "" {
		if code == CodeNoCapabilities && via == "context" {
			a.printf("%s.\n", t.env.None)
		}
		return code
	}
	e := t.env
	if !t.family(ctx, a, e.order) {
		return t.interrupted(a, "", "")
	}
	tools := e.visible()
	var down []string
	for _, id := range e.order {
		if p := e.provs[id]; p.down != "" {
			down = append(down, id)
		}
	}
	if err := e.Log(audit.Event{Name: audit.EventIndexExposed, Mode: e.mode,
		Fields: map[string]any{"via": via, "count": len(tools), "unavailable": down}}); err != nil {
		return a.auditUnavailable(err)
	}
	e.render(a, tools)
	return ""
}

// render prints the listing, whole or index.
func (e *turnEnv) render(a *answer, tools []*tool) {
	switch {
	case len(tools) == 0:
		a.printf("External capabilities for this turn: none (the offered providers list no capabilities).\n")
	case e.mode == "whole":
		a.printf("External capabilities for this turn (%d, shown whole; invoke them directly):\n", len(tools))
		for _, tl := range tools {
			a.printf("\n%s  %s%s\n", clean(tl.id), tl.class, e.writeNote(tl))
			if d := strings.TrimSpace(clean(tl.desc)); d != "" {
				a.printf("%s\n", indent(d, "  "))
			}
			a.printf("  arguments: %s\n", clean(string(tl.input)))
		}
	default:
		a.printf("External capabilities for this turn (%d, index; describe a capability before invoking it):\n", len(tools))
		// Written piece by piece, not through printf: an index can have 10,000 lines.
		n := 0
		for _, tl := range tools {
			n += len(tl.id) + len(tl.class) + min(len(tl.desc), indexLineMax) + 5
		}
		a.out.Grow(n)
		for _, tl := range tools {
			a.out.WriteString(clean(tl.id))
			a.out.WriteString("  ")
			a.out.WriteString(tl.class)
			a.out.WriteString("  ")
			line, cut := firstLineCut(clean(tl.desc), indexLineMax)
			a.out.WriteString(line)
			if cut {
				a.out.WriteString("…")
			}
			a.out.WriteByte('\n')
		}
	}
	e.renderUnusable(a)
	for _, id := range e.order {
		if p := e.provs[id]; p.down != "" {
			a.printf("Provider %s is unavailable for the rest of this turn: %s.\n", id, p.down)
		}
	}
	if len(tools) > 0 {
		a.printf("Usage: spear-capability describe <id>/<tool> [...]; spear-capability invoke <id>/<tool> '<JSON object>'\n")
	}
}

// writeNote tells a WRITE capability's policy in a listing.
func (e *turnEnv) writeNote(tl *tool) string {
	if tl.class != "WRITE" {
		return ""
	}
	return " (write policy " + tl.prov.cfg.Write + ": " + gateMeaning(policy.WriteGate(tl.prov.cfg.Write, e.Manifest.PermissionMode)) + ")"
}

func gateMeaning(g policy.Gate) string {
	switch g {
	case policy.GateRun:
		return "calls run"
	case policy.GateAsk:
		return "each call runs only if the approver confirms it"
	case policy.GateAutoApproved:
		return "calls run, recorded as auto-approved"
	}
	return "calls are refused"
}

func indent(s, pre string) string {
	return pre + strings.ReplaceAll(s, "\n", "\n"+pre)
}

// describe answers `describe`: the known capabilities print, the others are refused.
func (t *Turn) describe(ctx context.Context, a *answer, targets []string) string {
	if code := t.prelude(a); code != "" {
		return code
	}
	e := t.env
	need := map[string]bool{}
	var ids []string
	for _, tg := range targets {
		if id, _, ok := strings.Cut(tg, "/"); ok && e.provs[id] != nil && !need[id] {
			need[id] = true
			ids = append(ids, id)
		}
	}
	if !t.family(ctx, a, ids) {
		return t.interrupted(a, "", "")
	}
	worst := ""
	first := true
	for _, tg := range targets {
		tl, code, reason := t.lookup(tg)
		if code == "" && !e.pinMatches(tl) {
			code, reason = CodeDefinitionChanged, tg+": the tool's definition changed since this turn's family was selected"
		}
		if code != "" {
			ev := audit.Event{Code: code, Reason: reason, Capability: boundName(tg)}
			if c := a.refuseEv(ev); c == CodeAuditUnavailable {
				return c
			}
			if worst == "" || order(code) < order(worst) {
				worst = code
			}
			continue
		}
		if err := e.Log(audit.Event{Name: audit.EventDescribed, Provider: tl.prov.cfg.ID,
			Capability: tl.id, Class: tl.class, Mode: e.mode}); err != nil {
			return a.auditUnavailable(err)
		}
		_, _ = e.State.Create(providers.DescribedFact(tl.id), nil)
		if !first {
			a.printf("\n")
		}
		first = false
		e.describeOne(a, tl)
	}
	return worst
}

func (e *turnEnv) describeOne(a *answer, tl *tool) {
	a.printf("%s  %s\n", clean(tl.id), tl.class)
	if tl.class == "WRITE" {
		w := tl.prov.cfg.Write
		a.printf("write policy: %s; under permission mode %s %s\n", w, e.Manifest.PermissionMode,
			gateMeaning(policy.WriteGate(w, e.Manifest.PermissionMode)))
	} else {
		a.printf("write policy: none needed (READ capabilities run without confirmation)\n")
	}
	if d := strings.TrimSpace(shown(tl.desc, describeMax)); d != "" {
		a.printf("description:\n%s\n", indent(d, "  "))
	} else {
		a.printf("description: none\n")
	}
	a.printf("input schema:\n%s\n", indent(shown(prettyJSON(tl.input), describeMax), "  "))
	if why := e.schemaProblem(tl.input); why != "" {
		a.printf("  (this schema cannot be used, so every invocation is refused: %s)\n", shown(why, schemaMax))
	}
	if tl.output != nil {
		a.printf("output schema:\n%s\n", indent(shown(prettyJSON(tl.output), describeMax), "  "))
	} else {
		a.printf("output schema: none\n")
	}
}

// describeMax bounds each of a description's parts (description, input and output schema),
// as ResultLimit bounds a result: a provider cannot flood the turn through its definitions.
const describeMax = ResultLimit

func prettyJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return clean(string(raw))
	}
	return clean(b.String())
}

// lookup finds a capability of the family: unknown-capability, then unavailable.
func (t *Turn) lookup(target string) (*tool, string, string) {
	e := t.env
	id, name, ok := strings.Cut(target, "/")
	unknown := fmt.Sprintf("%s: no such capability is offered to this turn", boundName(target))
	p := e.provs[id]
	if !ok || p == nil {
		return nil, CodeUnknown, unknown
	}
	if p.down != "" {
		return nil, CodeUnavailable, fmt.Sprintf("%s: provider %s is unavailable for the rest of this turn: %s", boundName(target), id, p.down)
	}
	tl := p.byName[name]
	if tl == nil {
		if _, pinned := e.pin(id, name); pinned && validToolName(name) {
			return nil, CodeDefinitionChanged, fmt.Sprintf("%s: the tool is no longer listed by its provider", boundName(target))
		}
		if why := p.unusableReason(target, name); why != "" {
			return nil, CodeUnknown, why
		}
		return nil, CodeUnknown, unknown
	}
	if !e.pinned(tl) {
		return nil, CodeUnknown, unknown + " (it is not part of this turn's family)"
	}
	return tl, "", ""
}

// order is a code's place in SPEC 5's order of checks.
func order(code string) int {
	for i, c := range []string{CodeNotAlone, CodeMalformed, CodeNoCapabilities, CodeAuditUnavailable, CodeUnknown,
		CodeUnavailable, CodeNotDescribed, CodeInvalidArguments, CodeWriteRefused, CodeDefinitionChanged,
		CodeNotConfirmed, CodeToolError, CodeInvalidOutput, CodeTimeout} {
		if c == code {
			return i
		}
	}
	return 100
}
