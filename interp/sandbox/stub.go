package sandbox

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spear-shell/spear-shell/policy/paths"
)

// EnsureStub makes DIR/spear-capability a symlink to target (the spear-shell binary) in
// DIR = parent/bin and returns DIR, for the real shell's PATH. parent is the state parent,
// already checked (EnsureStateParent). It costs a readlink when the stub is already in place.
func EnsureStub(parent, target string) (string, error) {
	dir := filepath.Join(parent, "bin")
	link := filepath.Join(dir, StubName)
	if got, err := os.Readlink(link); err == nil && got == target {
		return dir, nil
	}
	if err := paths.PrivateDir(dir); err != nil {
		return "", err
	}
	// Replace atomically so that a concurrent shell never finds the stub missing.
	tmp := fmt.Sprintf("%s.%d", link, os.Getpid())
	_ = os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		return "", fmt.Errorf("stub: %w", err)
	}
	if err := os.Rename(tmp, link); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("stub: %w", err)
	}
	return dir, nil
}

// RefuseStub is the answer of the binary run under the name spear-capability: inside the real
// shell the name was produced at run time (eval, a script, xargs...), which carries no authority.
func RefuseStub(stderr *os.File) int {
	fmt.Fprintln(stderr, "spear-capability: not-recognised: spear-capability is answered only when typed as a command line of its own; it cannot be run from a script, eval, a variable or another program")
	return 126
}

// IsStub tells whether argv0 names the stub.
func IsStub(argv0 string) bool {
	return filepath.Base(argv0) == StubName
}

// stubFuncVar exports StubFunc to every bash started below the real shell.
const stubFuncVar = "BASH_FUNC_command_not_found_handle%%"

// StubFunc is the body of bash's command_not_found_handle, exported to the real shell, so that
// spear-capability is found whatever PATH a login profile, an rc file or a snapshot sets
// (SPEC 3): for exactly that name it runs the stub by its absolute path; for any other it says
// what bash says without a handler, in the same words, and returns 127. bash runs the handler
// in the child it forked for the command, so turning xtrace off there changes nothing else. It
// names no builtin with "builtin" (which a session may disable): a command the handler itself
// cannot find calls the handler again, and the guard variable makes that inner call return at
// once instead of recursing. (A session that disables printf or return as well gets a status
// of 1 or no message for a command not found, never a hang.) A name bash cannot print (a byte
// the locale calls non-printable) is printed as bash prints it, $'...' (printable_filename), which
// is what ${name@Q} gives for exactly those names.
func StubFunc(stub string) string {
	// The guard and set +x go first, their own trace nowhere: with stderr closed, not sent to
	// /dev/null, which a restricted shell (set -r) refuses, printing a message of its own.
	return `() { { if [[ -n ${__spear_cnf-} ]]; then __spear_cnf=inner; else __spear_cnf=outer; set +x; fi; } 2>&-
	if [[ $__spear_cnf == inner ]]; then
		[[ -z $1 ]]
	elif [[ $1 == ` + StubName + ` ]]; then
		` + shellQuote(stub) + ` "${@:2}"
	else
		[[ ${1@Q} == \$* ]] && set -- "${1@Q}"
		if [[ $- == *i* ]]; then
			printf '%s: %s: command not found\n' "$0" "$1" >&2
		else
			printf '%s: line %s: %s: command not found\n' "${BASH_SOURCE[1]:-$0}" "${BASH_LINENO[0]}" "$1" >&2
		fi
		return 127
	fi
}`
}
