// Package testkit is what the test suites of several packages share: building the project's
// binaries, a scratch directory outside /tmp, the audit file read and matched, the live
// processes read from /proc (by command line, or by a variable in their environment, with their
// memory), the reference Node servers' entries, and waiting for a condition. Only tests (and the
// bench, which TestLayers leaves out) import it
// (cmd/internal/wire's TestLayers fails a package that does); it imports nothing of ours.
package testkit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Main runs a package's tests around a new temporary directory, which setup fills first (the
// binaries the tests run, built into it) and which is removed after them. A goroutine the tests
// leave fails the run (goleak). It does not return.
func Main(m *testing.M, prefix string, setup func(dir string) error) {
	dir, err := os.MkdirTemp("", prefix)
	if err == nil {
		err = setup(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// Root is the module's directory.
func Root() string {
	_, self, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(self), "..", "..")
}

// Build runs `go build -o out args...` in the module's directory: out is a file, or a
// directory when it ends in "/"; args are packages ("./cmd/spear-shell") and flags. The build is
// static (CGO_ENABLED=0, as `make build` builds) unless args hold -race, which needs cgo.
func Build(out string, args ...string) error {
	cmd := exec.Command("go", append([]string{"build", "-o", out}, args...)...)
	cmd.Dir, cmd.Env = Root(), os.Environ()
	if !slices.Contains(args, "-race") {
		cmd.Env = append(cmd.Env, "CGO_ENABLED=0")
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return nil
}

// Scratch is a new private directory in the user's cache directory, its links resolved: outside
// /tmp, which a turn's boundary replaces with its own and counts among the writable roots.
func Scratch(prefix string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(cache, 0o700); err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(cache, prefix)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return real, nil
}

// ScratchDir is Scratch for one test, removed when it ends.
func ScratchDir(t testing.TB, prefix string) string {
	t.Helper()
	dir, err := Scratch(prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// Run runs cmd and returns what it wrote and its exit status; a command that could not be
// run (not one that exited with a failure) fails the test.
func Run(t testing.TB, cmd *exec.Cmd) (stdout, stderr string, exit int) {
	t.Helper()
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if _, isExit := err.(*exec.ExitError); err != nil && !isExit {
		t.Fatalf("%s %v: %v", filepath.Base(cmd.Path), cmd.Args[1:], err)
	}
	return o.String(), e.String(), cmd.ProcessState.ExitCode()
}

// Records are the records of the audit file at path; every one must parse and carry time,
// event, turn and session. The error of a file that cannot be read is os.ReadFile's.
func Records(path string) ([]map[string]any, error) {
	return records(path, func(m map[string]any) string {
		for _, k := range []string{"time", "event", "turn", "session"} {
			if _, ok := m[k]; !ok {
				return "record without " + strconv.Quote(k)
			}
		}
		return ""
	})
}

// BrokerRecords are the broker's own records in the file at path (its broker.audit, SPEC 14):
// every one must parse and carry time, event and "broker": true, and no turn.
func BrokerRecords(path string) ([]map[string]any, error) {
	return records(path, func(m map[string]any) string {
		_, hasTime := m["time"]
		_, hasEvent := m["event"]
		_, hasTurn := m["turn"]
		if !hasTime || !hasEvent || m["broker"] != true || hasTurn {
			return "not a broker record (time, event, broker true, no turn)"
		}
		return ""
	})
}

// records reads the JSON lines of path, each of which bad must find nothing wrong with.
func records(path string, bad func(map[string]any) string) ([]map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return nil, fmt.Errorf("audit: malformed line %q: %v", sc.Text(), err)
		}
		if why := bad(m); why != "" {
			return nil, fmt.Errorf("audit: %s: %s", why, sc.Text())
		}
		out = append(out, m)
	}
	return out, sc.Err()
}

// Match reports whether record m matches spec, event[,key=value...]: the event, and each key
// with that value, strings compared as they are and anything else as compact JSON. A value may
// hold commas: a part that is not a lower-case key and "=" belongs to the value before it.
func Match(m map[string]any, spec string) bool {
	var parts []string
	for i, p := range strings.Split(spec, ",") {
		if k, _, found := strings.Cut(p, "="); i > 1 && (!found || strings.Trim(k, "abcdefghijklmnopqrstuvwxyz_") != "") {
			parts[len(parts)-1] += "," + p
			continue
		}
		parts = append(parts, p)
	}
	if m["event"] != parts[0] {
		return false
	}
	for _, kv := range parts[1:] {
		k, v, _ := strings.Cut(kv, "=")
		got, ok := m[k]
		if !ok {
			return false
		}
		s, isString := got.(string)
		if !isString {
			b, _ := json.Marshal(got)
			s = string(b)
		}
		if s != v {
			return false
		}
	}
	return true
}

// LivePids returns the live (not zombie) processes, this one aside, whose command line holds
// every word.
func LivePids(words ...string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil || pid == os.Getpid() {
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

// Marked returns the live processes whose environment holds mark (KEY=VALUE), with their
// summed resident and proportional memory in KiB (/proc/PID/smaps_rollup): how the broker's
// tests and its bench count and weigh the servers they started.
func Marked(mark string) (pids []int, rssKiB, pssKiB int64) {
	want := []byte("\x00" + mark + "\x00")
	ents, _ := os.ReadDir("/proc")
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "environ"))
		if err != nil || !bytes.Contains(append([]byte{0}, env...), want) {
			continue
		}
		roll, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "smaps_rollup"))
		if err != nil {
			continue // gone meanwhile
		}
		pids = append(pids, pid)
		for line := range strings.SplitSeq(string(roll), "\n") {
			f := strings.Fields(line)
			if len(f) != 3 || f[2] != "kB" {
				continue
			}
			n, _ := strconv.ParseInt(f[1], 10, 64)
			switch f[0] {
			case "Rss:":
				rssKiB += n
			case "Pss:":
				pssKiB += n
			}
		}
	}
	return pids, rssKiB, pssKiB
}

