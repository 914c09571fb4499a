package broker

// Each broker records its upstreams' process groups, each with its leader's start time, in a
// file of its own in the state parent. A broker that starts reaps the groups of every broker
// whose file is left and who no longer runs (it was killed): a group is killed only when its
// leader still runs with the recorded start time, or, its leader gone, when members of that
// group and session remain that started no earlier than it (a process id in use as a group or
// session id is not given out again). No orphan is left, and no stranger is killed.

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/spear-shell/spear-shell/mcpstdio"
)

// readStat is what /proc/PID/stat says of pid: its state, group, session and start time.
func readStat(pid int) (mcpstdio.ProcStat, error) { return mcpstdio.ReadProcStat(pid) }

// bootID tells this boot from another: start times count from boot.
func bootID() string {
	b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(b))
}

// record is one line of a broker's file: its own header (Broker set) or an upstream's group.
type record struct {
	Broker int    `json:"broker,omitempty"`
	Pgid   int    `json:"pgid,omitempty"`
	Start  uint64 `json:"start"`
	Boot   string `json:"boot"`
}

// procFile is this broker's record of its upstreams.
type procFile struct {
	path string
	head record

	mu     sync.Mutex
	groups map[int]uint64
}

func newProcFile(w Where) *procFile {
	pid := os.Getpid()
	st, _ := readStat(pid)
	return &procFile{path: w.Procs + strconv.Itoa(pid) + ".procs", head: record{Broker: pid, Start: st.Start, Boot: bootID()}, groups: map[int]uint64{}}
}

// add records upstream group pgid (its leader's start time read now, while it runs).
func (f *procFile) add(pgid int) {
	st, err := readStat(pgid)
	if err != nil {
		return // it is gone already
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.groups[pgid] = st.Start
	f.write()
}

// remove forgets group pgid once it is stopped.
func (f *procFile) remove(pgid int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.groups[pgid]; ok {
		delete(f.groups, pgid)
		f.write()
	}
}

// write replaces the file (a new file renamed over it: a reader never sees half of it); f.mu held.
func (f *procFile) write() {
	var b []byte
	for _, r := range append([]record{f.head}, f.list()...) {
		line, _ := json.Marshal(r)
		b = append(append(b, line...), '\n')
	}
	tmp := f.path + ".new"
	if err := os.WriteFile(tmp, b, 0o600); err == nil {
		os.Rename(tmp, f.path)
	}
}

func (f *procFile) list() []record {
	out := make([]record, 0, len(f.groups))
	for g, s := range f.groups {
		out = append(out, record{Pgid: g, Start: s, Boot: f.head.Boot})
	}
	return out
}

// drop removes the file at the broker's end, its upstreams stopped.
func (f *procFile) drop() { os.Remove(f.path) }

// reapOrphans kills the upstream groups of every broker of w that left its file and no longer
// runs, and removes those files. It returns how many groups it killed.
func reapOrphans(w Where) int {
	files, _ := filepath.Glob(w.Procs + "*.procs")
	boot := bootID()
	killed := 0
	for _, path := range files {
		recs := readRecords(path)
		if len(recs) == 0 || recs[0].Broker == 0 {
			os.Remove(path)
			continue
		}
		head := recs[0]
		if st, err := readStat(head.Broker); err == nil && st.State != 'Z' && st.Start == head.Start && head.Boot == boot {
			continue // that broker still runs (draining, or another one taking over); a zombie does not
		}
		for _, r := range recs[1:] {
			if r.Boot == boot && killGroup(r.Pgid, r.Start) {
				killed++
			}
		}
		os.Remove(path)
	}
	return killed
}

func readRecords(path string) []record {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []record
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r record
		if json.Unmarshal(sc.Bytes(), &r) == nil {
			out = append(out, r)
		}
	}
	return out
}

// killGroup SIGKILLs group pgid when it is still the upstream's: its leader runs with the
// recorded start time, or, the leader gone, a member of its group and session remains that
// started no earlier than the leader did.
func killGroup(pgid int, start uint64) bool {
	if pgid <= 1 {
		return false
	}
	if st, err := readStat(pgid); err == nil {
		if st.Start != start || st.Pgrp != pgid {
			return false // the id names another process now
		}
		return syscall.Kill(-pgid, syscall.SIGKILL) == nil
	}
	procs, _ := mcpstdio.ReadProcs()
	for _, st := range procs {
		if st.Pgrp == pgid && st.Session == pgid && st.Start >= start {
			return syscall.Kill(-pgid, syscall.SIGKILL) == nil
		}
	}
	return false
}
