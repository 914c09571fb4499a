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
// batch's eval, a failure would end the shell: eval is a simple command, and fails with it.)
func (s *Shell) ForwardInList(unit string) {
	s.Flush()
	s.flushStatus()
	s.write("{ " + s.groupHeadKeep() + "{ " + strings.TrimSuffix(unit, "\n") + "\n} && " + bi + ":" + s.groupTail)
	s.dirty = true
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
