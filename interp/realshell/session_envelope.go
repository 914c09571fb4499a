package realshell

// What running an agent terminal's envelope needs of the real shell (interp/session/envelope.go).

import "strings"

// SyncStatus is Sync that also reports the status ($?) of what ran last, an answer's included.
func (s *Shell) SyncStatus() (int, bool) {
	s.flushStatus()
	s.dirty = true
	if !s.Sync() {
		return 0, false
	}
	if s.status > 0 {
		return s.status, true
	}
	return 0, true
}

// ForwardInList sends unit as a command on the left of && (an envelope's command), where bash's
// set -e does not act: as script text, in a group that gives it the session's stdin. (Through the
// batch's eval, a failure would end the shell: `\builtin eval` is a simple command, and fails
// with it; only an eval called by its own name, or through `command`, runs its text where set -e
// does not act.)
//
// Aliases: the group is one compound command, which bash reads whole before it runs any of it,
// so the unit would be read with the setting the top level has, expansion off once a session
// named an alias (session_aliases.go), and its own aliases not expanded. So where the top level
// has expansion off, the unit goes as a batch run by `\command eval ... && \builtin :`: the
// batch line is read with expansion off, the prelude gives the session's setting back before the
// unit is read, the tail takes it away again. Unless the session may have defined a function
// named command (which would take that over), or under xtrace or verbose or once a unit
// duplicated stdin (script text, as Flush sends it).
func (s *Shell) ForwardInList(unit string) {
	s.Flush()
	s.flushStatus()
	s.commandFunc = s.commandFunc || definesCommand(unit)
	s.dirty = true
	if s.aliasesOff && !s.commandFunc && !s.tracing && !s.dupsStdin && !dupsStdin(unit) && !mentionsTracing(unit) &&
		strings.IndexByte(unit, 0) < 0 {
		s.aliases = s.aliases || mentionsAliases(unit)
		s.pipes = s.pipes || mentionsPipestatus(unit)
		s.errexit = s.errexit || mentionsErrexit(unit)
		s.traps = s.traps || mentionsTraps(unit)
		s.history = s.history || mentionsHistory(unit)
		s.sendBatch(strings.TrimSuffix(unit, "\n")+"\n", `\command eval`, " && "+bi+":")
		return
	}
	s.write("{ " + s.groupHeadKeep() + "{ " + strings.TrimSuffix(unit, "\n") + "\n} && " + bi + ":" + s.groupTail)
}

// definesCommand tells whether a unit may define a function named command: the word followed by
// "(" or following "function".
func definesCommand(unit string) bool {
	for i := 0; ; {
		j := strings.Index(unit[i:], "command")
		if j < 0 {
			return false
		}
		j += i
		i = j + len("command")
		if strings.HasPrefix(strings.TrimLeft(unit[i:], " \t"), "(") || strings.HasSuffix(strings.TrimRight(unit[:j], " \t"), "function") {
			return true
		}
	}
}

// SetStatusInList is SetStatus for an answer on the left of && or || (an envelope's command),
// where bash's set -e does not act: a failing status does not end the shell.
func (s *Shell) SetStatusInList(code int) {
	s.status, s.restore, s.pipestatus = code, true, ""
	if code != 0 {
		s.flushStatus()
		s.dirty = true
	}
}

// Replace makes the shell exec a fresh real shell (path, with arg0 as its $0) that reads the
// rest of the script, as `exec SELF -c CMD` starts a fresh process: only the environment, the
// working directory and the descriptors (the plumbing's included) pass to it. The line is
// sent bare: a group's redirections would be the new shell's.
func (s *Shell) Replace(path, arg0 string) {
	s.Flush()
	s.flushStatus()
	if arg0 == "" {
		arg0 = path
	}
	s.write("exec -a " + shellQuote(arg0) + " " + shellQuote(path) + " -s\n")
	s.status, s.restore = -1, false
	s.dirty = true
}
