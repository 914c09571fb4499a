package main

// Transcript commands for the turn's keeper (SPEC 12), and the clean-up that ends every keeper a
// transcript started.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	registerCommands(map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"procs":        cmdProcs,
		"kill-keeper":  cmdKillKeeper,
		"await-audit":  cmdAwaitAudit,
		"stale-socket": cmdStaleSocket,
	})
}

// livePids returns the live (not zombie) processes whose command line contains every word.
func livePids(words ...string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "cmdline"))
		if err != nil || len(cmdline) == 0 {
			continue // gone, or a zombie (it has no command line)
		}
		line := string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
		all := true
		for _, w := range words {
			all = all && strings.Contains(line, w)
		}
		if all {
			pids = append(pids, pid)
		}
	}
	return pids
}

// awaitGone waits (up to a minute, which only a broken build reaches) until no live process
// matches words.
func awaitGone(words ...string) bool {
	for range 6000 {
		if len(livePids(words...)) == 0 {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// stopKeepers ends, with SIGTERM, every keeper whose command line names a file under dir (its
// manifest), so that no transcript leaves one running, and waits for them and their providers.
func stopKeepers(dir string) {
	for _, pid := range livePids("--spear-keeper", dir) {
		syscall.Kill(pid, syscall.SIGTERM)
	}
	awaitGone("--spear-keeper", dir)
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
	for range 6000 {
		got := livePids(words...)
		if len(got) == n {
			return
		}
		if !wait {
			ts.Fatalf("procs %v: %d live processes %v, want %d", words, len(got), got, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	ts.Fatalf("procs %v: never %d", words, n)
}

// kill-keeper: SIGKILLs the keeper of the last keeper_started record of $WORK/audit.jsonl and
// waits until it is gone.
func cmdKillKeeper(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: kill-keeper")
	}
	pid := 0
	data, err := os.ReadFile(ts.MkAbs("audit.jsonl"))
	ts.Check(err)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var m struct {
			Event string
			Pid   int
		}
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.Event == "keeper_started" {
			pid = m.Pid
		}
	}
	if pid == 0 {
		ts.Fatalf("kill-keeper: no keeper_started record")
	}
	ts.Check(syscall.Kill(pid, syscall.SIGKILL))
	for range 6000 {
		if cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); err != nil || len(cmdline) == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	ts.Fatalf("kill-keeper: %d still runs", pid)
}

// await-audit SPEC: waits (up to a minute) until a record of $WORK/audit.jsonl matches SPEC
// (as audit matches it).
func cmdAwaitAudit(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: await-audit SPEC")
	}
	for range 6000 {
		if data, err := os.ReadFile(ts.MkAbs("audit.jsonl")); err == nil {
			for line := range strings.SplitSeq(string(data), "\n") {
				var m map[string]any
				if json.Unmarshal([]byte(line), &m) == nil && auditMatch(m, args[0]) {
					return
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	ts.Fatalf("await-audit: no record matching %s", args[0])
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
