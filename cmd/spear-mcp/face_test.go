package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/spear-shell/spear-shell/testdata/testkit"
)

// The turn most cases use: provider p (whole family: READ echo, wait, fail, rpcfail, badout;
// WRITE put refused), w (a WRITE under confirm), slow (a call that never ends but by its
// timeout), down (cannot start).
const refusalCaps = `{"providers": [
  {"id": "p", "command": ["$FAKEPROVIDER", "$WORK/p.json"], "scope": "global", "read": ["echo", "wait", "fail", "rpcfail", "badout"]},
  {"id": "w", "command": ["$FAKEPROVIDER", "$WORK/w.json"], "scope": "global", "write": "confirm"},
  {"id": "slow", "command": ["$FAKEPROVIDER", "$WORK/slow.json"], "scope": "global", "read": ["hang"], "timeout": 2},
  {"id": "down", "command": ["$FAKEPROVIDER", "$WORK/down.json"], "scope": "global"}
]}`

const echoSchema = `{"type": "object", "properties": {"message": {"type": "string"}}, "additionalProperties": false}`

var refusalFiles = map[string]string{
	"p.json": `{"record": "$WORK/p.record", "tools": [
  {"name": "echo", "description": "Echo the message.", "inputSchema": ` + echoSchema + `, "behavior": {"echo": true}},
  {"name": "put", "description": "Store the message.", "inputSchema": ` + echoSchema + `, "behavior": {"echo": true}},
  {"name": "wait", "description": "Wait until cancelled.", "inputSchema": {"type": "object"}, "behavior": {"waitCancel": true}},
  {"name": "fail", "description": "Fail.", "inputSchema": {"type": "object"}, "behavior": {"isError": true, "text": ["it broke"]}},
  {"name": "rpcfail", "description": "Fail at the protocol.", "inputSchema": {"type": "object"}, "behavior": {"rpcError": {"code": -32000, "message": "boom"}}},
  {"name": "badout", "description": "Break its output schema.", "inputSchema": {"type": "object"},
   "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
   "behavior": {"structured": {"n": "not a number"}, "text": ["{\"n\": \"not a number\"}"]}}
]}`,
	"w.json": `{"record": "$WORK/w.record", "tools": [
  {"name": "put", "description": "Store.", "inputSchema": ` + echoSchema + `, "behavior": {"echo": true}}
]}`,
	"slow.json": `{"record": "$WORK/slow.record", "tools": [
  {"name": "hang", "description": "Never answer.", "inputSchema": {"type": "object"}, "behavior": {"waitCancel": true}}
]}`,
	"down.json": `{"exit": 1}`,
}

