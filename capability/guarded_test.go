package capability

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spear-shell/spear-shell/capability/keeper"
	"github.com/spear-shell/spear-shell/testdata/testkit"
)

// TestFaceInvokeGuardedByItsListing: a long-lived turn (the MCP face's) invokes a kept
// provider's tool on the definition it fetched once, each call guarded by that listing
// (SPEC 12: the keeper compares, the answering process judges). A listing that changed in
// another tool still calls the tool, unchanged; a listing that changed the tool itself is
// definition-changed, recorded as the outcome of the call's intent, never sent, and the next
// answer fetches the definition again.
func TestFaceInvokeGuardedByItsListing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds spear-shell")
	}
	bin := buildShell(t)
	tools := func(echoDesc, otherDesc string) []any {
		other := echoTool("other")
		other["description"] = otherDesc
		echo := echoTool("echo")
		echo["description"] = echoDesc
		return []any{echo, other, obj("name", "announce", "inputSchema", obj("type", "object"),
			"behavior", obj("listChanged", true, "text", []string{"announced"}))}
	}
	f := newFixture(t, obj("keep_providers", 300), provSpec{id: "p",
		entry: obj("read", []string{"echo", "other", "announce"}),
		fake:  obj("reload", true, "tools", tools("Echo.", "Other."))})
	change := func(echoDesc, otherDesc string) {
		f.write(filepath.Join(f.dir, "p.json"), obj("reload", true, "record", f.recordPath(), "tools", tools(echoDesc, otherDesc)))
	}
	s := f.faceSettings(bin)
	tn := NewTurn(s)
	defer endKeptTurn(s, tn)
	ctx := context.Background()
	// Another process of the turn has the provider announce its change, so that the face's
	// turn fetches nothing before its next call.
	announce := func() {
		other := NewTurn(s)
		defer other.Close("test")
		if _, r := other.FaceInvoke(ctx, "p/announce", "{}"); r != nil {
			t.Fatalf("announce: %+v", r)
		}
	}
	invoke := func(id, word string) (*CallOutcome, *Refusal) {
		return tn.FaceInvoke(ctx, id, `{"message":"`+word+`"}`)
	}
	sent := func(word string) bool { return strings.Contains(strings.Join(f.record(), "\n"), word) }

	if o, r := invoke("p/echo", "alpha"); r != nil || o.Code != "" || !sent("alpha") {
		t.Fatalf("first invoke: %+v %+v", o, r)
	}
	change("Echo.", "Other, changed.")
	announce()
	if o, r := invoke("p/echo", "beta"); r != nil || o.Code != "" || !sent("beta") {
		t.Fatalf("after another tool changed: %+v %+v", o, r)
	}
	change("Echo, changed.", "Other, changed.")
	announce()
	o, r := invoke("p/echo", "gamma")
	if r != nil || o == nil || o.Code != CodeDefinitionChanged || sent("gamma") {
		t.Fatalf("after echo changed: %+v %+v, sent %v", o, r, sent("gamma"))
	}
	var intent, outcome bool
	for _, e := range f.events() {
		if e["audit_id"] != o.AuditID {
			continue
		}
		switch {
		case e["phase"] == "intent":
			intent = true
		case e["phase"] == "outcome" && e["code"] == CodeDefinitionChanged && e["sent"] == false:
			outcome = true
		}
	}
	if !intent || !outcome {
		t.Errorf("audit id %s: intent %v, outcome definition-changed not sent %v", o.AuditID, intent, outcome)
	}
	// The next answer fetches echo again and refuses it before any intent, as a -c answer would.
	if o, r := invoke("p/echo", "delta"); r == nil || r.Code != CodeDefinitionChanged || o != nil || sent("delta") {
		t.Errorf("invoke after: %+v %+v", o, r)
	}
	for _, e := range f.events() {
		if e["event"] == "keeper_unavailable" {
			t.Errorf("the keeper was not used: %v", e)
		}
	}
}

// buildShell builds spear-shell, whose keeper mode a face's turn starts (Settings.Self).
func buildShell(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "spear-shell")
	if err := testkit.Build(bin, "./cmd/spear-shell"); err != nil {
		t.Fatal(err)
	}
	return bin
}

// faceSettings are the fixture's settings for an MCP face's turn whose keeper bin runs.
func (f *fixture) faceSettings(bin string) Settings {
	s := f.settings()
	s.Self, s.Face = bin, "mcp"
	s.Environ = []string{"SPEAR_HOME=" + f.home, "PATH=" + os.Getenv("PATH"), "HOME=" + f.dir}
	return s
}

// endKeptTurn ends the turn's keeper and closes tn.
func endKeptTurn(s Settings, tn *Turn) {
	keeper.EndTurn(s.Settings, io.Discard)
	tn.Close("test")
}
