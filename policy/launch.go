package policy

import (
	"slices"
	"strings"
)

// Class is READ when tool is in the entry's read list, else WRITE; what the server
// says about the tool (annotations) never counts.
func (p *Provider) Class(tool string) string {
	if slices.Contains(p.Read, tool) {
		return ClassRead
	}
	return ClassWrite
}

// Launch is how a provider is started: an absolute program, its arguments after the
// program name, the working directory and the whole environment.
type Launch struct {
	Path string
	Args []string
	Dir  string
	Env  []string
}

// Launch builds the provider's start: Path = Command[0], Args = Command[1:], Dir = home,
// Env = PATH=SystemPath and HOME from getenv (left out when empty), overridden or extended
// by the entry's env, as sorted "KEY=value" lines with one line per key.
func (p *Provider) Launch(home string, getenv func(string) string) Launch {
	vars := map[string]string{"PATH": SystemPath}
	if v := getenv("HOME"); v != "" {
		vars["HOME"] = v
	}
	for k, v := range p.Env {
		vars[k] = v
	}
	env := make([]string, 0, len(vars))
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	slices.SortFunc(env, func(a, b string) int {
		ka, _, _ := strings.Cut(a, "=")
		kb, _, _ := strings.Cut(b, "=")
		return strings.Compare(ka, kb)
	})
	l := Launch{Dir: home, Env: env}
	if len(p.Command) > 0 {
		l.Path = p.Command[0]
		l.Args = slices.Clone(p.Command[1:])
	}
	return l
}

// Secrets returns every env value of MinSecretLen bytes or more of every provider
// entry that could be read, valid or rejected, longest first, without duplicates.
func (r *Registry) Secrets() []string {
	set := map[string]bool{}
	for _, s := range r.secrets {
		set[s] = true
	}
	for _, p := range r.Providers {
		for _, v := range p.Env {
			if len(v) >= MinSecretLen {
				set[v] = true
			}
		}
	}
	return sortSecrets(set)
}

// Provider returns the registered (valid) provider with that id, or nil.
func (r *Registry) Provider(id string) *Provider {
	for i := range r.Providers {
		if r.Providers[i].ID == id {
			return &r.Providers[i]
		}
	}
	return nil
}
