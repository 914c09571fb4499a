package capability

// A tool under the operator's lock (SPEC 15). A listed tool the lock does not hold is absent:
// rejected with reason not-locked, which no listing, note or refusal tells of (unusable.go). A
// locked tool is pinned by its locked definition's hash; when what the provider lists now is
// another definition, the locked one is shown in its place and calls to it are refused
// (definition-changed), so that the turn never sees or calls what the operator did not approve.

import (
	"encoding/json"

	"github.com/spear-shell/spear-shell/mcpstdio"
	"github.com/spear-shell/spear-shell/policy/lock"
)

// lockChanged is the refusal of a call or preflight of a tool that changed since the lock.
const lockChanged = ": the tool's definition changed since the operator locked it: ask the operator to review (spear-shell --lock --diff)"

// currentDefinition is t's canonical definition as the lock keeps definitions.
func currentDefinition(t mcpstdio.Tool) (string, error) {
	return lock.Definition(lock.Def{Name: t.Name, Title: t.Title, Description: t.Description,
		InputSchema: t.InputSchema, OutputSchema: t.OutputSchema, Annotations: t.Annotations})
}

// matchesLock reports whether t's definition is the locked one.
func matchesLock(lt *lock.Tool, t mcpstdio.Tool) bool {
	def, err := currentDefinition(t)
	return err == nil && def == lt.Definition
}

// lockedDefinition is what the lock approved of a tool: its description and schemas, compact.
// ok is false when the locked text holds no usable schemas (a lock edited by hand).
func lockedDefinition(lt *lock.Tool) (desc string, in, out json.RawMessage, ok bool) {
	var d struct {
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	}
	if json.Unmarshal([]byte(lt.Definition), &d) != nil || !isJSONObject(d.InputSchema) {
		return "", nil, nil, false
	}
	if d.OutputSchema != nil && !isJSONObject(d.OutputSchema) {
		return "", nil, nil, false
	}
	return d.Description, d.InputSchema, d.OutputSchema, true
}
