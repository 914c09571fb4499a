package providers

// The env_files this turn's servers were started with, as they were then. The answering
// process redacts with the values it reads itself, afresh; a holder of servers (the keeper)
// passes on what its servers say redacted with the values it started them with once one of
// those files has changed since, when the answering process no longer knows them (SPEC 7).

import (
	"os"
	"sync"
	"syscall"
	"time"
)

type envStamp struct {
	size int64
	mod  time.Time
	ino  uint64
}

type envStamps struct {
	mu sync.Mutex
	m  map[string]envStamp
}

func stampOf(path string) (envStamp, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return envStamp{}, false
	}
	s := envStamp{size: fi.Size(), mod: fi.ModTime()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.ino = st.Ino
	}
	return s, true
}

// noteEnvFile records path as a server of the turn is started with it: taken before the file
// is read, so that a change while it is read counts as a change.
func (e *envStamps) noteEnvFile(path string) {
	s, ok := stampOf(path)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m == nil {
		e.m = map[string]envStamp{}
	}
	if old, seen := e.m[path]; seen && old != s {
		s = envStamp{size: -1} // two starts saw two versions: changed for good
	} else if !ok {
		s = envStamp{size: -1}
	}
	e.m[path] = s
}

// EnvFileChanged reports whether an env_file a server of this turn was started with has
// changed since (or cannot be inspected now).
func (t *Turn) EnvFileChanged() bool {
	e := &t.envFiles
	e.mu.Lock()
	defer e.mu.Unlock()
	for path, was := range e.m {
		if now, ok := stampOf(path); !ok || now != was {
			return true
		}
	}
	return false
}