// TestFaceRefusals: every refusal code reachable through the face, each checked in its result
// and in the audit trail (records marked face mcp, SPEC 7).
func TestFaceRefusals(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, refusalCaps, map[string]any{}, refusalFiles)
	f := fx.startFace(t)

	t.Run("malformed", func(t *testing.T) {
		cases := []struct {
			tool string
			args any
			msg  string
		}{
			{"spear_search", map[string]any{}, "query needs at least one word"},
			{"spear_search", map[string]any{"query": 3}, `argument "query" has the wrong type`},
			{"spear_search", map[string]any{"query": "echo", "limit": 51}, "limit must be 1-50"},
			{"spear_search", map[string]any{"query": "echo", "extra": 1}, `unknown argument "extra"`},
			{"spear_search", json.RawMessage(`{"query": "echo", "query": "put"}`), `key "query" is given twice`},
			{"spear_describe", map[string]any{"ids": "p/echo"}, `argument "ids" has the wrong type`},
			{"spear_describe", map[string]any{"ids": []string{}}, "ids needs at least one"},
			{"spear_describe", map[string]any{"ids": []string{"echo"}}, "is not of the form <provider>/<tool>"},
			{"spear_invoke", map[string]any{}, "id is required"},
			{"spear_invoke", map[string]any{"id": "p/echo", "arguments": "x"}, `argument "arguments" must be an object`},
			{"spear_preflight", map[string]any{"id": 7}, `argument "id" has the wrong type`},
			{"spear_preflight", map[string]any{"id": "p/echo", "arguments": []int{1}}, `argument "arguments" must be an object`},
			{"spear_explain", map[string]any{"code": "no-such-code"}, "is not a refusal code"},
			{"spear_explain", map[string]any{}, "is not a refusal code"},
		}
		for _, c := range cases {
			msg := refused(t, f.call(t, c.tool, c.args), "malformed", c.tool+": "+c.msg)
			// recorded with its reason, but spear_explain's: it reveals nothing of the turn
			if c.tool != "spear_explain" {
				fx.want(t, "capability_refused,face=mcp,code=malformed,reason="+msg)
			}
		}
		if n, want := fx.count(t, "capability_refused,face=mcp,code=malformed"), len(cases)-2; n != want {
			t.Errorf("%d malformed records, want %d (spear_explain is not recorded)", n, want)
		}
		if n := countPrefix(fx.records(t), "spear_explain"); n != 0 {
			t.Errorf("spear_explain was recorded %d times", n)
		}
		// a cursor that is not one of this search's
		res := f.call(t, "spear_search", map[string]any{"query": "echo", "cursor": "not-a-cursor"})
		msg := refused(t, res, "malformed", "cursor")
		fx.want(t, "capability_refused,face=mcp,code=malformed,reason="+msg)
		// spear_explain answers a known code
		res = f.call(t, "spear_explain", map[string]any{"code": "write-refused"})
		if res.IsError || sc(t, res)["code"] != "write-refused" {
			t.Errorf("spear_explain write-refused: %s", show(res))
		}
	})

	t.Run("unknown-capability", func(t *testing.T) {
		for _, id := range []string{"nope/x", "p/missing"} {
			res := f.invoke(t, id, map[string]any{})
			refused(t, res, "unknown-capability", id)
			fx.want(t, "capability_refused,face=mcp,code=unknown-capability,capability="+id)
		}
		// spear_describe: an item with its code; isError only when no id was known
		res := f.call(t, "spear_describe", map[string]any{"ids": []string{"p/echo", "nope/x"}})
		items := sc(t, res)["items"].([]any)
		if res.IsError || len(items) != 2 || items[0].(map[string]any)["id"] != "p/echo" || items[1].(map[string]any)["code"] != "unknown-capability" {
			t.Errorf("describe p/echo nope/x: %s", show(res))
		}
		res = f.call(t, "spear_describe", map[string]any{"ids": []string{"nope/x"}})
		if !res.IsError || sc(t, res)["items"].([]any)[0].(map[string]any)["code"] != "unknown-capability" {
			t.Errorf("describe nope/x: %s", show(res))
		}
		fx.want(t, "capability_described,face=mcp,capability=p/echo")
	})

	t.Run("unavailable", func(t *testing.T) {
		res := f.invoke(t, "down/anything", map[string]any{})
		refused(t, res, "unavailable", "down")
		fx.want(t, "provider_failed,provider=down", "capability_refused,face=mcp,code=unavailable,capability=down/anything")
	})

	t.Run("invalid-arguments", func(t *testing.T) {
		res := f.invoke(t, "p/echo", map[string]any{"message": 3})
		refused(t, res, "invalid-arguments", "p/echo")
		res = f.invoke(t, "p/echo", map[string]any{"other": "x"})
		refused(t, res, "invalid-arguments", "p/echo")
		if n := fx.count(t, "capability_refused,face=mcp,code=invalid-arguments,capability=p/echo"); n != 2 {
			t.Errorf("%d invalid-arguments records, want 2", n)
		}
	})

	t.Run("write-refused", func(t *testing.T) {
		res := f.invoke(t, "p/put", map[string]any{"message": "x"})
		refused(t, res, "write-refused", "p/put is a WRITE capability")
		fx.want(t, "capability_refused,face=mcp,code=write-refused,capability=p/put,class=WRITE")
	})

	t.Run("not-confirmed", func(t *testing.T) {
		res := f.invoke(t, "w/put", map[string]any{"message": "x"})
		refused(t, res, "not-confirmed", "the turn has no approver")
		fx.want(t, "capability_refused,face=mcp,code=not-confirmed,capability=w/put")
	})

	t.Run("tool-error", func(t *testing.T) {
		for _, id := range []string{"p/fail", "p/rpcfail"} {
			res := f.invoke(t, id, map[string]any{})
			m := sc(t, res)
			if !res.IsError || m["code"] != "tool-error" || m["decision"] != "tool-error" || m["capability"] != id || m["auditId"] == "" {
				t.Errorf("%s: %s", id, show(res))
				continue
			}
			tx := texts(res)
			if len(tx) < 3 || !strings.HasPrefix(tx[0], "spear-capability: tool-error: ") || !strings.Contains(tx[1], "External content from capability "+id) {
				t.Errorf("%s: texts %q", id, tx)
			}
			lineOf(t, res, "tool-error")
			want := map[string]string{"p/fail": "it broke", "p/rpcfail": "boom"}[id]
			if !strings.Contains(strings.Join(tx[2:], "\n"), want) {
				t.Errorf("%s: the provider's text %q is not framed: %q", id, want, tx)
			}
			fx.want(t, fmt.Sprintf("capability_invoked,face=mcp,phase=outcome,code=tool-error,audit_id=%s", m["auditId"]))
		}
	})

	t.Run("invalid-output", func(t *testing.T) {
		res := f.invoke(t, "p/badout", map[string]any{})
		m := sc(t, res)
		if !res.IsError || m["code"] != "invalid-output" || m["decision"] != "invalid-output" {
			t.Fatalf("p/badout: %s", show(res))
		}
		lineOf(t, res, "invalid-output")
		fx.want(t, fmt.Sprintf("capability_invoked,face=mcp,phase=outcome,code=invalid-output,audit_id=%s", m["auditId"]))
	})

	t.Run("timeout", func(t *testing.T) {
		if _, ok := f.tools(t)["slow__hang"]; !ok {
			t.Fatal("slow__hang is not listed")
		}
		f.awaitChanged(t) // the direct tools registered
		res := f.invoke(t, "slow/hang", map[string]any{})
		m := sc(t, res)
		if !res.IsError || m["code"] != "timeout" || m["decision"] != "timeout" {
			t.Fatalf("slow/hang: %s", show(res))
		}
		lineOf(t, res, "timeout")
		// the shell's line: the provider is left out for the rest of the turn
		if msg := m["message"].(string); msg != "slow/hang did not answer within 2s; provider slow is unavailable for the rest of this turn" {
			t.Errorf("timeout's message %q", msg)
		}
		// a provider left out by a timeout leaves the face's tools: the client is told
		f.awaitChanged(t)
		refused(t, f.invoke(t, "slow/hang", map[string]any{}), "unavailable", "slow")
		if _, ok := f.tools(t)["slow__hang"]; ok {
			t.Error("slow__hang is still listed")
		}
		refused(t, f.call(t, "slow__hang", map[string]any{}), "unavailable", "slow")
		fx.want(t, fmt.Sprintf("capability_invoked,face=mcp,phase=outcome,code=timeout,audit_id=%s", m["auditId"]))
		// on timeout notifications/cancelled is sent (SPEC 6)
		fx.awaitCall(t, "slow.record", "cancelled")
	})

	t.Run("interrupted", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := f.s.CallTool(ctx, &mcp.CallToolParams{Name: "spear_invoke", Arguments: map[string]any{"id": "p/wait", "arguments": map[string]any{}}})
			done <- err
		}()
		fx.awaitCall(t, "p.record", "wait")
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("a cancelled call returned %v", err)
		}
		// the face records the interruption and passes notifications/cancelled on
		fx.awaitRecord(t, "capability_invoked,face=mcp,phase=outcome,code=interrupted,capability=p/wait")
		fx.awaitRecord(t, "interrupted,face=mcp,capability=p/wait")
		fx.awaitCall(t, "p.record", "cancelled")
		// and the session goes on
		ok(t, fx, f.invoke(t, "p/echo", map[string]any{"message": "after"}), "p/echo")
	})

	t.Run("every record is the face's", func(t *testing.T) {
		for _, m := range fx.records(t) {
			ev, _ := m["event"].(string)
			if strings.HasPrefix(ev, "keeper_") || ev == "provider_failed" && m["face"] == nil {
				continue // the keeper's own records
			}
			if m["face"] != "mcp" {
				t.Errorf("a record without face mcp: %v", m)
			}
		}
	})
}

// lineOf checks a call's refusal that went to the provider: its first text is the shell's line
// with a reason, the same as structuredContent's message.
func lineOf(t *testing.T, res *mcp.CallToolResult, code string) {
	t.Helper()
	m := sc(t, res)
	msg, _ := m["message"].(string)
	if tx := texts(res); msg == "" || len(tx) == 0 || tx[0] != "spear-capability: "+code+": "+msg {
		t.Errorf("%s: message %q, texts %q", code, msg, tx)
	}
}

func countPrefix(recs []map[string]any, prefix string) int {
	n := 0
	for _, m := range recs {
		if r, _ := m["reason"].(string); strings.HasPrefix(r, prefix) {
			n++
		}
	}
	return n
}

