package capability

import (
	"context"
	"io"
	"strings"

	"github.com/spear-shell/spear-shell/audit"
	"github.com/spear-shell/spear-shell/capability/providers"
)

// The MCP face's entry points (SPEC 13): the same deciding code as Answer, returning what was
// decided instead of printing it. Each returns the answer-level refusal (the one line the
// shell would print on stderr) when the answer ended in one, audit-unavailable included.

// decide runs one answer for the face, serialised with the turn's other answers.
func (t *Turn) decide(ctx context.Context, run func(a *answer) string) (*answer, string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	a := t.begin(ctx, io.Discard, io.Discard)
	defer t.endStart()
	code := run(a)
	return a, code
}

// refusalOf is the answer's refusal when it ended in code: its first code line.
func refusalOf(a *answer, code string) *Refusal {
	switch {
	case code == "":
		return nil
	case a.refusal != nil:
		return a.refusal
	}
	return &Refusal{Code: code, Reason: code}
}

// FaceToolsList is the face's tools/list: a listing recorded via "mcp". A family already
// selected as an index lists no capability as a tool, so its listing needs no provider: the
// face's first tools/list then costs what a server listing its own five tools does (SPEC 13).
func (t *Turn) FaceToolsList(ctx context.Context) (*Listing, *Refusal) {
	a, code := t.decide(ctx, func(a *answer) string {
		if code := t.prelude(a); code != "" {
			return code
		}
		e := t.env
		if mode, ok, err := e.State.Read(providers.FamilyFact); err == nil && ok && modeOf(mode) == "index" {
			e.mode, e.familyKnown = "index", true
			if err := e.Log(audit.Event{Name: audit.EventIndexExposed, Mode: e.mode,
				Fields: map[string]any{"via": "mcp", "tools": "the face's own"}}); err != nil {
				return a.auditUnavailable(err)
			}
			a.listing = &Listing{Mode: "index", Down: e.downList()}
			return ""
		}
		return t.list(ctx, a, "mcp")
	})
	if a.listing != nil {
		return a.listing, nil
	}
	return nil, refusalOf(a, code)
}

// FaceSearch is spear_search.
func (t *Turn) FaceSearch(ctx context.Context, words []string, limit int, cursor string) (*SearchPage, *Refusal) {
	a, code := t.decide(ctx, func(a *answer) string { return t.search(ctx, a, words, limit, cursor) })
	if a.page != nil {
		return a.page, nil
	}
	return nil, refusalOf(a, code)
}

// FaceDescribe is spear_describe: per id its description or its refusal; the refusal is the
// answer's only when nothing could be described at all (no-capabilities, audit-unavailable).
func (t *Turn) FaceDescribe(ctx context.Context, ids []string) ([]Described, *Refusal) {
	a, code := t.decide(ctx, func(a *answer) string { return t.describe(ctx, a, ids) })
	if a.described != nil {
		return a.described, nil
	}
	return nil, refusalOf(a, code)
}

// FaceInvoke is spear_invoke and a direct tool's call: the outcome of the call when it was
// made, else the refusal.
func (t *Turn) FaceInvoke(ctx context.Context, id, arguments string) (*CallOutcome, *Refusal) {
	a, code := t.decide(ctx, func(a *answer) string {
		return t.invoke(ctx, a, Request{Verb: "invoke", Targets: []string{id}, Arguments: arguments})
	})
	if o := a.outcome; o != nil {
		if o.Code != "" && a.refusal != nil && a.refusal.Code == o.Code {
			// the reason is the answer's line, as the shell prints it (an interrupted call has
			// none of its own; a timeout's or a lost provider's is the client's error)
			o.Reason = a.refusal.Reason
		}
		return o, nil
	}
	return nil, refusalOf(a, code)
}

// FacePreflight is spear_preflight.
func (t *Turn) FacePreflight(ctx context.Context, id, arguments string) (*Preflight, *Refusal) {
	a, code := t.decide(ctx, func(a *answer) string { return t.preflight(ctx, a, id, arguments) })
	if a.preflight != nil && code == "" {
		return a.preflight, nil
	}
	return nil, refusalOf(a, code)
}

// FaceRefuse records a refusal the face decided itself (malformed arguments to its tools).
func (t *Turn) FaceRefuse(ctx context.Context, code, reason string) *Refusal {
	a, c := t.decide(ctx, func(a *answer) string {
		t.load()
		return a.refuse(code, reason)
	})
	return refusalOf(a, c)
}

// Redact removes the configuration's secrets from text the face is about to send, as the
// shell's answers are redacted before they are printed.
func (t *Turn) Redact(s string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.env != nil && t.env.Redactor != nil {
		return t.env.Redactor.String(s)
	}
	return s
}

// Redacts reports whether Redact may change anything: the configuration has secrets.
func (t *Turn) Redacts() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.env == nil || t.env.Redactor == nil || !t.env.Redactor.Empty()
}

// Ended reports whether the turn's answers say it has ended (--end-turn's mark).
func (r *Refusal) Ended() bool {
	return r != nil && r.Code == CodeNoCapabilities && strings.Contains(r.Reason, providers.TurnEnded)
}

// EndedSince reports whether --end-turn has marked the turn's state ended since this turn was
// loaded: a turn loads its state once, and the face keeps its turns across calls, so it asks
// before each call (one read of the state) and answers with a fresh turn, which says the turn
// has ended and starts nothing (SPEC 12, 13).
func (t *Turn) EndedSince() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.loaded || t.env == nil || t.env.Turn == nil || t.env.State == nil || t.env.None == providers.TurnEnded {
		return false
	}
	ended, err := t.env.EndedNow()
	return err != nil || ended // a mark that cannot be read: a fresh turn, which offers nothing
}

// FaceSkippedPrompt records a prompt file the face left out.
func (t *Turn) FaceSkippedPrompt(path, reason string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.load()
	if t.env != nil && t.env.Manifest != nil {
		_ = t.env.Log(audit.Event{Name: audit.EventPromptSkipped, Reason: reason, Fields: map[string]any{"file": path}})
	}
}

// Clean is the cleaning every provider string gets before it is shown (SPEC 5).
func Clean(s string) string { return clean(s) }

// Shown cleans s and bounds it to max bytes, saying what was cut.
func Shown(s string, max int) string { return shown(s, max) }

// FirstLine is the first line of a description, cleaned and bounded as the index bounds it.
func FirstLine(s string) string { return firstLine(clean(s), indexLineMax) }

// Prompts are the operator's prompts (SPEC 2.3, 13) of the configuration as this turn loaded
// it, and the directories and files left out, each with why.
func (t *Turn) Prompts() ([]Prompt, []SkippedPrompt) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.load()
	if t.env == nil || t.env.Registry == nil {
		return nil, nil
	}
	return t.env.trustedPrompts(t.env.Registry.PromptDirs)
}
