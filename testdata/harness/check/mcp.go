package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/spear-shell/spear-shell/testdata/harness/fakemodel"
)

// The MCP rows (SPEC 13, Tested): each terminal with spear-shell as its shell, as its row above,
// and spear-mcp registered as its MCP server "spear" the way docs/mcp.md says; the fake model
// calls the face's tools by the names the terminal gives them, one per turn, and each step is
// checked for what the terminal handed back to the model and for the decision the audit records.

// mcpServerName is the name every recipe registers spear-mcp under; the terminals' names for its
// tools carry it (mcp__spear__spear_search, mcp_spear_spear_search, namespace mcp__spear).
const mcpServerName = "spear"

// An mcpStep is one call of a tool of the face.
type mcpStep struct {
	name string
	tool string // the face's name for the tool
	args map[string]any
	want []string // words what the terminal handed back must contain
	// object: fields the face's own object (structuredContent) must have, where the terminal
	// hands that object back to the model (Claude Code for a result that is not an error, Codex).
	object map[string]any
	// refusal: an isError result (where the terminal says so).
	refusal bool
	event   string // the one decision the audit must record, "face":"mcp"; "" for none
	code    string // that record's code ("ok" for an invocation's outcome)
}

var mcpSteps = []mcpStep{
	{name: "search", tool: "spear_search", args: map[string]any{"query": "find notes by a word"},
		want: []string{"notes/search_notes"}, object: map[string]any{"admitted": 3.0}, event: "capability_searched"},
	{name: "describe", tool: "spear_describe", args: map[string]any{"ids": []string{"notes/get_note"}},
		want: []string{"notes/get_note", "Get one note by id"}, event: "capability_described"},
	{name: "READ invoke", tool: "spear_invoke",
		args: map[string]any{"id": "notes/search_notes", "arguments": map[string]any{"query": "spear"}},
		want: []string{readResult}, object: map[string]any{"capability": "notes/search_notes", "decision": "ok"},
		event: "capability_invoked", code: "ok"},
	{name: "direct tool", tool: "notes__search_notes", args: map[string]any{"query": "cupboard"},
		want: []string{"n3  Coffee"}, object: map[string]any{"capability": "notes/search_notes", "decision": "ok"},
		event: "capability_invoked", code: "ok"},
	{name: "refused WRITE", tool: "spear_invoke",
		args: map[string]any{"id": "notes/create_note", "arguments": map[string]any{"title": "t", "body": "b"}},
		want: []string{"write-refused"}, object: map[string]any{"code": "write-refused"}, refusal: true,
		event: "capability_refused", code: "write-refused"},
	{name: "invalid arguments", tool: "spear_invoke",
		args: map[string]any{"id": "notes/search_notes", "arguments": map[string]any{"nope": 1}},
		want: []string{"invalid-arguments"}, object: map[string]any{"code": "invalid-arguments"}, refusal: true,
		event: "capability_refused", code: "invalid-arguments"},
	{name: "preflight", tool: "spear_preflight",
		args: map[string]any{"id": "notes/create_note", "arguments": map[string]any{"title": "t", "body": "b"}},
		want: []string{"write-refused"}, object: map[string]any{"decision": "write-refused"},
		event: "capability_preflighted", code: "write-refused"},
	{name: "explain", tool: "spear_explain", args: map[string]any{"code": "write-refused"},
		want: []string{"write-refused"}},
}

// mcpToolSearch is, by step, the words the model gives Claude Code's ToolSearch to find the
// step's tool instead of selecting it by name: the face's descriptions must let it be found
// (SPEC 13). The other steps select their tool by name, as Claude Code's prompt says.
var mcpToolSearch = map[int]string{0: "search capabilities"}

func mcpCalls() []fakemodel.Call {
	calls := make([]fakemodel.Call, len(mcpSteps))
	for i, st := range mcpSteps {
		calls[i] = fakemodel.Call{Tool: st.tool, Args: st.args}
	}
	return calls
}

