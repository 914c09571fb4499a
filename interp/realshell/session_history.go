package realshell

import "strings"

// With `set -o history`, bash -s keeps every line it reads. A batch's eval keeps its own lines
// only while history is on inside it (eval turns it off for what it parses, and a `set -o
// history` inside turns it back on), and the lines the plumbing sends between batches (the batch
// line, replies, restored statuses) would be kept too. So once a session's text names history,
// each batch read as data ends with a tail that, when history is on, removes the tail's own
// entry, turns history off and notes that it was on (__spear_h), and the next batch's prelude
// turns it back on before the batch's units are parsed: the history then holds the units as
// bash -s's does, with its own rules for multi-line commands, HISTCONTROL and HISTIGNORE, and
// none of the plumbing. Whether the tail's entry was kept is known without asking only when
// HISTIGNORE is empty; otherwise the tail reads the last entry with `history 1` (a command
// substitution: one fork per batch, only in such a session).

// historyOn starts a batch's prelude: history back on if the last batch's tail turned it off.
// With HISTFILE empty for it: `set -o history` reads HISTFILE when no line has been kept yet
// this session (the tails' own entries are removed), which bash -s would not do there. A
// readonly HISTFILE refuses that with a message, printed before the command's own redirections
// are made: the group's send it nowhere.
const historyOn = `[[ -z ${__spear_h-} ]] || { HISTFILE= ` + bi + "set -o history; } " + noStderr + "; " + bi + "unset -v __spear_h; "

// historyTail ends a batch, on the line of pipesTail (one entry to remove): it ends with status
// 0 (the batch's status is in __spear_p).
const historyTail = "if [[ -o history ]]; then __spear_h=1; if [[ -z ${HISTIGNORE-} || $(" + bi +
	"history 1) == *__spear_h=1* ]]; then " + bi + "history -d -1 " + noStderr + "; fi; " + bi + "set +o history; fi\n"

// startsWithHistory tells whether the shell may start with history on (`-o history`, SHELLOPTS).
func startsWithHistory(cfg ShellConfig) bool {
	for _, arg := range cfg.Argv {
		if strings.Contains(arg, "history") {
			return true
		}
	}
	return shellOpts(cfg, "history")
}

// mentionsHistory tells whether a unit may turn history on: from then on batches keep it clean.
func mentionsHistory(unit string) bool { return strings.Contains(unit, "history") }