// TestFaceNoCapabilities: without a manifest every call answers no-capabilities, and nothing
// is recorded (there is no turn).
func TestFaceNoCapabilities(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, refusalCaps, nil, refusalFiles)
	f := fx.startFace(t, "SPEAR_AUDIT_FILE="+fx.audit, "SPEAR_TURN_MANIFEST=")
	for _, c := range []struct {
		tool string
		args any
	}{
		{"spear_search", map[string]any{"query": "echo"}},
		{"spear_describe", map[string]any{"ids": []string{"p/echo"}}},
		{"spear_invoke", map[string]any{"id": "p/echo", "arguments": map[string]any{}}},
		{"spear_preflight", map[string]any{"id": "p/echo"}},
	} {
		refused(t, f.call(t, c.tool, c.args), "no-capabilities", "no turn manifest")
	}
	if tl := f.tools(t); len(tl) != 5 {
		t.Errorf("tools/list without a turn: %v", keys(tl))
	}
	if recs := fx.records(t); len(recs) != 0 {
		t.Errorf("records without a turn:\n%s", dumpRecords(recs))
	}
	if n := len(testkit.LivePids(fx.dir)); n != 0 {
		t.Errorf("%d processes started without a turn", n)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestFacePreflight: spear_preflight's verdict is the decision of the invoke that follows it.
func TestFacePreflight(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, refusalCaps, map[string]any{}, refusalFiles)
	f := fx.startFace(t)
	cases := []struct {
		id   string
		args any
		want string
	}{
		{"p/echo", map[string]any{"message": "x"}, "ok"},
		{"p/echo", map[string]any{"message": 1}, "invalid-arguments"},
		{"p/put", map[string]any{"message": "x"}, "write-refused"},
		{"nope/x", map[string]any{}, "unknown-capability"},
		{"p/nope", map[string]any{}, "unknown-capability"},
		{"w/put", map[string]any{"message": "x"}, "not-confirmed"},
		{"down/x", map[string]any{}, "unavailable"},
	}
	for _, c := range cases {
		before := len(fx.calls(t, "p.record"))
		pre := f.call(t, "spear_preflight", map[string]any{"id": c.id, "arguments": c.args})
		pm := sc(t, pre)
		if pm["decision"] != c.want || pre.IsError {
			t.Errorf("preflight %s: %s, want decision %s", c.id, show(pre), c.want)
		}
		if after := len(fx.calls(t, "p.record")); after != before {
			t.Errorf("preflight %s called the provider", c.id)
		}
		rec := "capability_preflighted,face=mcp,capability=" + c.id + ",decision=" + c.want
		if c.want != "ok" {
			rec += ",code=" + c.want
		}
		fx.want(t, rec)
		inv := f.invoke(t, c.id, c.args)
		im := sc(t, inv)
		got := im["decision"]
		if got == nil {
			got = im["code"]
		}
		if got != c.want {
			t.Errorf("%s: preflight said %s, invoke answered %s", c.id, c.want, show(inv))
		}
		if c.want != "ok" && im["message"] != pm["message"] {
			t.Errorf("%s: preflight's reason %q, invoke's %q", c.id, pm["message"], im["message"])
		}
	}
	// needs-confirmation: the approver would be asked (it is not, by the preflight)
	fx.setManifest(t, map[string]any{"approver": []string{filepath.Join(fx.dir, "approve.sh")}})
	fx.write(t, "approve.sh", "#!/bin/sh\necho asked >> $WORK/approver.log\nexit 0\n")
	if err := os.Chmod(filepath.Join(fx.dir, "approve.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	pre := f.call(t, "spear_preflight", map[string]any{"id": "w/put", "arguments": map[string]any{"message": "x"}})
	if sc(t, pre)["decision"] != "needs-confirmation" {
		t.Errorf("preflight w/put with an approver: %s", show(pre))
	}
	if _, err := os.Stat(filepath.Join(fx.dir, "approver.log")); err == nil {
		t.Error("the preflight asked the approver")
	}
	ok(t, fx, f.invoke(t, "w/put", map[string]any{"message": "x"}), "w/put")
	if b, _ := os.ReadFile(filepath.Join(fx.dir, "approver.log")); string(b) != "asked\n" {
		t.Errorf("the approver was asked %q", b)
	}
	fx.want(t, "capability_preflighted,face=mcp,capability=w/put,decision=needs-confirmation",
		"capability_invoked,face=mcp,phase=intent,capability=w/put,approval=approved")
}

// TestFaceApproverDenies: an approver that denies is not-confirmed.
func TestFaceApproverDenies(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, refusalCaps, map[string]any{"approver": []string{"/bin/false"}}, refusalFiles)
	f := fx.startFace(t)
	refused(t, f.invoke(t, "w/put", map[string]any{"message": "x"}), "not-confirmed", "not confirmed")
	fx.want(t, "capability_refused,face=mcp,code=not-confirmed,capability=w/put")
	if c := fx.calls(t, "w.record"); len(c) != 0 {
		t.Errorf("a call not confirmed reached the provider: %v", c)
	}
}

// The index-mode family: nine tools of x (more than 8 are never shown whole).
func indexFiles() map[string]string {
	var tools []string
	for i := range 9 {
		tools = append(tools, fmt.Sprintf(`{"name": "t%d", "description": "Tool number %d.", "inputSchema": {"type": "object"}, "behavior": {"echo": true}}`, i, i))
	}
	return map[string]string{"x.json": `{"record": "$WORK/x.record", "tools": [` + strings.Join(tools, ",") + `]}`}
}

const indexCaps = `{"providers": [{"id": "x", "command": ["$FAKEPROVIDER", "$WORK/x.json"], "scope": "global", "read": ["t0","t1","t2","t3","t4","t5","t6","t7","t8"]}]}`

// TestFaceIndexMode: a family of more than 8 is listed only through the five tools, and a
// capability must be described before it is invoked (not-described); a new turn asks again.
func TestFaceIndexMode(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, indexCaps, map[string]any{}, indexFiles())
	f := fx.startFace(t)
	if tl := f.tools(t); !slices.Equal(keys(tl), []string{"spear_describe", "spear_explain", "spear_invoke", "spear_preflight", "spear_search"}) {
		t.Errorf("tools/list in index mode: %v", keys(tl))
	}
	fx.want(t, "capability_index_exposed,face=mcp,mode=index,via=mcp,count=9")
	pre := f.call(t, "spear_preflight", map[string]any{"id": "x/t3"})
	if sc(t, pre)["decision"] != "not-described" {
		t.Errorf("preflight before describe: %s", show(pre))
	}
	refused(t, f.invoke(t, "x/t3", map[string]any{}), "not-described", "must be described in this turn")
	fx.want(t, "capability_refused,face=mcp,code=not-described,capability=x/t3")
	if c := fx.calls(t, "x.record"); len(c) != 0 {
		t.Errorf("calls reached the provider: %v", c)
	}
	// search is a listing, not a description
	res := f.call(t, "spear_search", map[string]any{"query": "number", "limit": 2})
	m := sc(t, res)
	if res.IsError || m["admitted"] != 9.0 || len(m["results"].([]any)) != 2 || m["nextCursor"] == nil {
		t.Fatalf("search: %s", show(res))
	}
	next := f.call(t, "spear_search", map[string]any{"query": "number", "limit": 2, "cursor": m["nextCursor"]})
	if next.IsError || sc(t, next)["results"].([]any)[0].(map[string]any)["id"] == m["results"].([]any)[0].(map[string]any)["id"] {
		t.Errorf("next page: %s", show(next))
	}
	fx.want(t, "capability_searched,face=mcp")
	refused(t, f.invoke(t, "x/t3", map[string]any{}), "not-described", "must be described")
	// described (several at once), then invocable
	d := f.call(t, "spear_describe", map[string]any{"ids": []string{"x/t3", "x/t4"}})
	if d.IsError || len(sc(t, d)["items"].([]any)) != 2 {
		t.Fatalf("describe: %s", show(d))
	}
	fx.want(t, "capability_described,face=mcp,capability=x/t3", "capability_described,face=mcp,capability=x/t4")
	if pre := f.call(t, "spear_preflight", map[string]any{"id": "x/t3"}); sc(t, pre)["decision"] != "ok" {
		t.Errorf("preflight after describe: %s", show(pre))
	}
	ok(t, fx, f.invoke(t, "x/t3", map[string]any{}), "x/t3")
	ok(t, fx, f.invoke(t, "x/t4", map[string]any{}), "x/t4")

	// a new turn: a new turn state, list_changed, described anew
	f.drainChanged()
	fx.setManifest(t, map[string]any{"turn": "t2"})
	refused(t, f.invoke(t, "x/t3", map[string]any{}), "not-described", "must be described")
	f.awaitChanged(t)
	fx.want(t, "turn_started,face=mcp,turn=t2", "capability_refused,face=mcp,turn=t2,code=not-described,capability=x/t3")
}

