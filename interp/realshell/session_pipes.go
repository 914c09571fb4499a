package realshell

import (
	"slices"
	"strconv"
	"strings"
)

// $? and PIPESTATUS across a batch boundary. Every builtin resets PIPESTATUS when it returns, the
// batch's eval included, and no assignment can set it: only a pipeline of as many commands
// gives it back. So each batch ends with a tail that keeps $? and PIPESTATUS in __spear_p
// ("s,p0,p1,...,") before the eval returns (two assignments: nothing forks), and what reads $?
// next (the next batch's prelude, a reply, the end) reads it from there. Once a session's text
// names PIPESTATUS (pipes), the next batch (or the status restored after a reply, which carries
// both too) starts by running a pipeline of `(exit pK)` subshells with the same statuses,
// negated (`!`) when $? was, followed by `&& :` when it fails (so that set -e and the ERR trap
// do not act twice). That forks one process per command of the pipeline, and only when the
// last command before the boundary was a pipeline; a session that never names PIPESTATUS
// forks nothing. A pipeline of more than pipesMax commands gets $? back, not PIPESTATUS.

// pipesMax is the longest pipeline whose PIPESTATUS a boundary keeps.
const pipesMax = 8

// Each batch ends with a tail that keeps $? and PIPESTATUS in __spear_p, and the batch then
// ends with status 0: also because a batch's eval fails when its last command fails, even
// where set -e did not act on that command (`false && true`), and under set -e the shell
// would then end at the eval. Two kinds of batch go without one: the last of a session (its
// last unit may be a here-document that only the end of input closes, which would take the
// tail in), and every batch once a session names a DEBUG or RETURN trap, which would see the
// tail's command, unless PIPESTATUS or history was named or set -e may be on.

// pipesTail ends a batch: $? and PIPESTATUS as the batch's last command left them. What reads
// $? next (the next batch, a reply, the end) reads this. Script text (which xtrace may show)
// has it in a group with stderr closed (noStderr). Assignments, not printf -v, which a session may
// disable (enable -n): an array joins with spaces in an assignment, and the second keeps the
// digits and commas only, whatever joined them.
const (
	pipesKeep      = "__spear_u=$_ __spear_p=$?,${PIPESTATUS[@]/%/,}; __spear_p=${__spear_p//[!0-9,]/}"
	pipesTail      = pipesKeep + "\n"
	pipesTailQuiet = "{ " + pipesKeep + "; } " + noStderr + "\n"
)

// batchTail returns the tail a batch ends with, "" when none is needed.
func (s *Shell) batchTail(script bool) string {
	if s.ending || s.traps && !s.pipes && !s.history && !s.errexit && !s.aliases {
		return ""
	}
	s.tailPending = true
	if s.aliases {
		// Expansion off after the batch's units (session_aliases.go): the rest of the line was
		// read with the session's setting, so the history tail's `if` goes through an eval.
		s.aliasesOff = true
		keep := "__spear_u=$_ __spear_p=$?,${PIPESTATUS[@]/%/,}; " + aliasesKeep + "__spear_p=${__spear_p//[!0-9,]/}"
		switch {
		case script:
			return "{ " + keep + "; } " + noStderr + "\n"
		case s.history:
			return keep + "; " + bi + "eval '" + strings.TrimSuffix(historyTail, "\n") + "'\n"
		}
		return keep + "\n"
	}
	switch {
	case script:
		return pipesTailQuiet
	case s.history:
		return strings.TrimSuffix(pipesTail, "\n") + "; " + historyTail
	}
	return pipesTail
}

// mentionsTraps tells whether a unit may set a trap that runs around every command (DEBUG) or
// after a function (RETURN, with functrace).
func mentionsTraps(unit string) bool {
	return strings.Contains(unit, "DEBUG") || strings.Contains(unit, "RETURN")
}

// Ending says that the units still to come are the session's last: their batch goes without a
// tail (a here-document that the end of input closes would take it in).
func (s *Shell) Ending() { s.ending = true }

// mentionsErrexit tells whether a unit may turn set -e on: errexit, or set with an option
// holding e.
func mentionsErrexit(unit string) bool {
	return strings.Contains(unit, "errexit") || setsOption(unit, "e")
}

// mentionsTracing tells whether a unit may turn xtrace or verbose on.
func mentionsTracing(unit string) bool {
	return strings.Contains(unit, "xtrace") || strings.Contains(unit, "verbose") || setsOption(unit, "xv")
}

// setsOption tells whether text may call set with an option word holding one of letters.
func setsOption(unit, letters string) bool {
	for rest := unit; ; {
		i := strings.Index(rest, "set")
		if i < 0 {
			return false
		}
		before := i == 0 || !isNameByte(rest[i-1])
		rest = rest[i+3:]
		if before && rest != "" && (rest[0] == ' ' || rest[0] == '\t') && optionWord(rest, letters) {
			return true
		}
	}
}

// optionWord tells whether the arguments that start args (to the end of the command) hold an
// option word with one of letters.
func optionWord(args, letters string) bool {
	if end := strings.IndexAny(args, ";&|\n"); end >= 0 {
		args = args[:end]
	}
	for _, word := range strings.Fields(args) {
		if word[0] == '-' && strings.ContainsAny(word[1:], letters) {
			return true
		}
	}
	return false
}

// startsWithErrexit tells whether the shell may start with set -e (-e, -o errexit, SHELLOPTS).
func startsWithErrexit(cfg ShellConfig) bool {
	for _, arg := range cfg.Argv[1:] {
		if arg == "errexit" || len(arg) > 1 && arg[0] == '-' && arg[1] != '-' && strings.IndexByte(arg, 'e') > 0 {
			return true
		}
	}
	return shellOpts(cfg, "errexit")
}

