package policy

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spear-shell/spear-shell/policy/paths"
)

// ResolveProject finds the registered project whose root contains workspace, both
// with symlinks and `..` resolved as the kernel would; the innermost root wins. It
// also returns the resolved workspace. A project whose root cannot be resolved can
// contain nothing. When no project is found, or two share the innermost resolved root,
// reason says why and the project is nil.
func (r *Registry) ResolveProject(workspace string) (p *Project, resolved string, reason string) {
	if !filepath.IsAbs(workspace) {
		return nil, "", fmt.Sprintf("workspace %q is not absolute", workspace)
	}
	ws, err := paths.Resolve(workspace)
	if err != nil {
		return nil, "", fmt.Sprintf("workspace cannot be resolved: %v", paths.UnwrapPath(err))
	}
	var best *Project
	bestRoot, tie := "", ""
	for i := range r.Projects {
		proj := &r.Projects[i]
		root, err := ws, error(nil) // a workspace that is its project's root, as typed, is resolved once
		if proj.Root != workspace {
			root, err = paths.Resolve(proj.Root)
		}
		if err != nil || !within(root, ws) {
			continue
		}
		switch {
		case best == nil || len(root) > len(bestRoot):
			best, bestRoot, tie = proj, root, ""
		case root == bestRoot:
			tie = proj.Name
		}
	}
	if best == nil {
		return nil, ws, "workspace is not inside any registered project"
	}
	if tie != "" {
		return nil, ws, fmt.Sprintf("projects %q and %q have the same root: ambiguous", best.Name, tie)
	}
	return best, ws, ""
}

// Offer decides, for every registered provider, whether the turn described by m is
// offered it and why (SPEC 2.5). A nil manifest is offered nothing. A manifest without
// a project takes the project the workspace resolves to.
func (r *Registry) Offer(m *Manifest) Offer {
	var o Offer
	nothing := func(reason string) Offer {
		o.Reason = reason
		o.Decisions = make([]Decision, len(r.Providers))
		for i, p := range r.Providers {
			o.Decisions[i] = Decision{Provider: p.ID, Reason: reason}
		}
		return o
	}
	if m == nil {
		return nothing("no valid turn manifest")
	}
	proj, ws, why := r.ResolveProject(m.Workspace)
	o.Workspace = ws
	if proj != nil {
		o.Project = proj.Name
	}
	switch {
	case m.Runtime != RuntimeGateway:
		return nothing(fmt.Sprintf("runtime %s has no capability gateway", m.Runtime))
	case m.Task == TaskMixed && m.Pass != PassImplementation:
		return nothing(fmt.Sprintf("task mixed in pass %s gets no capabilities (only its implementation pass does)", m.Pass))
	case m.Task != TaskImplementation && m.Task != TaskMixed && m.Task != TaskGeneral:
		return nothing(fmt.Sprintf("task %s gets no capabilities", m.Task))
	case proj == nil:
		return nothing(why)
	case m.Project != "" && m.Project != proj.Name:
		return nothing(fmt.Sprintf("manifest project %q is not the workspace's project %q", m.Project, proj.Name))
	}
	o.Decisions = make([]Decision, len(r.Providers))
	offered := false
	for i := range r.Providers {
		o.Decisions[i] = r.decide(&r.Providers[i], proj, ws, m.Task)
		offered = offered || o.Decisions[i].Offered
	}
	if !offered {
		o.Reason = "no registered provider applies to this turn"
		if len(r.Providers) == 0 {
			o.Reason = "no provider is registered"
		}
	}
	return o
}

// decide is one provider's decision for a turn of task class task in project proj
// whose resolved workspace is ws.
func (r *Registry) decide(p *Provider, proj *Project, ws, task string) Decision {
	d := Decision{Provider: p.ID}
	if !p.Enabled {
		d.Reason = "disabled"
		return d
	}
	sc := p.Scope
	switch sc.Kind {
	case "":
		d.Reason = "no scope: applies nowhere"
		return d
	case ScopeGlobal:
	case ScopeCorpus:
		if !slices.Contains(sc.Names, proj.Name) {
			d.Reason = fmt.Sprintf("scope %s does not include project %s", sc, proj.Name)
			return d
		}
	case ScopeFamily:
		if !slices.ContainsFunc(sc.Names, func(f string) bool { return slices.Contains(proj.Families, f) }) {
			d.Reason = fmt.Sprintf("scope %s does not include project %s (families: %s)", sc, proj.Name, strings.Join(proj.Families, ", "))
			return d
		}
	case ScopePath:
		dir, err := paths.Resolve(sc.Path)
		if err != nil {
			d.Reason = fmt.Sprintf("scope %s cannot be resolved: %v", sc, paths.UnwrapPath(err))
			return d
		}
		if !within(dir, ws) {
			d.Reason = fmt.Sprintf("workspace is not inside scope %s", sc)
			return d
		}
	default:
		d.Reason = fmt.Sprintf("unknown scope kind %q", sc.Kind)
		return d
	}
	if !slices.Contains(p.Tasks, task) {
		d.Reason = fmt.Sprintf("task %s not in tasks", task)
		return d
	}
	d.Offered = true
	d.Reason = fmt.Sprintf("scope %s and task %s", sc, task)
	if task == TaskGeneral {
		d.ReadOnly = true
		d.Reason += ": READ capabilities only"
	}
	return d
}

// Reach reports, for --check, which registered projects p's scope reaches and which
// names in its scope match no registered project or family (allowed, but flagged).
// Path scopes reach projects whose tree overlaps the directory.
func (r *Registry) Reach(p *Provider) (projects, unknown []string) {
	switch p.Scope.Kind {
	case ScopeGlobal:
		for _, pr := range r.Projects {
			projects = append(projects, pr.Name)
		}
	case ScopeCorpus:
		for _, n := range p.Scope.Names {
			if slices.ContainsFunc(r.Projects, func(pr Project) bool { return pr.Name == n }) {
				projects = append(projects, n)
			} else {
				unknown = append(unknown, n)
			}
		}
	case ScopeFamily:
		for _, n := range p.Scope.Names {
			if !slices.ContainsFunc(r.Projects, func(pr Project) bool { return slices.Contains(pr.Families, n) }) {
				unknown = append(unknown, n)
			}
		}
		for _, pr := range r.Projects {
			if slices.ContainsFunc(p.Scope.Names, func(f string) bool { return slices.Contains(pr.Families, f) }) {
				projects = append(projects, pr.Name)
			}
		}
	case ScopePath:
		dir := resolveOrClean(p.Scope.Path)
		for _, pr := range r.Projects {
			root := resolveOrClean(pr.Root)
			if within(dir, root) || within(root, dir) {
				projects = append(projects, pr.Name)
			}
		}
	}
	return projects, unknown
}

func resolveOrClean(path string) string {
	if real, err := paths.Resolve(path); err == nil {
		return real
	}
	return filepath.Clean(path)
}