// TestFaceDefinitionChanged: a provider that changes a tool's definition mid-turn (and says so
// with notifications/tools/list_changed) gets definition-changed at the next call, before the
// call is sent.
func TestFaceDefinitionChanged(t *testing.T) {
	t.Parallel()
	const tools = `{"reload": true, "record": "$WORK/ch.record", "tools": [
  {"name": "echo", "description": "%s", "inputSchema": {"type": "object"}, "behavior": {"echo": true}},
  {"name": "change", "description": "Announce a change.", "inputSchema": {"type": "object"}, "behavior": {"listChanged": true, "text": ["changed"]}}
]}`
	fx := newFixture(t, `{"providers": [{"id": "ch", "command": ["$FAKEPROVIDER", "$WORK/ch.json"], "scope": "global", "read": ["echo", "change"]}]}`,
		map[string]any{}, map[string]string{"ch.json": fmt.Sprintf(tools, "Echo.")})
	f := fx.startFace(t)
	ok(t, fx, f.invoke(t, "ch/echo", map[string]any{}), "ch/echo")
	fx.write(t, "ch.json", fmt.Sprintf(tools, "Echo, but otherwise."))
	ok(t, fx, f.invoke(t, "ch/change", map[string]any{}), "ch/change")
	refused(t, f.invoke(t, "ch/echo", map[string]any{}), "definition-changed", "ch/echo: the tool's definition changed")
	fx.want(t, "capability_refused,face=mcp,code=definition-changed,capability=ch/echo")
	if c := fx.calls(t, "ch.record"); !slices.Equal(c, []string{"echo", "change"}) {
		t.Errorf("calls at the provider %v: the refused call must not be sent", c)
	}
	pre := f.call(t, "spear_preflight", map[string]any{"id": "ch/echo"})
	if sc(t, pre)["decision"] != "definition-changed" {
		t.Errorf("preflight after the change: %s", show(pre))
	}
}

// The whole family of "notes": direct tools, but for two ids that map to one name and a name
// over 50 characters; crash makes the provider leave the turn.
var longTool = strings.Repeat("l", 45)

const notesCaps = `{"providers": [{"id": "notes", "command": ["$FAKEPROVIDER", "$WORK/notes.json"], "scope": "global", "tasks": ["implementation", "general"],
  "read": ["get", "a.b", "a_b", "` + "LONG" + `", "crash"], "write": "allow"}]}`

var notesFiles = map[string]string{"notes.json": `{"record": "$WORK/notes.record", "tools": [
  {"name": "get", "description": "Get a note.", "inputSchema": ` + echoSchema + `, "behavior": {"echo": true, "structured": {"note": "n1"}}},
  {"name": "put", "description": "Put a note.", "inputSchema": ` + echoSchema + `, "behavior": {"echo": true}},
  {"name": "a.b", "description": "Dotted.", "inputSchema": {"type": "object"}, "behavior": {"text": ["dotted"]}},
  {"name": "a_b", "description": "Underscored.", "inputSchema": {"type": "object"}, "behavior": {"text": ["underscored"]}},
  {"name": "LONG", "description": "A long name.", "inputSchema": {"type": "object"}, "behavior": {"text": ["long"]}},
  {"name": "crash", "description": "Crash.", "inputSchema": {"type": "object"}, "behavior": {"crash": 3}}
]}`}

func notesFixture(t *testing.T, manifest map[string]any) *fixture {
	files := map[string]string{}
	for k, v := range notesFiles {
		files[k] = strings.ReplaceAll(v, "LONG", longTool)
	}
	return newFixture(t, strings.ReplaceAll(notesCaps, "LONG", longTool), manifest, files)
}

// TestFaceDirectTools: a family shown whole is also listed one MCP tool per capability
// (notes__get), with readOnlyHint from READ, no outputSchema; two ids of one name and a name
// over 50 characters are not direct tools, and spear_invoke reaches them.
func TestFaceDirectTools(t *testing.T) {
	t.Parallel()
	fx := notesFixture(t, map[string]any{})
	f := fx.startFace(t)
	tl := f.tools(t)
	want := []string{"notes__crash", "notes__get", "notes__put", "spear_describe", "spear_explain", "spear_invoke", "spear_preflight", "spear_search"}
	if !slices.Equal(keys(tl), want) {
		t.Fatalf("tools/list %v, want %v", keys(tl), want)
	}
	fx.want(t, "capability_index_exposed,face=mcp,mode=whole,via=mcp,count=6")
	if a := tl["notes__get"].Annotations; a == nil || !a.ReadOnlyHint {
		t.Errorf("notes__get (READ) annotations %+v", a)
	}
	if a := tl["notes__put"].Annotations; a == nil || a.ReadOnlyHint {
		t.Errorf("notes__put (WRITE) annotations %+v", a)
	}
	for name, tool := range tl {
		if tool.OutputSchema != nil {
			t.Errorf("%s declares an outputSchema", name)
		}
	}
	if d := tl["notes__get"].Description; !strings.Contains(d, "Get a note.") || !strings.Contains(d, "READ capability notes/get") {
		t.Errorf("notes__get description %q", d)
	}
	res := f.call(t, "notes__get", map[string]any{"message": "hi"})
	m := ok(t, fx, res, "notes/get")
	if r, _ := m["result"].(map[string]any); r["note"] != "n1" {
		t.Errorf("the provider's structuredContent is not under result: %s", show(res))
	}
	if tx := texts(res); len(tx) != 2 || tx[1] != `{"message":"hi"}` {
		t.Errorf("texts %q", tx)
	}
	ok(t, fx, f.call(t, "notes__put", map[string]any{"message": "hi"}), "notes/put")
	refused(t, f.call(t, "notes__get", map[string]any{"message": 1}), "invalid-arguments", "notes/get")
	// the ones that are not direct tools, through spear_invoke
	for id, text := range map[string]string{"notes/a.b": "dotted", "notes/a_b": "underscored", "notes/" + longTool: "long"} {
		res := f.invoke(t, id, map[string]any{})
		ok(t, fx, res, id)
		if tx := texts(res); len(tx) != 2 || tx[1] != text {
			t.Errorf("%s: texts %q", id, tx)
		}
	}
	// an unknown tool is the protocol's error
	_, err := f.s.CallTool(context.Background(), &mcp.CallToolParams{Name: "notes__a_b", Arguments: map[string]any{}})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(werr.Message, "unknown tool") {
		t.Errorf("an unknown tool: %v (%T)", err, err)
	}
}

