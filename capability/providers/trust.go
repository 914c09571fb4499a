package providers

// Programs are checked before they run (SPEC 9): a provider, its #! interpreters, the approver
// and the schema helper must lie outside every directory the agent can write, and be reached
// through no symlink in one, or the agent could have put its own program there and received
// the provider's secrets, approved its own WRITE or judged its own arguments.

import (
	"errors"
	"fmt"
	"slices"

	"github.com/spear-shell/spear-shell/policy"
)

// ErrUntrusted marks a program refused because it is, or may be, the agent's.
var ErrUntrusted = errors.New("program refused")

// writableRoots are the directories the agent can write in this turn: the workspace, the
// manifest's writable list and those the caller names (the turn's temporary directory).
func (t *Turn) writableRoots() []string {
	roots := slices.Clone(t.Settings.WritableRoots)
	if t.Manifest != nil {
		roots = append(roots, t.Manifest.Workspace)
		roots = append(roots, t.Manifest.Writable...)
	}
	return roots
}

// TrustPrograms returns an error wrapping ErrUntrusted when a program of the chain (see
// policy.Programs) cannot be told or lies within the agent's reach; nil when all can run.
// Without a Settings.CheckTrusted nothing is trusted.
func (t *Turn) TrustPrograms(progs []string, err error) error {
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUntrusted, err)
	}
	check := t.Settings.CheckTrusted
	if check == nil {
		return fmt.Errorf("%w: no trust check was given", ErrUntrusted)
	}
	roots := t.writableRoots()
	for _, p := range progs {
		if err := check(p, roots); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrUntrusted, p, err)
		}
	}
	return nil
}

// TrustProvider checks a provider's programs, and its env_file's path, before it is started.
// An env_file within the agent's reach is a failure of stage env_file (the agent could have
// chosen the server's variables, LD_PRELOAD among them).
func (t *Turn) TrustProvider(p *policy.Provider) error {
	if err := t.TrustPrograms(p.Programs()); err != nil {
		return err
	}
	if p.EnvFile == "" {
		return nil
	}
	if why := t.envFileReach(p.EnvFile, t.writableRoots()); why != nil {
		ef := &policy.EnvFileError{File: p.EnvFile, Msg: "is not out of the agent's reach: " + why.Error()}
		return &Failure{Msg: ef.Error(), Stage: StageEnvFile, Is: []error{ef}}
	}
	return nil
}

// OperatorsEnvFile reports whether an entry's env_file is the operator's by the check its start
// makes: out of this turn's agent's reach (TrustProvider), and for a shared entry out of every
// registered project's root too (the broker's check: any turn's agent may write its root).
// Only such a file's values are secrets to redact before a start reads the file
// (policy.Registry.Secrets): one an agent wrote would have its own words redacted.
func (t *Turn) OperatorsEnvFile(p *policy.Provider) bool {
	roots := t.writableRoots()
	if p.Share != "" {
		for _, pr := range t.Registry.Projects {
			roots = append(roots, pr.Root)
		}
	}
	return t.envFileReach(p.EnvFile, roots) == nil
}

// envFileReach says why an env_file may lie within one of roots, or be reached through a
// symlink in one (nil: it does not). Without a trust check nothing is out of reach.
func (t *Turn) envFileReach(path string, roots []string) error {
	if check := t.Settings.CheckTrusted; check != nil {
		return check(path, roots)
	}
	return errors.New("no trust check was given")
}
