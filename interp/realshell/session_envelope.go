package realshell

// What running an agent terminal's envelope needs of the real shell (interp/envelope_run.go).

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