// checkMCP runs term's MCP row in one isolation mode and prints its line; it returns whether
// every step was as expected.
func checkMCP(o options, t *terminal, mode string) bool {
	label := t.label() + " + spear-mcp"
	if _, err := os.Stat(o.mcp); err != nil {
		fmt.Printf("%-44s %-5s run failed: no spear-mcp to register (make build): %v\n", label, mode, err)
		return false
	}
	shell := filepath.Join(o.bin, "spear-shell")
	dir := filepath.Join(o.work, t.dirName()+"-mcp-"+mode)
	r, err := newRun(dir, o.cli, o.bin, shell, mode, t)
	if err != nil {
		fmt.Printf("%-44s %-5s run failed: %v\n", label, mode, err)
		return false
	}
	r.mcp = o.mcp
	defer r.close()
	tt := driveCalls(r, t, mcpCalls(), nil, nil, mcpToolSearch)
	if tt.err != nil {
		endTurn(r, shell)
		fmt.Printf("%-44s %-5s run failed: %v\n", label, mode, tt.err)
		return false
	}
	outs := make([]mcpOutput, len(mcpSteps))
	got := make([]bool, len(mcpSteps))
	for _, rec := range tt.records {
		rec.Output = strings.ReplaceAll(rec.Output, r.dir, "$RUN")
		outs[rec.Step] = t.mcpResult(rec)
		got[rec.Step] = true
	}
	var faults []string
	ok := 0
	for n, st := range mcpSteps {
		end := tt.auditEnd
		if n+1 < len(mcpSteps) {
			end = tt.auditAt[n+1]
		}
		recs, err := readAudit(r.audit, tt.auditAt[n], end)
		f := ""
		switch {
		case err != nil:
			f = err.Error()
		case !got[n]:
			f = "nothing handed back"
		default:
			f = judgeMCP(st, outs[n], recs)
		}
		// Claude Code: the tool search the model made first must have loaded the step's tool.
		if l, searched := tt.loads[n]; searched {
			if name := "mcp__" + mcpServerName + "__" + st.tool; !slices.Contains(strings.Split(l, "\n"), name) {
				f = strings.TrimPrefix(f+fmt.Sprintf("; ToolSearch %q loaded %q, not %s", toolSearchQuery(n, name), l, name), "; ")
			}
		}
		if o.verbose {
			if l, ok := tt.loads[n]; ok {
				fmt.Printf("    %2d %-18s tool search: %s\n", n, "", brief(l))
			}
			fmt.Printf("    %2d %-18s %s\n", n, st.name, brief(outs[n].text))
		}
		if f == "" {
			ok++
			continue
		}
		faults = append(faults, fmt.Sprintf("step %d (%s): %s", n, st.name, f))
	}
	if f := endTurn(r, shell); f != "" {
		faults = append(faults, "end of turn: "+f)
	}
	fmt.Printf("%-44s %-5s %2d/%d steps as expected  %5.1fs\n", label, mode, ok, len(mcpSteps), tt.elapsed.Seconds())
	for _, f := range faults {
		fmt.Println("    " + f)
	}
	return len(faults) == 0
}

// An mcpOutput is what a terminal handed back to the model for one call of an MCP tool.
type mcpOutput struct {
	text string
	// object is text read as a JSON object: the face's own object, where the terminal hands
	// back structuredContent in place of the content.
	object map[string]any
	// isError: the terminal marked the result as an error, where it says so (known).
	isError, known bool
}

func newMCPOutput(text string, isError, known bool) mcpOutput {
	out := mcpOutput{text: text, isError: isError, known: known}
	var obj map[string]any
	if json.Unmarshal([]byte(strings.TrimSpace(text)), &obj) == nil {
		out.object = obj
	}
	return out
}

// words is what the model could read: the text, and every string and number of the object.
func (o mcpOutput) words() string {
	var b strings.Builder
	b.WriteString(o.text)
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				walk(v[k])
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		case string:
			b.WriteString("\n" + v)
		case float64:
			fmt.Fprintf(&b, "\n%v", v)
		}
	}
	if o.object != nil {
		walk(o.object)
	}
	return b.String()
}

