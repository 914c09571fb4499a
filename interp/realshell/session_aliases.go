package realshell

import "strings"

// Aliases. With expand_aliases on (shopt -s expand_aliases, bash -O, BASHOPTS in the
// environment), bash expands an alias named by a word that starts a command, reserved words
// included (`{`, `function`, `if`, `[[`, `!`, `case`, `then`, `fi`), when it reads the line:
// the plumbing's own lines would be taken apart by a session's `alias {=...`. A backslash-quoted
// word is never expanded (`\builtin`, `\__spear_r`), but reserved words cannot be quoted, and
// bash reads a whole line (a whole compound command) before it runs any of it, so expansion must
// be off before a line of the plumbing's is read. (In posix mode aliases are on, but reserved
// words are not expanded there.)
//
// So once a session's text names an alias (or the shell may start with aliases on), every
// batch's tail notes the session's setting in __spear_e ("1" when on) and turns expansion off,
// with assignments and a quoted builtin only (the tail is read under the session's setting); the
// top level then stays off between batches, for the batch line, replies and restores; and the
// next batch's prelude, read by its eval with expansion off, gives the session's setting back
// before the batch's first unit is read (eval reads and runs its text a command at a time, as
// bash -s reads lines). Batches keep a tail in that mode even where a DEBUG or RETURN trap
// was named. The builtins run as `\builtin shopt`: a function named shopt is not run; a
// function named builtin is handed `shopt -u expand_aliases` as it is handed the plumbing's
// other commands (docs/shell.md).
//
// An envelope's command goes as such a batch too, run by `\command eval` on the left of &&
// (session_envelope.go), and a terminal's prompt line gives the session's setting back for the
// expansion of the prompt only, whose command substitutions are parsed then (terminal.go).
//
// Left with one setting: units sent as script text (under xtrace or verbose, after a unit that
// duplicated stdin, text holding a NUL) run in a group, `{ HEAD; UNIT\n} REDIRECTIONS`, which
// bash reads whole before it runs any of it, so the group's `{` and the unit's lines are read
// with the same setting. Flush gives the session's setting back before the group (the unit's
// aliases are expanded as in bash -s; an alias named `{` breaks the group). Reading the unit
// later, at run time, takes eval or `.`, and both trace with `++` and keep verbose from showing
// the unit (and eval crashes bash 5.2.15 on a duplicated stdin: dupstdin.go); running it outside a group would take an exec that gives the unit its stdin, and
// bash -s reads its script from its stdin (`exec 0</dev/null` ends the script there).

// aliasesKeep notes the session's setting and turns expansion off; it never fails (set -e).
const aliasesKeep = "__spear_e=${BASHOPTS/*expand_aliases*/1}; " + bi + "shopt -u expand_aliases " + noStderr +
	" || __spear_e=$__spear_e; "

// aliasesBack gives the session's setting back (read with expansion off).
const aliasesBack = "[[ ${__spear_e-} != 1 ]] || " + bi + "shopt -s expand_aliases " + noStderr + " || " + bi + ":; " +
	bi + "unset -v __spear_e; "

// mentionsAliases tells whether a unit may define an alias or turn expansion on.
func mentionsAliases(unit string) bool { return strings.Contains(unit, "alias") }

// startsWithAliases tells whether the shell may start with aliases defined and expanded: an
// option word or BASHOPTS naming expand_aliases, or a BASH_ENV file, which bash -s reads first.
func startsWithAliases(cfg ShellConfig) bool {
	for _, arg := range cfg.Argv {
		if strings.Contains(arg, "expand_aliases") {
			return true
		}
	}
	for _, kv := range cfg.Env {
		if strings.HasPrefix(kv, "BASHOPTS=") && strings.Contains(kv, "expand_aliases") ||
			strings.HasPrefix(kv, "BASH_ENV=") && len(kv) > len("BASH_ENV=") {
			return true
		}
	}
	return false
}

// aliasesOn returns what gives the session's setting back when the top level has expansion
// off, "" otherwise; the session's setting is then in force.
func (s *Shell) aliasesOn() string {
	if !s.aliasesOff {
		return ""
	}
	s.aliasesOff = false
	return aliasesBack
}
