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

	// Secrets are the env_file's values of MinSecretLen bytes or more, as read for this
	// start: the starting process redacts them from everything it records or passes on.
	Secrets []string
}

// Launch builds the provider's start: Path = Command[0], Args = Command[1:], Dir = home,
// Env = PATH=SystemPath and HOME from getenv (left out when empty), overridden or extended
// by the entry's env, then by its env_file (read now, ReadEnvFile), as sorted "KEY=value"
// lines with one line per key. The error is the env_file's (an *EnvFileError).
func (p *Provider) Launch(home string, getenv func(string) string) (Launch, error) {
	vars := map[string]string{"PATH": SystemPath}
	if v := getenv("HOME"); v != "" {
		vars["HOME"] = v
	}
	for k, v := range p.Env {
		vars[k] = v
	}
	var secrets []string
	if p.EnvFile != "" {
		file, err := ReadEnvFile(p.EnvFile)
		if err != nil {
			return Launch{}, err
		}
		for k, v := range file {
			vars[k] = v
			if len(v) >= MinSecretLen {
				secrets = append(secrets, v)
			}
		}
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
	slices.Sort(secrets)
	l := Launch{Dir: home, Env: env, Secrets: secrets}
	if len(p.Command) > 0 {
		l.Path = p.Command[0]
		l.Args = slices.Clone(p.Command[1:])
	}
	return l, nil
}

// Secrets returns every env value of MinSecretLen bytes or more of every provider
// entry that could be read, valid or rejected, and of every valid entry's env_file as it
// reads now that operators admits (one that cannot be read gives none: its server is not
// started), longest first, without duplicates. operators says whether an entry's env_file is
// the operator's (nil: every one is): one an agent could have written is not, and its values
// are not secrets, or the agent could plant a value and have its own words redacted.
func (r *Registry) Secrets(operators func(p *Provider) bool) []string {
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
		if p.EnvFile == "" || operators != nil && !operators(&p) {
			continue
		}
		file, _ := ReadEnvFile(p.EnvFile)
		for _, v := range file {
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