// shellOpts tells whether the environment's SHELLOPTS, which bash turns on at start, may name
// option.
func shellOpts(cfg ShellConfig, option string) bool {
	for _, kv := range cfg.Env {
		if strings.HasPrefix(kv, "SHELLOPTS=") && strings.Contains(kv, option) {
			return true
		}
	}
	return false
}

// startsTracing tells whether the shell may start with xtrace or verbose on (-x, -v, SHELLOPTS).
func startsTracing(cfg ShellConfig) bool {
	return cfg.Tracing || shellOpts(cfg, "xtrace") || shellOpts(cfg, "verbose")
}

// statusList tells whether text is a reply's "s,p0,p1,...,": digits and commas only.
func statusList(text string) bool {
	for i := 0; i < len(text); i++ {
		if (text[i] < '0' || text[i] > '9') && text[i] != ',' {
			return false
		}
	}
	return text != ""
}

// indices keeps the fields that are array indices (digits): an associative PROMPT_COMMAND's
// keys are the session's text, which the prompt's plumbing must not run.
func indices(fields []string) []string {
	return slices.DeleteFunc(fields, func(f string) bool {
		return f == "" || strings.Trim(f, "0123456789") != ""
	})
}

// ascii tells whether text holds no byte above 127.
func ascii(text string) bool {
	for i := 0; i < len(text); i++ {
		if text[i] >= 0x80 {
			return false
		}
	}
	return true
}

// statusDef defines the function setStatus calls.
// Given a second argument (the $_ the tail kept in __spear_u), it also removes __spear_u: the
// call's last argument is then $_, as the user's last command left it.
const statusDef = "function __spear_r { " + bi + "unset -f __spear_r; " + bi + "unset -v __spear_s __spear_p; " +
	"(( $# < 2 )) || " + bi + "unset -v __spear_u; " + bi + `return "${1%%,*}"; }; `

// pipesShape is called with __spear_p; it removes itself and the variables, and returns the
// shape of the pipeline to run: 4 times its length, plus 0 when $? is its status and 0, 1 when
// $? is its (failing) status, 2 when $? is its status negated; 1 for a pipeline longer than
// pipesMax. $_ is then __spear_p, which each command of the pipeline reads its status from.
const pipesShape = "function __spear_q { " + bi + "unset -f __spear_q; " + bi + "unset -v __spear_p __spear_s __spear_u; " +
	bi + "local __spear_t __spear_x __spear_v __spear_c __spear_n; " + bi + `local -a __spear_a; __spear_t="$1"; ` +
	`while [[ $__spear_t == *,* ]]; do __spear_a+=("${__spear_t%%,*}"); __spear_t=${__spear_t#*,}; done; ` +
	"__spear_n=$(( ${#__spear_a[@]} - 1 )); __spear_v=${__spear_a[__spear_n]}; " +
	`if [[ -o pipefail ]]; then __spear_v=0; for __spear_x in "${__spear_a[@]:1}"; do (( __spear_x == 0 )) || __spear_v=$__spear_x; done; fi; ` +
	"if (( __spear_a[0] == __spear_v )); then __spear_c=$(( __spear_v != 0 )); else __spear_c=2; fi; " +
	"(( __spear_n > PIPESMAX )) && " + bi + "return 1; (( __spear_n > 1 )) && " + bi + "unset -f __spear_r; " +
	bi + `return "$(( __spear_n * 4 + __spear_c ))"; }; `

// restoreStatus gives back the $? saved in __spear_s (and in pipes mode PIPESTATUS, from
// __spear_p when set) without tripping set -e.
func (s *Shell) restoreStatus() string {
	if !s.pipes {
		return setStatus + `"${__spear_p:-$__spear_s}" "${__spear_u-}" && ` + bi + `: "$_"`
	}
	if s.pipesRestore == "" {
		s.pipesRestore = pipesRestoreText()
	}
	return s.pipesRestore
}

func pipesRestoreText() string {
	var b strings.Builder
	b.WriteString("if [[ -z ${__spear_p+x} ]]; then " + setStatus + `"$__spear_s" "${__spear_u-}" && ` + bi + `: "$_"; `)
	b.WriteString("elif " + statusDef + strings.Replace(pipesShape, "PIPESMAX", strconv.Itoa(pipesMax), 1) +
		"\\__spear_q \"$__spear_p\"; then " + bi + ":; ")
	// One line: the batch's $LINENO counts from its second.
	b.WriteString("else case $? in 1) \\__spear_r \"$_\" && " + bi + ":;; ")
	b.WriteString("4) \\__spear_r \"$_\";; 5) \\__spear_r \"$_\" && " + bi + ":;; 6) ! \\__spear_r \"${_#*,}\";; ")
	for n := 2; n <= pipesMax; n++ {
		p := pipeline(n)
		code := strconv.Itoa(n * 4)
		b.WriteString(code + ") " + p + ";; ")
		code = strconv.Itoa(n*4 + 1)
		b.WriteString(code + ") " + p + " && " + bi + ":;; ")
		code = strconv.Itoa(n*4 + 2)
		b.WriteString(code + ") ! " + p + ";; ")
	}
	b.WriteString("esac; fi")
	return b.String()
}

// pipeline is n subshells, the k-th exiting with the status after k+1 commas in $_.
func pipeline(n int) string {
	parts := make([]string, n)
	for k := range parts {
		parts[k] = "(__spear_x=$_; " + strings.Repeat("__spear_x=${__spear_x#*,}; ", k+1) + bi + `exit "${__spear_x%%,*}")`
	}
	return strings.Join(parts, " | ")
}

// mentionsPipestatus tells whether a unit may read PIPESTATUS: from then on batches keep it.
func mentionsPipestatus(unit string) bool { return strings.Contains(unit, "PIPESTATUS") }
