package main

// Transcript commands for the turn's keeper (SPEC 12), and the clean-up that ends every keeper a
// transcript started.

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/spear-shell/spear-shell/testdata/testkit"
)

func init() {
	registerCommands(map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"procs":          cmdProcs,
		"kill-keeper":    cmdKillKeeper,
		"await-audit":    cmdAwaitAudit,
		"stale-socket":   cmdStaleSocket,
		"audit-same":     cmdAuditSame,
		"foreign-socket": cmdForeignSocket,
		"short-runtime":  cmdShortRuntime,
	})
}

// short-runtime: sets XDG_RUNTIME_DIR to a new private directory with a short path, removed at
// the end, so that a default state directory's socket fits a unix socket address (beside a
// long $WORK it may not: the answer then starts its providers itself, keeper_unavailable).
func cmdShortRuntime(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: short-runtime")
	}
	dir, err := os.MkdirTemp("", "sr-")
	ts.Check(err)
	ts.Defer(func() { os.RemoveAll(dir) })
	ts.Setenv("XDG_RUNTIME_DIR", dir)
}

// procs [-wait] WORD... N: exactly N live processes have a command line containing every WORD
// ($WORK expanded). With -wait, waits until that holds (up to a minute).
func cmdProcs(ts *testscript.TestScript, neg bool, args []string) {
	wait := len(args) > 0 && args[0] == "-wait"
	if wait {
		args = args[1:]
	}
	if neg || len(args) < 2 {
		ts.Fatalf("usage: procs [-wait] WORD... N")
	}
	n, err := strconv.Atoi(args[len(args)-1])
	ts.Check(err)
	words := make([]string, len(args)-1)
	for i, w := range args[:len(args)-1] {
		words[i] = expandVars(ts, w)
	}
	var got []int
	testkit.Poll(func() bool {
		got = testkit.LivePids(words...)
		return len(got) == n || !wait
	})
	if len(got) != n {
		ts.Fatalf("procs %v: %d live processes %v, want %d", words, len(got), got, n)
	}
}

// kill-keeper: SIGKILLs the keeper of the last keeper_started record of $WORK/audit.jsonl and
// waits until it is gone.
func cmdKillKeeper(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: kill-keeper")
	}
	pid := 0
	records, err := testkit.Records(ts.MkAbs("audit.jsonl"))
	ts.Check(err)
	for _, m := range records {
		if p, ok := m["pid"].(float64); ok && m["event"] == "keeper_started" {
			pid = int(p)
		}
	}
	if pid == 0 {
		ts.Fatalf("kill-keeper: no keeper_started record")
	}
	ts.Check(syscall.Kill(pid, syscall.SIGKILL))
	if testkit.Poll(func() bool { return testkit.Exited(pid) }) {
		return
	}
	ts.Fatalf("kill-keeper: %d still runs", pid)
}

// await-audit [-count=N] SPEC: waits (up to a minute) until N records (default 1) of
// $WORK/audit.jsonl match SPEC (as audit matches it).
func cmdAwaitAudit(ts *testscript.TestScript, neg bool, args []string) {
	awaitRecords(ts, "await-audit", neg, args, func() []map[string]any {
		// A record being written is whole (one write), but the file may not exist yet.
		data, _ := os.ReadFile(ts.MkAbs("audit.jsonl"))
		var records []map[string]any
		for line := range strings.SplitSeq(string(data), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil {
				records = append(records, m)
			}
		}
		return records
	})
}

// stale-socket PATH: leaves a unix socket at PATH that nobody listens on, as a keeper killed
// with SIGKILL does.
func cmdStaleSocket(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: stale-socket PATH")
	}
	path := ts.MkAbs(expandVars(ts, args[0]))
	ts.Check(os.MkdirAll(filepath.Dir(path), 0o700))
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	ts.Check(err)
	ln.SetUnlinkOnClose(false)
	ts.Check(ln.Close())
}

// audit-same TURN1 TURN2: the records of the two turns in $WORK/audit.jsonl are the same, in
// order, but for the keeper's own events and what differs between any two turns or processes
// (time, turn, audit id, duration, pid, workspace-independent state).
func cmdAuditSame(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: audit-same TURN1 TURN2")
	}
	data, err := os.ReadFile(ts.MkAbs("audit.jsonl"))
	ts.Check(err)
	of := map[string][]string{}
	for line := range strings.SplitSeq(string(data), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil {
			continue
		}
		turn, _ := m["turn"].(string)
		if ev, _ := m["event"].(string); strings.HasPrefix(ev, "keeper_") {
			continue
		}
		for _, k := range []string{"time", "turn", "audit_id", "duration_ms", "pid"} {
			delete(m, k)
		}
		b, err := json.Marshal(m) // keys sorted
		ts.Check(err)
		of[turn] = append(of[turn], string(b))
	}
	a, b := of[args[0]], of[args[1]]
	if len(a) == 0 {
		ts.Fatalf("audit-same: no record of turn %s", args[0])
	}
	for i := range max(len(a), len(b)) {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			ts.Fatalf("audit-same: record %d differs:\n%s: %s\n%s: %s", i, args[0], x, args[1], y)
		}
	}
}

// foreign-socket PATH: a unix socket at PATH whose listener runs as another user (uid 65534),
// as a keeper of another user would; needs root. It listens until the transcript ends.
func cmdForeignSocket(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: foreign-socket PATH")
	}
	path := ts.MkAbs(expandVars(ts, args[0]))
	ts.Check(os.MkdirAll(filepath.Dir(path), 0o700))
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	ts.Check(err)
	sock := os.NewFile(uintptr(fd), "socket")
	defer sock.Close()
	ts.Check(syscall.Bind(fd, &syscall.SockaddrUnix{Name: path}))
	// The listener's credentials are taken when it calls listen: the other user does.
	python := "/usr/bin/python3" // the other user cannot run a python3 under root's home
	if _, err := os.Stat(python); err != nil {
		ts.Fatalf("foreign-socket: %v", err)
	}
	cmd := exec.Command(python, "-c", "import socket, sys, time\n"+
		"s = socket.socket(fileno=3)\ns.listen()\nprint('ready', flush=True)\ntime.sleep(600)")
	cmd.ExtraFiles = []*os.File{sock}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.StdoutPipe()
	ts.Check(err)
	ts.Check(cmd.Start())
	ts.Defer(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "ready\n" {
		ts.Fatalf("foreign-socket: the listener did not start: %q", line)
	}
}
