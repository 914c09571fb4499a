package realshell

import (
	"strconv"
	"strings"
)

// A terminal session shows bash -i's prompts. The real shell is not interactive (it reads a
// script), so it has no PS1 or PS2 of its own and never runs PROMPT_COMMAND: the session asks
// it for them, and it expands them with ${PS1@P}, which is how bash -i expands a prompt.

// promptDefaults is the init text that gives the shell bash -i's PS1 and PS2: the environment's
// (bash unsets them in a shell that is not interactive), else bash's defaults.
func promptDefaults(env []string) string {
	var b strings.Builder
	for _, v := range []struct{ name, def string }{{"PS1", `\s-\v\$ `}, {"PS2", "> "}} {
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		if value, ok := lookupEnv(env, v.name); ok {
			b.WriteString(bi + "export " + v.name + "=" + shellQuote(value))
		} else {
			b.WriteString(v.name + "=" + shellQuote(v.def))
		}
	}
	return b.String()
}

func lookupEnv(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// Prompt returns the prompt bash -i prints before reading a line, once everything sent so far
// has run: PS1 after running PROMPT_COMMAND (each element of an array, in order), or PS2 for a
// continuation line (continued true). PROMPT_COMMAND and the prompt's substitutions see the
// last command's $?, which is kept for the next command. ok is false once the shell has ended.
func (s *Shell) Prompt(continued bool) (prompt string, ok bool) {
	if continued {
		return s.expandPrompt("PS2", false)
	}
	return s.expandPrompt("PS1", true)
}

// Before returns what bash -i prints after reading a command and before running it: PS0
// expanded, "" when PS0 is unset or empty (as the last prompt found it).
func (s *Shell) Before() (string, bool) {
	if !s.ps0 {
		return "", true
	}
	return s.expandPrompt("PS0", false)
}

func (s *Shell) expandPrompt(name string, promptCommand bool) (string, bool) {
	if !s.Sync() {
		return "", false
	}
	status := strconv.Itoa(max(s.status, 0))
	// $? is restored without tripping set -e: a failure left of && never does.
	restore := "{ " + setStatus + status + " && " + bi + ":; } " + noStderr + "; "
	if promptCommand {
		// As in bash -i, a failing PROMPT_COMMAND never ends the shell (|| turns set -e off).
		for _, i := range s.promptCommands {
			// Its text is read with the session's alias setting (session_aliases.go).
			on, off := s.aliasesOn(), ""
			if on != "" {
				off, s.aliasesOff = "; "+strings.TrimSuffix(aliasesKeep, "; "), true
			}
			s.write("{ " + s.groupHead + on + restore + bi + `eval "${PROMPT_COMMAND[` + i + `]}"` + off + strings.TrimSuffix(s.groupTail, "\n") + " || " + bi + ":\n")
		}
	}
	// The reply: PS0's presence ("x1" or "x"), PROMPT_COMMAND's indices, then the prompt.
	// The prompt's command substitutions are parsed as it is expanded, with the setting in
	// force then: the session's, given back after this line was read with expansion off and
	// taken away again before the next line of the plumbing's is read (session_aliases.go).
	on, off := "", ""
	if s.aliasesOff {
		on, off = aliasesBack, "; "+strings.TrimSuffix(aliasesKeep, "; ")
	}
	token := newToken()
	show := "{ " + on + restore + bi + `printf '%s x%s %s\n%s\0' ` + token + ` "${PS0:+1}" "${!PROMPT_COMMAND[*]}" "${` + name + `@P}" >&` + strconv.Itoa(replyFD) + off + "; } " + s.stdin
	if s.tracing {
		show += " " + noStderr
	}
	s.write(show + "\n")
	rest, ok := s.reply(token)
	if !ok {
		return "", false
	}
	head, prompt, _ := strings.Cut(rest, "\n")
	fields := strings.Fields(head)
	s.ps0 = len(fields) > 0 && fields[0] == "x1"
	if len(fields) > 0 {
		fields = fields[1:]
	}
	s.promptCommands = indices(fields)
	return prompt, true
}

// Interrupted makes $? 130 for the next prompt and command, as a Ctrl-C at bash -i's prompt
// does; it never ends the shell under set -e.
func (s *Shell) Interrupted() { s.status, s.restore, s.pipestatus = 130, true, "" }

// interruptTrap is a terminal session's SIGINT trap. bash -i gives up the whole command line it
// is running at Ctrl-C, a builtin waiting (read) or a loop included, and its $? is 130; bash -s
// with `trap : INT` runs the trap and goes on (read goes on reading, a loop runs its next round).
// This trap leaves the unit as bash -i leaves it: a builtin given an argument it takes none of
// (`suspend 1`, its message going to a closed stderr) makes bash give up everything it runs, up
// to its reading loop, eval included, which reads the next line of the script: spear-shell's
// next request. $? is set to 130 before (that loop keeps a failing status).
//
// It acts only inside the group a unit runs in, where the reply descriptor is closed: the
// plumbing's own lines (reading a batch, a reply, a prompt) have it open, and are never given
// up. Giving up from inside bash's wait for a child leaves the wait's own SIGINT handler in
// place, and the next SIGINT would not reach the trap; so the trap sets itself again first, from
// its own text (__spear_t, there only while it runs). A function, not a variable: a variable
// computed by a call is initialised at start, which every -c command would pay before its fast
// path runs.
func interruptTrap() string {
	rest := `[[ -p /dev/fd/` + strconv.Itoa(replyFD) + ` ]] || { ` + bi + `trap -- "__spear_t=${__spear_t@Q}; $__spear_t" INT; ` +
		bi + `unset -v __spear_t; ` + setStatus + `130 && ` + bi + `:; ` + bi + `suspend 1 ` + noStderr + `; }; ` + bi + `unset -v __spear_t`
	return "__spear_t=" + shellQuote(rest) + "; " + rest
}
