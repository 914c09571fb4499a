package broker

import (
	"runtime"
	"syscall"
)

// spawner forks every upstream from one OS thread that lives as long as the broker. A
// parent-death signal (prctl PR_SET_PDEATHSIG, Go's SysProcAttr.Pdeathsig) is sent when the
// thread that forked the child ends, not the process: Go ends a thread when a goroutine locked
// to it returns, so a fork from an arbitrary goroutine could kill its upstream early, or never.
// With it an upstream's leader is killed when the broker is; its group's other members are
// reaped by the next broker (reap.go).
type spawner struct {
	reqs chan spawnReq
	done chan struct{}
}

type spawnReq struct {
	path  string
	argv  []string
	attr  *syscall.ProcAttr
	reply chan spawnRep
}

type spawnRep struct {
	pid int
	err error
}

func newSpawner() *spawner {
	s := &spawner{reqs: make(chan spawnReq), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		runtime.LockOSThread()
		// Unlocked at the end, not exited locked: the thread then lives on with the process.
		defer runtime.UnlockOSThread()
		for r := range s.reqs {
			sys := *r.attr.Sys
			sys.Pdeathsig = syscall.SIGKILL
			attr := *r.attr
			attr.Sys = &sys
			pid, err := syscall.ForkExec(r.path, r.argv, &attr)
			r.reply <- spawnRep{pid, err}
		}
	}()
	return s
}

// spawn is mcpstdio.Options.Spawn.
func (s *spawner) spawn(path string, argv []string, attr *syscall.ProcAttr) (int, error) {
	if attr.Sys == nil {
		attr.Sys = &syscall.SysProcAttr{}
	}
	reply := make(chan spawnRep, 1)
	s.reqs <- spawnReq{path, argv, attr, reply}
	r := <-reply
	return r.pid, r.err
}

// close ends the spawner's goroutine; nothing may be spawned after.
func (s *spawner) close() {
	close(s.reqs)
	<-s.done
}