// ReferenceServers are capabilities.json entries for three of the reference Node servers
// (ev: server-everything, mem: server-memory, fs: server-filesystem) under mods (a
// node_modules directory) run by node: scope global, their reading tools in read, each with
// mark (KEY=VALUE) in its environment so that Marked finds its processes. mem keeps its graph
// in dir and fs serves dir. shared makes them share project, restarted after 0.2 s (SPEC 14's
// six-turn run, in the broker's tests and its bench).
func ReferenceServers(node, mods, dir, mark string, shared bool) []map[string]any {
	script := func(pkg string) string { return filepath.Join(mods, "@modelcontextprotocol", pkg, "dist", "index.js") }
	key, value, _ := strings.Cut(mark, "=")
	entries := []map[string]any{
		{"id": "ev", "command": []string{node, script("server-everything"), "stdio"}, "read": []string{"echo", "get-sum"},
			"env": map[string]string{}},
		{"id": "mem", "command": []string{node, script("server-memory")}, "read": []string{"read_graph", "search_nodes"},
			"env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")}},
		{"id": "fs", "command": []string{node, script("server-filesystem"), dir}, "read": []string{"list_allowed_directories", "list_directory"},
			"env": map[string]string{}},
	}
	for _, e := range entries {
		e["scope"] = "global"
		e["env"].(map[string]string)[key] = value
		if shared {
			e["share"], e["restart_delay"] = "project", 0.2
		}
	}
	return entries
}

// ProcStat is the fields of a /proc stat file (/proc/PID/stat, /proc/PID/task/TID/stat) after
// the command name: state, parent, process group and the rest. The name may hold spaces and
// parentheses, so they start after its last ')'. nil when the file cannot be read.
func ProcStat(path string) []string {
	stat, err := os.ReadFile(path)
	i := bytes.LastIndexByte(stat, ')')
	if err != nil || i < 0 {
		return nil
	}
	return strings.Fields(string(stat[i+1:]))
}

// Exited tells whether pid has exited with all its threads: gone, or a zombie with no thread
// left but itself. An empty cmdline is not enough, nor is a zombie leader: the kernel drops a
// dying process's memory before its descriptors, and the other threads close them after the
// leader is a zombie; until then a listening socket of its still takes connections.
func Exited(pid int) bool {
	proc := "/proc/" + strconv.Itoa(pid)
	f := ProcStat(proc + "/stat")
	if f == nil {
		return true
	}
	if len(f) == 0 || f[0] != "Z" && f[0] != "X" {
		return false
	}
	tasks, err := os.ReadDir(proc + "/task")
	return err != nil || len(tasks) <= 1
}

// Poll reports whether cond holds within a minute, which only a broken build reaches, asking
// every 10 ms.
func Poll(cond func() bool) bool {
	for range 6000 {
		if cond() {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// AwaitGone waits (up to a minute) until no live process's command line holds every word.
func AwaitGone(words ...string) bool {
	return Poll(func() bool { return len(LivePids(words...)) == 0 })
}

// StopKeepers ends, with SIGTERM, every keeper whose command line names a file under dir (its
// manifest), and waits until they are gone.
func StopKeepers(dir string) bool {
	for _, pid := range LivePids("--spear-keeper", dir) {
		syscall.Kill(pid, syscall.SIGTERM)
	}
	return AwaitGone("--spear-keeper", dir)
}