// TestFaceProviderLeaves: a provider that leaves the turn mid-turn (its process ends during a
// call) answers unavailable to its direct tools and to spear_invoke, and the face tells the
// client its tools changed (notifications/tools/list_changed); tools/list no longer lists them.
func TestFaceProviderLeaves(t *testing.T) {
	t.Parallel()
	fx := notesFixture(t, map[string]any{})
	f := fx.startFace(t)
	if _, ok := f.tools(t)["notes__get"]; !ok {
		t.Fatal("notes__get is not listed")
	}
	// registering the direct tools at the first tools/list is one change (the SDK sends it)
	f.awaitChanged(t)
	ok(t, fx, f.call(t, "notes__get", map[string]any{"message": "hi"}), "notes/get")
	f.drainChanged()
	res := f.call(t, "notes__crash", map[string]any{})
	if m := sc(t, res); !res.IsError || m["code"] != "unavailable" {
		t.Fatalf("notes__crash: %s", show(res))
	}
	lineOf(t, res, "unavailable")
	if msg := sc(t, res)["message"].(string); !strings.HasPrefix(msg, "notes/crash: provider notes is unavailable for the rest of this turn: ") {
		t.Errorf("the crash's message %q is not the shell's", msg)
	}
	fx.want(t, "provider_failed,provider=notes")
	refused(t, f.call(t, "notes__get", map[string]any{"message": "hi"}), "unavailable", "notes")
	refused(t, f.invoke(t, "notes/get", map[string]any{"message": "hi"}), "unavailable", "notes")
	refused(t, f.invoke(t, "notes/a.b", map[string]any{}), "unavailable", "notes")
	if n := fx.count(t, "capability_refused,face=mcp,code=unavailable"); n != 3 {
		t.Errorf("%d unavailable refusals recorded, want 3", n)
	}
	f.awaitChanged(t)
	if tl := f.tools(t); len(tl) != 5 {
		t.Errorf("tools/list after the provider left: %v", keys(tl))
	}
	// a client that calls the direct tool still is answered as its id would be
	refused(t, f.call(t, "notes__get", map[string]any{"message": "hi"}), "unavailable", "notes")
	// the family is fixed for the turn: a search still counts it, and says the provider is unavailable
	s := f.call(t, "spear_search", map[string]any{"query": "note"})
	if s.IsError || !strings.Contains(strings.Join(texts(s), ""), "notes is unavailable") {
		t.Errorf("search after the provider left: %s", show(s))
	}
}

// TestFaceManifestChanges: the face reads the manifest and the configuration again when their
// content changes: a new scope takes effect at the next call, and a new turn state (a new turn
// id included) is told to the client with notifications/tools/list_changed.
func TestFaceManifestChanges(t *testing.T) {
	t.Parallel()
	fx := notesFixture(t, map[string]any{})
	f := fx.startFace(t)
	if _, ok := f.tools(t)["notes__put"]; !ok {
		t.Fatal("notes__put is not listed")
	}
	f.awaitChanged(t) // the direct tools registered
	ok(t, fx, f.call(t, "notes__put", map[string]any{"message": "one"}), "notes/put")

	// the same turn, made general: READ capabilities only, at the next call
	fx.setManifest(t, map[string]any{"task": "general"})
	refused(t, f.call(t, "notes__put", map[string]any{"message": "two"}), "unknown-capability", "notes/put")
	fx.want(t, "capability_refused,face=mcp,turn=t1,code=unknown-capability,capability=notes/put")
	f.awaitChanged(t)
	tl := f.tools(t)
	if _, ok := tl["notes__put"]; ok {
		t.Errorf("notes__put is still listed in a general turn: %v", keys(tl))
	}
	if _, ok := tl["notes__get"]; !ok {
		t.Errorf("notes__get is not listed in a general turn: %v", keys(tl))
	}
	ok(t, fx, f.call(t, "notes__get", map[string]any{"message": "three"}), "notes/get")

	// the configuration narrows the provider's scope: nothing is offered, at the next call
	f.drainChanged()
	fx.write(t, "home/capabilities.json", strings.ReplaceAll(strings.ReplaceAll(notesCaps, "LONG", longTool), `"global"`, `"corpus other"`))
	refused(t, f.call(t, "notes__get", map[string]any{"message": "four"}), "no-capabilities", "no external capabilities are offered")
	f.awaitChanged(t)
	if tl := f.tools(t); len(tl) != 5 {
		t.Errorf("tools/list with nothing offered: %v", keys(tl))
	}
	fx.write(t, "home/capabilities.json", strings.ReplaceAll(notesCaps, "LONG", longTool))

	// a new turn: a new turn state, recorded as such
	f.drainChanged()
	fx.setManifest(t, map[string]any{"turn": "t2"})
	ok(t, fx, f.invoke(t, "notes/put", map[string]any{"message": "five"}), "notes/put")
	f.awaitChanged(t)
	fx.want(t, "turn_started,face=mcp,turn=t2", "capability_family_selected,face=mcp,turn=t2",
		"capability_invoked,face=mcp,turn=t2,phase=outcome,code=ok,capability=notes/put")
	if c := fx.calls(t, "notes.record"); !slices.Equal(c, []string{"put", "get", "put"}) {
		t.Errorf("calls at the provider: %v", c)
	}
}

// TestFaceEndTurn: after spear-shell --end-turn every call of the face is no-capabilities "the
// turn has ended", and starts nothing; the providers are stopped, the keeper's by the keeper
// and those the face runs itself (keep_providers 0) by the face.
func TestFaceEndTurn(t *testing.T) {
	t.Parallel()
	for _, keep := range []int{300, 0} {
		t.Run(fmt.Sprintf("keep_providers=%d", keep), func(t *testing.T) {
			t.Parallel()
			fx := newFixture(t, refusalCaps, map[string]any{"keep_providers": keep}, refusalFiles)
			f := fx.startFace(t)
			if _, ok := f.tools(t)["p__echo"]; !ok {
				t.Fatal("p__echo is not listed")
			}
			ok(t, fx, f.invoke(t, "p/echo", map[string]any{"message": "x"}), "p/echo")
			pjson := filepath.Join(fx.dir, "p.json")
			if n := len(testkit.LivePids(pjson)); n < 1 {
				t.Fatalf("%d provider processes", n)
			}
			if keep > 0 && len(testkit.LivePids("--spear-keeper", fx.dir)) != 1 {
				t.Fatal("no keeper")
			}
			if o, e, code := fx.shell(t, "--end-turn"); code != 0 {
				t.Fatalf("--end-turn: exit %d\n%s%s", code, o, e)
			}
			fx.want(t, "turn_ended")
			for _, c := range []struct {
				tool string
				args any
			}{
				{"spear_invoke", map[string]any{"id": "p/echo", "arguments": map[string]any{}}},
				{"p__echo", map[string]any{}},
				{"spear_search", map[string]any{"query": "echo"}},
				{"spear_describe", map[string]any{"ids": []string{"p/echo"}}},
				{"spear_preflight", map[string]any{"id": "p/echo"}},
			} {
				res := f.call(t, c.tool, c.args)
				if c.tool == "spear_describe" {
					if !res.IsError || !strings.Contains(show(res), "the turn has ended") {
						t.Errorf("describe after --end-turn: %s", show(res))
					}
					continue
				}
				refused(t, res, "no-capabilities", "the turn has ended")
			}
			fx.want(t, "capability_refused,face=mcp,code=no-capabilities,reason=the turn has ended")
			if !testkit.AwaitGone(pjson) {
				t.Errorf("providers still run after --end-turn: %v", testkit.LivePids(pjson))
			}
			if !testkit.AwaitGone("--spear-keeper", fx.dir) {
				t.Error("the keeper still runs after --end-turn")
			}
			// and nothing starts again
			refused(t, f.invoke(t, "p/echo", map[string]any{}), "no-capabilities", "the turn has ended")
			if n := len(testkit.LivePids(fx.dir)); n != 0 {
				t.Errorf("%d processes after a call of an ended turn: %v", n, testkit.LivePids(fx.dir))
			}
			if tl := f.tools(t); len(tl) != 5 {
				t.Errorf("tools/list of an ended turn: %v", keys(tl))
			}
			if n := fx.count(t, "keeper_started"); n != map[int]int{300: 1, 0: 0}[keep] {
				t.Errorf("%d keepers started", n)
			}
			// a new turn named by the manifest is served again
			fx.setManifest(t, map[string]any{"turn": "t2", "keep_providers": keep})
			ok(t, fx, f.invoke(t, "p/echo", map[string]any{"message": "again"}), "p/echo")
		})
	}
}

