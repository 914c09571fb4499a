package providers

// Scope only narrows (SPEC 9): the workspace a turn resolves (symlinks followed) and the project
// it lies in are pinned in the turn's own state (PerTurn: whatever the configuration) when the turn is first loaded. A later process, or a later
// answer, that resolves them otherwise is offered nothing: an agent that replaced its
// workspace with a link into another project's tree would otherwise be offered that project's
// providers.

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/spear-shell/spear-shell/policy"
)

const scopeFact = "scope" // content: the resolved workspace, NUL, the project

// pinScope pins o's workspace and project, or compares them with the pin; it returns why the
// turn is offered nothing ("" when o stands).
func (t *Turn) pinScope(o policy.Offer) string {
	now := o.Workspace + "\x00" + o.Project
	if created, err := t.PerTurn.Create(scopeFact, []byte(now)); err != nil {
		return "the turn's workspace cannot be pinned: " + err.Error()
	} else if created {
		t.scopePin = now
		return ""
	}
	b, ok, err := t.PerTurn.Read(scopeFact)
	if err != nil || !ok {
		return fmt.Sprintf("the turn's pinned workspace cannot be read: %v", err)
	}
	t.scopePin = string(b)
	return t.scopeMoved(o.Workspace, o.Project)
}

// scopeMoved compares a resolution with the pin: why it differs, or "".
func (t *Turn) scopeMoved(workspace, project string) string {
	if workspace+"\x00"+project == t.scopePin {
		return ""
	}
	ws, proj := splitScope(t.scopePin)
	return fmt.Sprintf("the turn's workspace changed: it was %s (project %s) when the turn began, it is now %s (project %s)",
		strconv.Quote(ws), strconv.Quote(proj), strconv.Quote(workspace), strconv.Quote(project))
}

// Rescope resolves the workspace again, for an answer of a process that loaded the turn
// earlier: why the offer no longer stands, or "".
func (t *Turn) Rescope() string {
	if t.scopePin == "" || t.Manifest == nil {
		return ""
	}
	proj, ws, _ := t.Registry.ResolveProject(t.Manifest.Workspace)
	name := ""
	if proj != nil {
		name = proj.Name
	}
	return t.scopeMoved(ws, name)
}

func splitScope(s string) (workspace, project string) {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return s[:i], s[i+1:]
		}
	}
	return s, ""
}

// trustWorkspace refuses, with the boundary on, a workspace that lies in another writable root
// or is reached through a link in one: the agent could move it and link another project's tree
// in its place before the turn's first load pins it.
func (t *Turn) trustWorkspace() error {
	check := t.Settings.CheckTrusted
	if check == nil {
		return fmt.Errorf("%w: no trust check was given", ErrUntrusted)
	}
	var others []string
	for _, r := range t.writableRoots() {
		if filepath.Clean(r) != filepath.Clean(t.Manifest.Workspace) {
			others = append(others, r)
		}
	}
	if err := check(t.Manifest.Workspace, others); err != nil {
		return fmt.Errorf("the workspace %s could be moved by the agent: %w", t.Manifest.Workspace, err)
	}
	return nil
}
