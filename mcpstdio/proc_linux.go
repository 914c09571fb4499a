package mcpstdio

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// awaitExit blocks until process pid has exited, leaving it a zombie (WNOWAIT). It waits on
// a pidfd through the runtime's poller, which holds no thread per server (twenty servers
// would otherwise hold twenty threads, each costly to create); without pidfds, waitid blocks.
func awaitExit(pid int) {
	if fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK); err == nil {
		f := os.NewFile(uintptr(fd), "pidfd")
		defer f.Close()
		if rc, err := f.SyscallConn(); err == nil {
			exited := false
			rerr := rc.Read(func(fd uintptr) bool {
				var info unix.Siginfo // zeroed: Linux leaves it so while the process runs
				err := unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOWAIT|unix.WNOHANG, nil)
				// SIGCHLD in si_signo means exited; an error, that nothing is left to wait for.
				exited = !errors.Is(err, syscall.EINTR) && (err != nil || info.Signo != 0)
				return exited
			})
			if rerr == nil && exited {
				return
			}
		}
	}
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, syscall.EINTR) {
			return
		}
	}
}

// hasExited reports, without waiting or reaping, whether process pid has exited.
func hasExited(pid int) bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT|unix.WNOHANG, nil)
	return err != nil && !errors.Is(err, syscall.EINTR) || info.Signo != 0
}

// reap releases the exited process pid.
func reap(pid int) {
	var ws syscall.WaitStatus
	for {
		if _, err := syscall.Wait4(pid, &ws, 0, nil); !errors.Is(err, syscall.EINTR) {
			return
		}
	}
}

// groupAlive reports whether process group pgid has a member that is not a zombie.
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	procs, err := ReadProcs()
	if err != nil {
		return true // cannot tell: assume the worst
	}
	for _, st := range procs {
		if st.Pgrp == pgid && st.State != 'Z' && st.State != 'X' {
			return true
		}
	}
	return false
}

// ReadProcs reads the stat of every process /proc lists now, by process id (one that ends
// meanwhile is left out).
func ReadProcs() (map[int]ProcStat, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	procs := make(map[int]ProcStat, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := ReadProcStat(pid); err == nil {
			procs[pid] = st
		}
	}
	return procs, nil
}

// ProcStat is what /proc/PID/stat says of a process, as those who stop servers' process
// groups read it (this client, and the broker reaping its orphans).
type ProcStat struct {
	State         byte // 'Z' a zombie (it has exited), 'X' dead
	Pgrp, Session int
	Start         uint64 // clock ticks after boot (field 22): tells a process from a later one of its pid
}

// ReadProcStat reads /proc/PID/stat.
func ReadProcStat(pid int) (ProcStat, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ProcStat{}, err
	}
	st, err := parseStat(data)
	if err != nil {
		return ProcStat{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return st, nil
}

// parseStat reads a /proc/PID/stat line, "pid (comm) state ppid pgrp session ...", where comm
// may hold spaces and parentheses: the fields follow the last ')'.
func parseStat(stat []byte) (ProcStat, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return ProcStat{}, errors.New("no command name")
	}
	f := bytes.Fields(stat[i+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return ProcStat{}, fmt.Errorf("%d fields after the command name", len(f))
	}
	// f[0] is field 3 (state): field n is f[n-3].
	st := ProcStat{State: f[0][0]}
	var err1, err2, err3 error
	st.Pgrp, err1 = strconv.Atoi(string(f[2]))
	st.Session, err2 = strconv.Atoi(string(f[3]))
	st.Start, err3 = strconv.ParseUint(string(f[19]), 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return ProcStat{}, err
	}
	return st, nil
}