// TestFacePrompts: the prompt directories' *.md files are the face's prompts; a broken file
// (front matter never closed) is left out with one line on stderr and a prompt_skipped record,
// the rest are served, and prompts/get returns a prompt's text.
func TestFacePrompts(t *testing.T) {
	t.Parallel()
	caps := strings.TrimSuffix(strings.TrimSpace(refusalCaps), "}") + `, "prompts": {"paths": ["$WORK/prompts", "$WORK/more"]}}`
	fx := newFixture(t, caps, map[string]any{}, map[string]string{
		"p.json":            refusalFiles["p.json"],
		"prompts/review.md": "---\ndescription: Review a change\n---\nReview the change for bugs.\n",
		"prompts/plain.md":  "Just the text.\n",
		"prompts/broken.md": "---\ndescription: never closed\ntitle: the body never comes\n",
		"prompts/notes.txt": "not a prompt\n",
		"more/quoted.md":    "---\n# a comment\ndescription: \"Quoted: yes\"\n---\nQuoted body.\n",
	})
	f := fx.startFace(t)
	res, err := f.s.ListPrompts(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	var names []string
	for _, p := range res.Prompts {
		got[p.Name] = p.Description
		names = append(names, p.Name)
	}
	if !slices.Equal(names, []string{"plain", "quoted", "review"}) || got["review"] != "Review a change" || got["quoted"] != "Quoted: yes" {
		t.Errorf("prompts %v", got)
	}
	broken := filepath.Join(fx.dir, "prompts", "broken.md")
	line := "spear-mcp: prompt " + broken + " left out: front matter is not closed by ---\n"
	if !testkit.Poll(func() bool { return strings.Contains(f.stderr.String(), line) }) {
		t.Fatalf("stderr %q, want %q", f.stderr.String(), line)
	}
	if s := f.stderr.String(); s != line {
		t.Errorf("stderr %q, want the one line %q", s, line)
	}
	fx.want(t, "prompt_skipped,face=mcp,file="+broken+",reason=front matter is not closed by ---")
	if n := fx.count(t, "prompt_skipped"); n != 1 {
		t.Errorf("%d prompt_skipped records, want 1", n)
	}
	for name, text := range map[string]string{"review": "Review the change for bugs.\n", "plain": "Just the text.\n", "quoted": "Quoted body.\n"} {
		g, err := f.s.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: name})
		if err != nil {
			t.Fatalf("prompts/get %s: %v", name, err)
		}
		if len(g.Messages) != 1 || g.Messages[0].Role != "user" || g.Messages[0].Content.(*mcp.TextContent).Text != text {
			t.Errorf("prompts/get %s: %s", name, mustJSON(g))
		}
	}
	for _, name := range []string{"broken", "notes", "nope"} {
		if _, err := f.s.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: name}); err == nil {
			t.Errorf("prompts/get %s answered", name)
		}
	}
	// read again at each list: a new file is served, a fixed one too
	fx.write(t, "prompts/broken.md", "---\ndescription: fixed\n---\nThe body.\n")
	fx.write(t, "more/new.md", "New.\n")
	res, err = f.s.ListPrompts(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names = nil
	for _, p := range res.Prompts {
		names = append(names, p.Name)
	}
	if !slices.Equal(names, []string{"broken", "new", "plain", "quoted", "review"}) {
		t.Errorf("prompts after the changes: %v", names)
	}
	// prompts are not decisions: no listing or invocation was recorded for them
	for _, m := range fx.records(t) {
		if ev := m["event"]; ev != "prompt_skipped" && ev != "turn_started" && ev != "provider_registered" && ev != "keeper_started" {
			t.Errorf("record %v", m)
		}
	}
}

// TestFaceSharesProviders: two faces and a shell's -c answers of one turn share one provider
// process, through the turn's one keeper.
func TestFaceSharesProviders(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, refusalCaps, map[string]any{}, refusalFiles)
	a := fx.startFace(t)
	b := fx.startFace(t)
	ok(t, fx, a.invoke(t, "p/echo", map[string]any{"message": "a"}), "p/echo")
	ok(t, fx, b.invoke(t, "p/echo", map[string]any{"message": "b"}), "p/echo")
	b.tools(t)
	o, e, code := fx.shell(t, "-c", `spear-capability invoke p/echo '{"message":"shell"}'`)
	if code != 0 || !strings.Contains(o, `{"message":"shell"}`) {
		t.Fatalf("the shell's answer: exit %d\n%s%s", code, o, e)
	}
	ok(t, fx, a.invoke(t, "p/echo", map[string]any{"message": "a2"}), "p/echo")
	ok(t, fx, b.call(t, "p__echo", map[string]any{"message": "b2"}), "p/echo")
	pjson := filepath.Join(fx.dir, "p.json")
	if pids := testkit.LivePids(fakeProvider, pjson); len(pids) != 1 {
		t.Errorf("%d processes of provider p, want 1: %v", len(pids), pids)
	}
	if pids := testkit.LivePids("--spear-keeper", fx.dir); len(pids) != 1 {
		t.Errorf("%d keepers, want 1: %v", len(pids), pids)
	}
	if n := fx.count(t, "keeper_started"); n != 1 {
		t.Errorf("%d keeper_started records, want 1", n)
	}
	if n := fx.count(t, "keeper_unavailable"); n != 0 {
		t.Errorf("%d keeper_unavailable records", n)
	}
	if c := fx.calls(t, "p.record"); !slices.Equal(c, []string{"echo", "echo", "echo", "echo", "echo"}) {
		t.Errorf("calls at the provider: %v", c)
	}
	// the shell's records are not the face's
	fx.want(t, "capability_invoked,phase=outcome,code=ok")
	shell := 0
	for _, m := range fx.records(t) {
		if m["event"] == "capability_invoked" && m["face"] == nil {
			shell++
		}
	}
	if shell != 2 {
		t.Errorf("%d capability_invoked records without face, want the shell's 2", shell)
	}
}

