package capability

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

// errUntrusted marks a program refused because it is, or may be, the agent's.
var errUntrusted = errors.New("program refused")

// writableRoots are the directories the agent can write in this turn: the workspace, the
// manifest's writable list and those the caller names (the turn's temporary directory).
func (e *turnEnv) writableRoots() []string {
	roots := slices.Clone(e.s.WritableRoots)
	if e.man != nil {
		roots = append(roots, e.man.Workspace)
		roots = append(roots, e.man.Writable...)
	}
	return roots
}

// trustPrograms returns an error wrapping errUntrusted when a program of the chain (see
// policy.Programs) cannot be told or lies within the agent's reach; nil when all can run.
// Without a Settings.CheckTrusted nothing is trusted.
func (e *turnEnv) trustPrograms(progs []string, err error) error {
	if err != nil {
		return fmt.Errorf("%w: %w", errUntrusted, err)
	}
	check := e.s.CheckTrusted
	if check == nil {
		return fmt.Errorf("%w: no trust check was given", errUntrusted)
	}
	roots := e.writableRoots()
	for _, p := range progs {
		if err := check(p, roots); err != nil {
			return fmt.Errorf("%w: %s: %w", errUntrusted, p, err)
		}
	}
	return nil
}

// trustProvider checks a provider's programs before it is started.
func (e *turnEnv) trustProvider(p *policy.Provider) error {
	return e.trustPrograms(p.Programs())
}

// trustApprover checks the approver's programs before it is asked.
func (e *turnEnv) trustApprover() error {
	return e.trustPrograms(e.man.ApproverPrograms())
}

// trustHelper checks the schema helper before it is started.
func (e *turnEnv) trustHelper(path string) error {
	return e.trustPrograms([]string{path}, nil)
}