// judgeMCP says what is wrong with an MCP step's result and audit, "" if nothing.
func judgeMCP(st mcpStep, out mcpOutput, recs []auditRecord) string {
	var faults []string
	words := out.words()
	for _, w := range st.want {
		if !strings.Contains(words, w) {
			faults = append(faults, fmt.Sprintf("result lacks %q", w))
		}
	}
	if out.object != nil {
		for _, k := range slices.Sorted(maps.Keys(st.object)) {
			if got, ok := out.object[k]; !ok || got != st.object[k] {
				faults = append(faults, fmt.Sprintf("structuredContent %s is %v, want %v", k, got, st.object[k]))
			}
		}
	}
	if out.known && out.isError != st.refusal {
		faults = append(faults, fmt.Sprintf("isError %v, want %v", out.isError, st.refusal))
	}
	if f := judgeMCPAudit(st, words, recs); f != "" {
		faults = append(faults, f)
	}
	if len(faults) == 0 {
		return ""
	}
	return strings.Join(faults, "; ") + "; result " + brief(out.text)
}

// mcpDecision says whether event is one of the decisions an MCP step's call records (SPEC 7).
func mcpDecision(event string) bool {
	return isDecision(event) || event == "capability_searched" || event == "capability_preflighted"
}

// judgeMCPAudit wants exactly the step's decision, each record carrying "face":"mcp"; an
// invocation is one call recorded before and after under one audit id, which the result the model
// saw names. A listing (a terminal's tools/list again) is not the step's and is left out.
func judgeMCPAudit(st mcpStep, out string, all []auditRecord) string {
	var recs []auditRecord
	var events []string
	for _, r := range all {
		if !mcpDecision(r.Event) || r.Event == "capability_index_exposed" {
			continue
		}
		recs = append(recs, r)
		events = append(events, fmt.Sprintf("%s/%s face=%s", r.Event, r.Code, r.Face))
	}
	for _, r := range recs {
		if r.Face != "mcp" {
			return fmt.Sprintf("audit %v: a record without \"face\":\"mcp\"", events)
		}
	}
	switch {
	case st.event == "":
		if len(recs) != 0 {
			return fmt.Sprintf("audit %v, want none", events)
		}
	case st.event == "capability_invoked":
		if len(recs) != 2 || recs[0].Event != st.event || recs[1].Event != st.event || recs[0].AuditID == "" ||
			recs[1].AuditID != recs[0].AuditID || recs[1].Code != st.code {
			return fmt.Sprintf("audit %v, want one call (2 records, one audit id, outcome %s)", events, st.code)
		}
		if !strings.Contains(out, recs[0].AuditID) {
			return fmt.Sprintf("the result does not name the call's audit id %s", recs[0].AuditID)
		}
	default:
		if len(recs) != 1 || recs[0].Event != st.event || recs[0].Code != st.code {
			return fmt.Sprintf("audit %v, want [%s/%s face=mcp]", events, st.event, st.code)
		}
	}
	return ""
}

// writeMCPConfig writes a terminal's MCP configuration into the run's directory of operator
// files: outside the workspace and every writable root (SPEC 13, Trust).
func writeMCPConfig(r *run, name string, v any) (string, error) {
	dir := filepath.Join(r.dir, "operator")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "", err
	}
	file := filepath.Join(dir, name)
	return file, os.WriteFile(file, data, 0o600)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func toolSearchQuery(n int, name string) string {
	if q, ok := mcpToolSearch[n]; ok {
		return q
	}
	return "select:" + name
}

// Each terminal's MCP tool result, as handed back to the model.

// Claude Code hands back the result's structuredContent as JSON text when it has one and is not
// an error, else its content's text; is_error set for isError.
func claudeMCPResult(rec fakemodel.Record) mcpOutput {
	return newMCPOutput(rec.Output, rec.IsError, true)
}

// Codex hands back "Wall time: ...\nOutput:\n" and then the structuredContent as JSON when there
// is one, else the content; isError is not shown.
var codexMCPRe = regexp.MustCompile(`(?s)^Wall time: [^\n]*\nOutput:\n(.*)$`)

func codexMCPResult(rec fakemodel.Record) mcpOutput {
	text := rec.Output
	if m := codexMCPRe.FindStringSubmatch(text); m != nil {
		text = m[1]
	}
	return newMCPOutput(text, false, false)
}

// Gemini hands back each content item's text inside <untrusted_context>, as the functionResponse's
// output; an isError result as its error, "MCP tool '...' reported tool error ... with response:"
// and the whole result as JSON.
func geminiMCPResult(rec fakemodel.Record) mcpOutput {
	text := strings.NewReplacer("<untrusted_context>\n", "", "\n</untrusted_context>", "").Replace(rec.Output)
	return newMCPOutput(text, rec.IsError, true)
}