// TestFaceConcurrentCalls: calls are served concurrently: one that waits at its provider holds
// up none of the others (more of them than the face's pool of turns), and each is recorded as
// its own decision.
func TestFaceConcurrentCalls(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, refusalCaps, map[string]any{}, refusalFiles)
	f := fx.startFace(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	waited := make(chan error, 1)
	go func() {
		_, err := f.s.CallTool(ctx, &mcp.CallToolParams{Name: "spear_invoke", Arguments: map[string]any{"id": "p/wait", "arguments": map[string]any{}}})
		waited <- err
	}()
	fx.awaitCall(t, "p.record", "wait")
	const n = 12
	results := make(chan *mcp.CallToolResult, n)
	errs := make(chan error, n)
	for i := range n {
		go func() {
			var args any = map[string]any{"id": "p/echo", "arguments": map[string]any{"message": fmt.Sprint(i)}}
			name := "spear_invoke"
			switch i % 3 {
			case 1:
				name, args = "spear_search", map[string]any{"query": "echo"}
			case 2:
				name, args = "spear_preflight", map[string]any{"id": "p/put"}
			}
			res, err := f.s.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
			results <- res
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
		if res := <-results; res == nil || res.IsError {
			t.Errorf("a concurrent call: %s", show(res))
		}
	}
	if got := fx.count(t, "capability_invoked,face=mcp,phase=outcome,code=ok,capability=p/echo"); got != n/3 {
		t.Errorf("%d invocations recorded, want %d", got, n/3)
	}
	if got := fx.count(t, "capability_searched,face=mcp"); got != n/3 {
		t.Errorf("%d searches recorded, want %d", got, n/3)
	}
	if got := fx.count(t, "capability_preflighted,face=mcp,decision=write-refused"); got != n/3 {
		t.Errorf("%d preflights recorded, want %d", got, n/3)
	}
	cancel()
	if err := <-waited; !errors.Is(err, context.Canceled) {
		t.Errorf("the waiting call: %v", err)
	}
	fx.awaitCall(t, "p.record", "cancelled")
}

// TestFaceBoundary (bwrap): the face derives the isolation facts and the writable roots as
// spear-shell does: the turn is recorded isolated, a prompt directory inside the workspace and
// an approver there are not trusted, the rest is served.
func TestFaceBoundary(t *testing.T) {
	t.Parallel()
	if err := exec.Command("bwrap", "--ro-bind", "/", "/", "--unshare-pid", "--dev", "/dev", "--proc", "/proc", "true").Run(); err != nil {
		if os.Getenv("SPEAR_REQUIRE_BWRAP") == "1" {
			t.Fatalf("bwrap is required but does not work: %v", err)
		}
		t.Skipf("bwrap does not work here: %v", err)
	}
	caps := strings.TrimSuffix(strings.TrimSpace(refusalCaps), "}") + `, "prompts": {"paths": ["$WORK/prompts", "$WORK/ws/prompts"]}}`
	fx := newFixture(t, caps, map[string]any{"approver": []string{"$WORK/ws/approve.sh"}}, map[string]string{
		"p.json":               refusalFiles["p.json"],
		"w.json":               refusalFiles["w.json"],
		"prompts/trusted.md":   "Trusted.\n",
		"ws/prompts/agents.md": "Written by the agent.\n",
		"ws/approve.sh":        "#!/bin/sh\nexit 0\n",
	})
	fx.setManifest(t, map[string]any{"approver": []string{filepath.Join(fx.ws, "approve.sh")}})
	if err := os.Chmod(filepath.Join(fx.ws, "approve.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	f := fx.startFace(t, "SPEAR_ISOLATION=bwrap")
	ok(t, fx, f.invoke(t, "p/echo", map[string]any{"message": "x"}), "p/echo")
	fx.want(t, "turn_started,face=mcp,isolated=true")
	refused(t, f.invoke(t, "w/put", map[string]any{"message": "x"}), "not-confirmed", "the approver cannot be asked")
	res, err := f.s.ListPrompts(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Prompts) != 1 || res.Prompts[0].Name != "trusted" {
		t.Errorf("prompts %s", mustJSON(res.Prompts))
	}
	fx.want(t, "prompt_skipped,face=mcp,file="+filepath.Join(fx.ws, "prompts"))
}

// TestFaceProviderStrings: what a provider supplies is cleaned (escapes, bidi controls) in the
// content and in structuredContent, and the configuration's secrets (env and env_file values)
// are redacted from both.
func TestFaceProviderStrings(t *testing.T) {
	t.Parallel()
	const secret, fileSecret = "s3cr3t-t0ken-value", "f1le-s3cr3t-value"
	fx := newFixture(t, `{"providers": [{"id": "h", "command": ["$FAKEPROVIDER", "$WORK/h.json"], "scope": "global",
  "read": ["hostile", "leak", "leakfile", "str"], "env": {"TOKEN": "`+secret+`"}, "env_file": "$WORK/home/h.env"}]}`, map[string]any{}, map[string]string{
		"home/h.env": "FILE_TOKEN=" + fileSecret + "\n",
		"h.json": `{"tools": [
  {"name": "leakfile", "description": "Leak the env_file's.", "inputSchema": {"type": "object"}, "behavior": {"env": "FILE_TOKEN", "environErr": true}},
  {"name": "hostile", "description": "Bad \u001b[31mtext\u202e.", "inputSchema": {"type": "object"},
   "behavior": {"hostile": true, "structured": {"k\u001b[1m": "v\u001b]0;t\u0007\u202e"}}},
  {"name": "leak", "description": "Leak.", "inputSchema": {"type": "object"}, "behavior": {"env": "TOKEN", "structured": {"t": "` + secret + `"}}},
  {"name": "str", "description": "A schema that is not an object's.", "inputSchema": {"type": "string"}, "behavior": {"text": ["str"]}}
]}`})
	if err := os.Chmod(filepath.Join(fx.dir, "home", "h.env"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := fx.startFace(t)
	tl := f.tools(t)
	if _, ok := tl["h__str"]; ok {
		t.Error("h__str, whose inputSchema is not an object's, is a direct tool")
	}
	if d := tl["h__hostile"].Description; strings.ContainsAny(d, "\x1b\u202e") {
		t.Errorf("a direct tool's description is not cleaned: %q", d)
	}
	res := f.call(t, "h__hostile", map[string]any{})
	ok(t, fx, res, "h/hostile")
	if b := string(mustJSON(res)); strings.Contains(b, `\u001b`) || strings.Contains(b, "\u202e") || strings.Contains(b, `\u0007`) || strings.Contains(b, "\u009b") {
		t.Errorf("control characters reach the client: %s", b)
	}
	if r, _ := sc(t, res)["result"].(map[string]any); r["k"] == nil {
		t.Errorf("structured result %v", sc(t, res)["result"])
	}
	res = f.call(t, "h__leak", map[string]any{})
	ok(t, fx, res, "h/leak")
	if b := string(mustJSON(res)); strings.Contains(b, secret) {
		t.Errorf("the secret reaches the client: %s", b)
	}
	res = f.call(t, "h__leakfile", map[string]any{})
	ok(t, fx, res, "h/leakfile")
	if b := string(mustJSON(res)); strings.Contains(b, fileSecret) || !strings.Contains(b, "[REDACTED]") {
		t.Errorf("the env_file's value reaches the client, or never reached the provider: %s", b)
	}
	if b, _ := os.ReadFile(fx.audit); strings.Contains(string(b), secret) || strings.Contains(string(b), fileSecret) {
		t.Error("a secret is in the audit trail")
	}
	d := f.call(t, "spear_describe", map[string]any{"ids": []string{"h/hostile", "h/str"}})
	if b := string(mustJSON(d)); d.IsError || strings.Contains(b, `\u001b`) || strings.Contains(b, "\u202e") {
		t.Errorf("describe: %s", b)
	}
	// reached through spear_invoke only, and answered as the shell answers it
	refused(t, f.invoke(t, "h/str", nil), "invalid-arguments", "h/str: the arguments do not match the tool's inputSchema")
}

// TestFaceOwnNames: initialize's instructions say how to discover; no capability is listed
// under a name starting spear_; search admits only the turn's offer.
func TestFaceOwnNames(t *testing.T) {
	t.Parallel()
	tool := `{"tools": [{"name": "t", "description": "A tool.", "inputSchema": {"type": "object"}, "behavior": {"text": ["%s"]}}]}`
	fx := newFixture(t, `{"providers": [
  {"id": "spear_x", "command": ["$FAKEPROVIDER", "$WORK/a.json"], "scope": "global", "read": ["t"]},
  {"id": "hidden", "command": ["$FAKEPROVIDER", "$WORK/b.json"], "scope": "corpus other", "read": ["t"]}
]}`, map[string]any{}, map[string]string{"a.json": fmt.Sprintf(tool, "a"), "b.json": fmt.Sprintf(tool, "b")})
	f := fx.startFace(t)
	init := f.s.InitializeResult()
	if init == nil || !strings.Contains(init.Instructions, "spear_search") || !strings.Contains(init.Instructions, "spear_describe") ||
		init.Capabilities.Tools == nil || !init.Capabilities.Tools.ListChanged || init.Capabilities.Prompts == nil {
		t.Errorf("initialize: %s", mustJSON(init))
	}
	if tl := f.tools(t); len(tl) != 5 {
		t.Errorf("tools/list %v: spear_x__t is not a direct tool", keys(tl))
	}
	ok(t, fx, f.invoke(t, "spear_x/t", map[string]any{}), "spear_x/t")
	res := f.call(t, "spear_search", map[string]any{"query": "tool"})
	if m := sc(t, res); res.IsError || m["admitted"] != 1.0 || len(m["results"].([]any)) != 1 || strings.Contains(show(res), "hidden") {
		t.Errorf("search: %s", show(res))
	}
	refused(t, f.invoke(t, "hidden/t", map[string]any{}), "unknown-capability", "hidden/t")
	if pids := testkit.LivePids(filepath.Join(fx.dir, "b.json")); len(pids) != 0 {
		t.Errorf("a provider not offered runs: %v", pids)
	}
}

// TestFaceOwnProvidersLeave (keep_providers 0): the face runs the turn's providers itself, one
// set per turn of its pool; a provider that leaves the turn in one of them is out for every
// call after, whichever turn of the pool answers it (SPEC 2.6: for the rest of the turn).
func TestFaceOwnProvidersLeave(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, `{"providers": [{"id": "q", "command": ["$FAKEPROVIDER", "$WORK/q.json"], "scope": "global", "read": ["echo", "hold", "crash"]}]}`,
		map[string]any{"keep_providers": 0}, map[string]string{"q.json": `{"record": "$WORK/q.record", "tools": [
  {"name": "echo", "description": "Echo.", "inputSchema": {"type": "object"}, "behavior": {"echo": true}},
  {"name": "hold", "description": "Answer once released.", "inputSchema": {"type": "object"}, "behavior": {"waitFile": "$WORK/release", "text": ["released"]}},
  {"name": "crash", "description": "Crash.", "inputSchema": {"type": "object"}, "behavior": {"crash": 3}}
]}`})
	f := fx.startFace(t)
	// one call held at its provider keeps one turn of the pool busy...
	held := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := f.s.CallTool(context.Background(), &mcp.CallToolParams{Name: "spear_invoke", Arguments: map[string]any{"id": "q/hold", "arguments": map[string]any{}}})
		if err != nil {
			t.Error(err)
		}
		held <- res
	}()
	fx.awaitCall(t, "q.record", "hold")
	// ...so another turn, with a provider process of its own, answers these
	ok(t, fx, f.invoke(t, "q/echo", map[string]any{}), "q/echo")
	if n := len(testkit.LivePids(filepath.Join(fx.dir, "q.json"))); n != 2 {
		t.Fatalf("%d provider processes, want 2 (one per busy turn)", n)
	}
	refused(t, f.invoke(t, "q/crash", map[string]any{}), "unavailable", "provider q is unavailable for the rest of this turn")
	// the held call ends well, and its turn (whose provider still runs) goes back to the pool
	fx.write(t, "release", "")
	if res := <-held; res == nil || res.IsError {
		t.Fatalf("the held call: %s", show(res))
	}
	for range 3 {
		refused(t, f.invoke(t, "q/echo", map[string]any{}), "unavailable", "q")
	}
	if c := fx.calls(t, "q.record"); !slices.Equal(c, []string{"hold", "echo", "crash"}) {
		t.Errorf("calls at the provider after it left the turn: %v", c)
	}
	if !testkit.AwaitGone(filepath.Join(fx.dir, "q.json")) {
		t.Errorf("copies of a provider out of the turn still run: %v", testkit.LivePids(filepath.Join(fx.dir, "q.json")))
	}
}

// TestFaceProviderLeavesElsewhere: a provider that leaves the turn in another answer (a shell
// -c of the same turn, through the keeper) is gone from the face's next tools/list, and its
// direct tool is still answered unavailable, as its id would be.
func TestFaceProviderLeavesElsewhere(t *testing.T) {
	t.Parallel()
	fx := notesFixture(t, map[string]any{})
	f := fx.startFace(t)
	if _, ok := f.tools(t)["notes__get"]; !ok {
		t.Fatal("notes__get is not listed")
	}
	ok(t, fx, f.call(t, "notes__get", map[string]any{"message": "hi"}), "notes/get")
	if _, e, code := fx.shell(t, "-c", `spear-capability invoke notes/crash '{}'`); code != 4 || !strings.Contains(e, "unavailable") {
		t.Fatalf("the shell's crash: exit %d %s", code, e)
	}
	if tl := f.tools(t); len(tl) != 5 {
		t.Errorf("tools/list after the provider left: %v", keys(tl))
	}
	fx.want(t, "capability_index_exposed,face=mcp,mode=whole,via=mcp,unavailable=[\"notes\"]")
	refused(t, f.call(t, "notes__get", map[string]any{"message": "hi"}), "unavailable", "notes")
	refused(t, f.invoke(t, "notes/get", map[string]any{"message": "hi"}), "unavailable", "notes")
}
