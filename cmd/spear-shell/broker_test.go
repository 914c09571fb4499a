package main

// Transcript commands for the broker (SPEC 14, testdata/script/broker_*.txtar), which run real
// Node MCP servers (testdata/broker/server.mjs on the TypeScript SDK, and the reference servers
// of testdata/interop), and the clean-up that ends every broker and upstream a transcript
// started. The broker is found by what it must do, not by how it is built: the process that
// listens on a broker-*.sock in the transcript's state parent.

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/spear-shell/spear-shell/policy"
	"github.com/spear-shell/spear-shell/testdata/testkit"
)

func init() {
	registerCommands(map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"broker-home":   cmdBrokerHome,
		"broker-caps":   cmdBrokerCaps,
		"baudit":        cmdBaudit,
		"await-baudit":  cmdAwaitBaudit,
		"broker-procs":  cmdBrokerProcs,
		"kill-broker":   cmdKillBroker,
		"kill-procs":    cmdKillProcs,
		"pid-of":        cmdPidOf,
		"await-record":  cmdAwaitRecord,
		"secret-token":  cmdSecretToken,
		"secret-absent": cmdSecretAbsent,
	})
}

// brokerDeps are node (symlinks resolved), the test server and testdata/interop's node_modules,
// or why says what is missing.
func brokerDeps() (node, server, mods, why string) {
	server, _ = filepath.Abs("../../testdata/broker/server.mjs")
	mods, _ = filepath.Abs("../../testdata/interop/node_modules")
	node, err := exec.LookPath("node")
	if err == nil {
		node, err = filepath.EvalSymlinks(node)
	}
	if err != nil {
		return "", "", "", fmt.Sprintf("node: %v", err)
	}
	if _, err := os.Stat(filepath.Join(mods, "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		return "", "", "", fmt.Sprintf("the npm MCP servers are not installed (make deps): %v", err)
	}
	return node, server, mods, ""
}

// broker-home CAPS.json: lays out $WORK/home (SPEAR_HOME) with projects "demo" (rooted at
// $WORK/ws) and "other" (rooted at $WORK/other), both created, and capabilities.json from CAPS
// with $WORK, $NODE (node), $SERVER (testdata/broker/server.mjs), $MODS (testdata/interop's
// node_modules), $TOKEN (secret-token's, once made), $FAKEPROVIDER and $BIN expanded. Project roots lie below $WORK, not at it, so
// that SPEAR_HOME, env_files and the record files lie outside every root (SPEC 14: a shared
// entry's env_file there is never used). Without the npm servers it fails saying so (each
// transcript skips first without node: [!exec:node] skip). It also arranges that every broker and
// upstream of the transcript is gone when it ends.
func cmdBrokerHome(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: broker-home CAPS.json")
	}
	work := ts.Getenv("WORK")
	// A runtime directory of its own, short: the broker's socket, broker-<32 hex>.sock in the
	// state parent under it, must fit 107 bytes, which $WORK-run does not leave room for.
	run, err := os.MkdirTemp("", "sb-")
	ts.Check(err)
	ts.Setenv("XDG_RUNTIME_DIR", run)
	ts.Defer(func() {
		stopBrokers(run, work)
		os.RemoveAll(run)
	})
	home, ws, other := ts.MkAbs("home"), ts.MkAbs("ws"), ts.MkAbs("other")
	for _, d := range []string{home, ws, other} {
		ts.Check(os.MkdirAll(d, 0o755))
	}
	ts.Check(os.Chmod(home, 0o700))
	projects := map[string]any{"projects": []any{
		map[string]any{"name": "demo", "root": ws, "families": []string{"fw"}},
		map[string]any{"name": "other", "root": other},
	}}
	b, err := json.MarshalIndent(projects, "", "  ")
	ts.Check(err)
	ts.Check(os.WriteFile(filepath.Join(home, "projects.json"), b, 0o644))
	writeBrokerCaps(ts, args[0])
}

// broker-caps CAPS.json: replaces $WORK/home/capabilities.json with CAPS, expanded as
// broker-home expands it (an edit of the configuration while the broker runs).
func cmdBrokerCaps(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: broker-caps CAPS.json")
	}
	writeBrokerCaps(ts, args[0])
}

func writeBrokerCaps(ts *testscript.TestScript, from string) {
	node, server, mods, why := brokerDeps()
	if why != "" {
		ts.Fatalf("broker-caps: %s", why)
	}
	caps, err := os.ReadFile(ts.MkAbs(from))
	ts.Check(err)
	token, _ := os.ReadFile(ts.MkAbs("token")) // secret-token's, for an entry's env
	s := strings.NewReplacer("$NODE", node, "$SERVER", server, "$MODS", mods, "$TOKEN", string(token)).Replace(string(caps))
	// Written aside and renamed, as an editor saves: a reader never sees half a file.
	tmp := ts.MkAbs("home/.capabilities.json.new")
	ts.Check(os.WriteFile(tmp, []byte(expandVars(ts, s)), 0o644))
	ts.Check(os.Chmod(tmp, 0o644))
	ts.Check(os.Rename(tmp, ts.MkAbs("home/capabilities.json")))
}

// brokerSockets are the broker sockets of the state parent under runtimeDir.
func brokerSockets(runtimeDir string) []string {
	socks, _ := filepath.Glob(filepath.Join(runtimeDir, "spear", "broker-*.sock"))
	return socks
}

// brokerPids are the live processes listening on a broker socket under runtimeDir: the
// listening sockets of /proc/net/unix at those paths, and the processes holding them.
func brokerPids(runtimeDir string) []int {
	socks := brokerSockets(runtimeDir)
	if len(socks) == 0 {
		return nil
	}
	data, err := os.ReadFile("/proc/net/unix")
	if err != nil {
		return nil
	}
	inodes := map[string]bool{}
	for line := range strings.SplitSeq(string(data), "\n") {
		f := strings.Fields(line)
		// Num RefCount Protocol Flags Type St Inode Path; flag 0x10000 is a listening socket
		if len(f) < 8 {
			continue
		}
		flags, _ := strconv.ParseUint(f[3], 16, 64)
		for _, s := range socks {
			if f[7] == s && flags&0x10000 != 0 {
				inodes["socket:["+f[6]+"]"] = true
			}
		}
	}
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		fds, _ := os.ReadDir(filepath.Join("/proc", ent.Name(), "fd"))
		for _, fd := range fds {
			if l, err := os.Readlink(filepath.Join("/proc", ent.Name(), "fd", fd.Name())); err == nil && inodes[l] {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// stopBrokers ends the transcript's brokers with SIGTERM (SPEC 14: they stop their upstreams)
// and then kills whatever still runs with the transcript's directory on its command line, so
// that no transcript leaves a process behind, whatever the broker does.
func stopBrokers(runtimeDir, work string) {
	for _, pid := range brokerPids(runtimeDir) {
		syscall.Kill(pid, syscall.SIGTERM)
	}
	testkit.Poll(func() bool { return len(brokerPids(runtimeDir)) == 0 })
	for _, pid := range testkit.LivePids(work) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	testkit.AwaitGone(work)
}

// broker-procs [-wait] N: exactly N processes listen on a broker socket of the transcript's
// state parent. With -wait, waits until that holds (up to a minute).
func cmdBrokerProcs(ts *testscript.TestScript, neg bool, args []string) {
	wait := len(args) > 0 && args[0] == "-wait"
	if wait {
		args = args[1:]
	}
	if neg || len(args) != 1 {
		ts.Fatalf("usage: broker-procs [-wait] N")
	}
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	var got []int
	testkit.Poll(func() bool {
		got = brokerPids(ts.Getenv("XDG_RUNTIME_DIR"))
		return len(got) == n || !wait
	})
	if len(got) != n {
		ts.Fatalf("broker-procs: %d brokers %v, want %d (sockets %v)", len(got), got, n, brokerSockets(ts.Getenv("XDG_RUNTIME_DIR")))
	}
}

// kill-broker: SIGKILLs the one broker of the transcript's state parent and waits until it
// has exited (its threads included).
func cmdKillBroker(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: kill-broker")
	}
	pids := brokerPids(ts.Getenv("XDG_RUNTIME_DIR"))
	if len(pids) != 1 {
		ts.Fatalf("kill-broker: %d brokers %v, want 1", len(pids), pids)
	}
	ts.Check(syscall.Kill(pids[0], syscall.SIGKILL))
	if !testkit.Poll(func() bool { return testkit.Exited(pids[0]) }) {
		ts.Fatalf("kill-broker: %d still runs", pids[0])
	}
}

// kill-procs WORD...: SIGKILLs the one live process whose command line holds every WORD ($WORK
// expanded) and waits until it has exited.
func cmdKillProcs(ts *testscript.TestScript, neg bool, args []string) {
	pid := onePid(ts, "kill-procs", neg, args)
	ts.Check(syscall.Kill(pid, syscall.SIGKILL))
	if !testkit.Poll(func() bool { return testkit.Exited(pid) }) {
		ts.Fatalf("kill-procs: %d still runs", pid)
	}
}

// pid-of VAR WORD...: sets VAR to the pid of the one live process whose command line holds
// every WORD ($WORK expanded).
func cmdPidOf(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: pid-of VAR WORD...")
	}
	ts.Setenv(args[0], strconv.Itoa(onePid(ts, "pid-of", neg, args[1:])))
}

func onePid(ts *testscript.TestScript, cmd string, neg bool, words []string) int {
	if neg || len(words) == 0 {
		ts.Fatalf("usage: %s WORD...", cmd)
	}
	for i, w := range words {
		words[i] = expandVars(ts, w)
	}
	pids := testkit.LivePids(words...)
	if len(pids) != 1 {
		ts.Fatalf("%s %v: %d live processes %v, want 1", cmd, words, len(pids), pids)
	}
	return pids[0]
}

// brokerRecords are the records of the broker's audit file, each checked to be a broker record
// (SPEC 7: time, event, "broker": true, and never a turn's fields).
func brokerRecords(ts *testscript.TestScript, file string, need bool) []map[string]any {
	records, err := testkit.BrokerRecords(file)
	if err != nil && (need || !errors.Is(err, fs.ErrNotExist)) {
		ts.Fatalf("baudit: %v", err)
	}
	return records
}

// baudit [-count=N] SPEC...: as audit, over the broker's audit file ($WORK/home/broker.jsonl,
// the transcripts' broker.audit), whose records are the broker's own.
func cmdBaudit(ts *testscript.TestScript, neg bool, args []string) {
	count := -1
	if len(args) > 0 && strings.HasPrefix(args[0], "-count=") {
		count, args = countFlag(ts, strings.TrimPrefix(args[0], "-count=")), args[1:]
	}
	if len(args) == 0 || count >= 0 && len(args) != 1 {
		ts.Fatalf("usage: baudit [-count=N] event[,key=value...]...")
	}
	checkRecords(ts, "baudit", brokerRecords(ts, ts.MkAbs("home/broker.jsonl"), !neg), neg, count, args)
}

// await-baudit [-count=N] SPEC: waits (up to a minute) until at least N records (default 1) of
// the broker's audit file match SPEC.
func cmdAwaitBaudit(ts *testscript.TestScript, neg bool, args []string) {
	file := ts.MkAbs("home/broker.jsonl")
	awaitRecords(ts, "await-baudit", neg, args, func() []map[string]any { return brokerRecords(ts, file, false) })
}

// await-record FILE EV TOOL [ARG]: waits (up to a minute) until the test server's record FILE
// holds an EV (start or end) of TOOL (with message ARG).
func cmdAwaitRecord(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 || len(args) > 4 {
		ts.Fatalf("usage: await-record FILE EV TOOL [ARG]")
	}
	file := ts.MkAbs(args[0])
	if !testkit.Poll(func() bool {
		data, _ := os.ReadFile(file)
		for line := range strings.SplitSeq(string(data), "\n") {
			var r struct {
				Ev, Tool string
				Arg      *string
			}
			if json.Unmarshal([]byte(line), &r) != nil || r.Ev != args[1] || r.Tool != args[2] {
				continue
			}
			if len(args) == 3 || r.Arg != nil && *r.Arg == args[3] {
				return true
			}
		}
		return false
	}) {
		ts.Fatalf("await-record: no %s of %s %v in %s", args[1], args[2], args[3:], args[0])
	}
}

// secret-token FILE: writes FILE (mode 0600) as an env_file holding SPEAR_TEST_TOKEN, a long
// random token made now (no transcript holds it), and keeps the token in $WORK/token, which
// lies outside SPEAR_HOME and the state parent, for secret-absent.
func cmdSecretToken(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: secret-token FILE")
	}
	b := make([]byte, 24)
	_, err := rand.Read(b)
	ts.Check(err)
	token := "tok" + hex.EncodeToString(b)
	ts.Check(os.WriteFile(ts.MkAbs("token"), []byte(token), 0o600))
	file := ts.MkAbs(args[0])
	ts.Check(os.WriteFile(file, []byte("# a secret\nSPEAR_TEST_TOKEN="+token+"\n"), 0o600))
	ts.Check(os.Chmod(file, 0o600))
}

// secret-absent [-except FILE]... PATH...: no file under any PATH (directories walked, symlinks
// not followed) holds the token of secret-token (plain hex: its JSON- or shell-quoted forms are
// the same bytes). The FILEs (the env_file, the capabilities file holding it in an env) are the
// places allowed to hold it. Negated, some file does (the search would see it where it is).
func cmdSecretAbsent(ts *testscript.TestScript, neg bool, args []string) {
	except := map[string]bool{}
	for len(args) > 1 && args[0] == "-except" {
		except[ts.MkAbs(args[1])], args = true, args[2:]
	}
	if len(args) == 0 {
		ts.Fatalf("usage: secret-absent [-except FILE]... PATH...")
	}
	token, err := os.ReadFile(ts.MkAbs("token"))
	ts.Check(err)
	if len(token) < 32 {
		ts.Fatalf("secret-absent: no token (secret-token first)")
	}
	var holding []string
	searched := 0
	for _, p := range args {
		root := ts.MkAbs(p)
		if _, err := os.Lstat(root); err != nil {
			ts.Fatalf("secret-absent: %v", err)
		}
		ts.Check(filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
			if err != nil || !info.Mode().IsRegular() || except[path] {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			searched++
			if bytes.Contains(data, token) {
				holding = append(holding, path)
			}
			return nil
		}))
	}
	ts.Logf("secret-absent: %d files searched", searched)
	switch {
	case !neg && len(holding) > 0:
		ts.Fatalf("secret-absent: the env_file's token is in %v", holding)
	case neg && len(holding) == 0:
		ts.Fatalf("secret-absent: no file holds the token")
	}
}

// brokerFixture is a SPEAR_HOME whose one project is ws, with short paths (the broker's socket
// lies in the state parent under run), for the Go tests that drive many processes at once.
type brokerFixture struct {
	dir, home, ws, run string
	node, server, mods string
}

func newBrokerFixture(t *testing.T) *brokerFixture {
	t.Helper()
	interopDeps(t) // skips without node and the npm servers, unless SPEAR_REQUIRE_INTEROP=1
	node, server, mods, why := brokerDeps()
	if why != "" {
		t.Fatal(why)
	}
	dir, err := os.MkdirTemp("", "sb-")
	if err != nil {
		t.Fatal(err)
	}
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		t.Fatal(err)
	}
	f := &brokerFixture{dir: dir, home: filepath.Join(dir, "home"), ws: filepath.Join(dir, "ws"), run: filepath.Join(dir, "r"),
		node: node, server: server, mods: mods}
	for _, d := range []string{f.home, f.ws, f.run} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		f.spear(t, "", "--broker-stop")
		testkit.StopKeepers(dir)
		stopBrokers(f.run, dir)
		os.RemoveAll(dir)
	})
	f.write(t, "home/projects.json", map[string]any{"projects": []any{map[string]any{"name": "demo", "root": f.ws}}})
	return f
}

// caps writes capabilities.json: providers, and the broker's audit file in the home.
func (f *brokerFixture) caps(t *testing.T, providers []map[string]any) {
	t.Helper()
	f.write(t, "home/capabilities.json", map[string]any{"broker": map[string]any{"audit": filepath.Join(f.home, "broker.jsonl")},
		"providers": providers})
}

func (f *brokerFixture) write(t *testing.T, name string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err == nil {
		err = os.WriteFile(filepath.Join(f.dir, name), b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// turn writes the manifest of turn name and returns the environment of its processes.
func (f *brokerFixture) turn(t *testing.T, name string) []string {
	t.Helper()
	f.write(t, name+".json", map[string]any{"turn": name, "task": "implementation", "workspace": f.ws,
		"audit": filepath.Join(f.dir, "audit.jsonl"), "state_dir": filepath.Join(f.dir, "state-"+name)})
	return []string{"SPEAR_HOME=" + f.home, "SPEAR_TURN_MANIFEST=" + filepath.Join(f.dir, name+".json"),
		"SPEAR_ISOLATION=none", "XDG_RUNTIME_DIR=" + f.run, "PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + f.dir}
}

// spear runs spear-shell in turn (env; nil: the fixture's home without a turn) with stdin and
// args, and returns its output and exit status.
func (f *brokerFixture) spear(t *testing.T, stdin string, args ...string) (stdout, stderr string, exit int) {
	return f.spearIn(t, nil, stdin, args...)
}

func (f *brokerFixture) spearIn(t *testing.T, env []string, stdin string, args ...string) (stdout, stderr string, exit int) {
	if env == nil {
		env = []string{"SPEAR_HOME=" + f.home, "SPEAR_ISOLATION=none", "XDG_RUNTIME_DIR=" + f.run,
			"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + f.dir}
	}
	cmd := exec.Command(filepath.Join(binDir, "spear-shell"), args...)
	cmd.Dir, cmd.Env = f.ws, env
	cmd.Stdin = strings.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if _, isExit := err.(*exec.ExitError); err != nil && !isExit {
		t.Errorf("spear-shell %v: %v", args, err)
		return "", "", -1
	}
	return o.String(), e.String(), cmd.ProcessState.ExitCode()
}

// testServer is the argv of testdata/broker/server.mjs with args.
func (f *brokerFixture) testServer(args ...string) []string {
	return append([]string{f.node, f.server}, args...)
}

// serverRecord is one line of the test server's --record file.
type serverRecord struct {
	Ev, Tool string
	Arg      *string
	Pid      int
}

func readServerRecords(t *testing.T, file string) []serverRecord {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var rs []serverRecord
	for line := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
		var r serverRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("record %q: %v", line, err)
		}
		rs = append(rs, r)
	}
	return rs
}

// TestBrokerCallerIsolation: six callers (each a stdin session of its own turn) make 1,000 calls
// in all over one shared upstream while a seventh caller's call sleeps in it; every caller gets
// its own answers, in its order, and all of them while the long call is still in flight (the
// upstream serves calls concurrently, so no call may wait for it: the property is checked by
// order, not by time). Then the long call's caller goes away: that call alone is cancelled at the
// server, and the upstream stays, and answers.
func TestBrokerCallerIsolation(t *testing.T) {
	const callers, calls = 6, 1000
	f := newBrokerFixture(t)
	record := filepath.Join(f.dir, "record.jsonl")
	f.caps(t, []map[string]any{{"id": "p", "scope": "global", "share": "project", "restart_delay": 0.2,
		"read": []string{"echo", "sleep", "pid"}, "command": f.testServer("--record", record)}})

	// The long call: 60 s, far beyond what the others take, so that its end cannot come first.
	slowEnv := f.turn(t, "slow")
	slow := exec.Command(filepath.Join(binDir, "spear-shell"), "-c", `spear-capability invoke p/sleep '{"ms":60000,"message":"slow"}'`)
	slow.Dir, slow.Env = f.ws, slowEnv
	var slowOut bytes.Buffer
	slow.Stdout, slow.Stderr = &slowOut, &slowOut
	if err := slow.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { slow.Process.Kill(); slow.Wait() }()
	if !testkit.Poll(func() bool {
		data, _ := os.ReadFile(record)
		return bytes.Contains(data, []byte(`"ev":"start","tool":"sleep"`))
	}) {
		t.Fatalf("the long call never reached the server: %s", slowOut.String())
	}

	type result struct {
		stdout, stderr string
		exit           int
	}
	results := make([]result, callers)
	want := make([][]string, callers)
	var wg sync.WaitGroup
	for c := range callers {
		var script strings.Builder
		for i := c; i < calls; i += callers {
			msg := fmt.Sprintf("caller%d-call%d", c, i)
			want[c] = append(want[c], msg)
			fmt.Fprintf(&script, "spear-capability invoke p/echo '{\"message\":\"%s\"}'\n", msg)
		}
		env := f.turn(t, fmt.Sprintf("caller%d", c))
		wg.Add(1)
		go func() {
			defer wg.Done()
			o, e, code := f.spearIn(t, env, script.String())
			results[c] = result{o, e, code}
		}()
	}
	wg.Wait()

	answer := regexp.MustCompile(`^caller\d+-call\d+$`)
	for c, r := range results {
		var got []string
		for line := range strings.SplitSeq(r.stdout, "\n") {
			if answer.MatchString(line) {
				got = append(got, line)
			}
		}
		if r.exit != 0 || !slices.Equal(got, want[c]) {
			t.Errorf("caller %d: exit %d, %d answers, want its own %d in order (first differing: %s); stderr: %s",
				c, r.exit, len(got), len(want[c]), firstDiff(got, want[c]), lastLines(r.stderr, 3))
		}
	}
	// All 1,000 answered while the long call was in flight: its end is not recorded, its caller
	// still waits.
	recs := readServerRecords(t, record)
	pids := map[int]bool{}
	ends := 0
	for _, r := range recs {
		pids[r.Pid] = true
		if r.Ev == "end" && r.Tool == "echo" {
			ends++
		}
		if r.Ev == "end" && r.Tool == "sleep" {
			t.Errorf("the long call ended before the others were answered")
		}
	}
	if ends != calls || len(pids) != 1 {
		t.Errorf("the server answered %d echo calls in %d processes, want %d in 1", ends, len(pids), calls)
	}
	if slow.ProcessState != nil {
		t.Errorf("the long call's caller has ended: %s", slowOut.String())
	}

	// Its caller goes away: its call is cancelled (notifications/cancelled reaches the server),
	// no other call is, and the upstream stays and answers.
	slow.Process.Kill()
	slow.Wait()
	if !testkit.Poll(func() bool {
		for _, r := range readServerRecords(t, record) {
			if r.Ev == "cancelled" && r.Tool == "sleep" {
				return true
			}
		}
		return false
	}) {
		t.Errorf("the long call was not cancelled when its caller went away")
	}
	for _, r := range readServerRecords(t, record) {
		if r.Ev == "cancelled" && r.Tool != "sleep" {
			t.Errorf("another caller's call was cancelled: %+v", r)
		}
	}
	out, errOut, code := f.spearIn(t, f.turn(t, "caller0"), "", "-c", "spear-capability invoke p/pid {}")
	if code != 0 || strings.TrimSpace(answerText(out)) != strconv.Itoa(recs[0].Pid) {
		t.Errorf("after the long call's caller left: exit %d, %q (want pid %d); stderr %s", code, out, recs[0].Pid, errOut)
	}
}

// answerText is the content between a framed result's markers.
func answerText(out string) string {
	var b strings.Builder
	for line := range strings.SplitSeq(out, "\n") {
		if !strings.HasPrefix(line, "<<<") && line != "" {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

func firstDiff(got, want []string) string {
	for i := range max(len(got), len(want)) {
		switch {
		case i >= len(got):
			return fmt.Sprintf("missing %q", want[i])
		case i >= len(want):
			return fmt.Sprintf("extra %q", got[i])
		case got[i] != want[i]:
			return fmt.Sprintf("%q where %q", got[i], want[i])
		}
	}
	return "none"
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " / ")
}

// faceSession is spear-mcp (the MCP face) driven by JSON-RPC lines, for one turn.
type faceSession struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr bytes.Buffer
	id     int
}

func startFace(t *testing.T, dir string, env []string) *faceSession {
	t.Helper()
	s := &faceSession{}
	s.cmd = exec.Command(filepath.Join(binDir, "spear-mcp"))
	s.cmd.Dir, s.cmd.Env, s.cmd.Stderr = dir, env, &s.stderr
	var err error
	if s.in, err = s.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.out = bufio.NewReaderSize(out, 1<<20)
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.request("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "broker-test", "version": "1"}}); err != nil {
		t.Fatalf("spear-mcp initialize: %v; stderr: %s", err, s.stderr.String())
	}
	s.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return s
}

func (s *faceSession) send(m map[string]any) error {
	b, err := json.Marshal(m)
	if err == nil {
		_, err = s.in.Write(append(b, '\n'))
	}
	return err
}

// request sends one request and returns its result (notifications before it skipped).
func (s *faceSession) request(method string, params any) (json.RawMessage, error) {
	s.id++
	if err := s.send(map[string]any{"jsonrpc": "2.0", "id": s.id, "method": method, "params": params}); err != nil {
		return nil, err
	}
	for {
		line, err := s.out.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		var m struct {
			ID     *int
			Result json.RawMessage
			Error  json.RawMessage
		}
		if err := json.Unmarshal(line, &m); err != nil {
			return nil, fmt.Errorf("%s: %q: %w", method, line, err)
		}
		if m.ID == nil || *m.ID != s.id {
			continue
		}
		if m.Error != nil {
			return nil, fmt.Errorf("%s: error %s", method, m.Error)
		}
		return m.Result, nil
	}
}

// call calls one of the face's tools; a result with isError is an error carrying its text.
func (s *faceSession) call(tool string, args map[string]any) (string, error) {
	res, err := s.request("tools/call", map[string]any{"name": tool, "arguments": args})
	if err != nil {
		return "", err
	}
	var r struct {
		Content []struct{ Text string }
		IsError bool
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return "", err
	}
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	if r.IsError {
		return "", fmt.Errorf("%s: %s", tool, b.String())
	}
	return b.String(), nil
}

func (s *faceSession) close() {
	s.in.Close()
	s.cmd.Wait()
}

// sixTurnCalls are each turn's -c invokes (one per server) and its spear-mcp invoke.
var sixTurnCalls = []struct{ id, args, want string }{
	{"ev/echo", `{"message":"six turns"}`, "Echo: six turns"},
	{"mem/read_graph", `{}`, `"entities"`},
	{"fs/list_allowed_directories", `{}`, "Allowed directories"},
}

// TestBrokerSixTurns is the six-turn run, lighter: concurrent turns, each making -c describes and
// invokes of three real Node servers (server-everything, server-memory, server-filesystem) and an invoke
// through a spear-mcp session that stays open; once every turn has made its calls the servers
// are counted. Unshared, each turn has its own three (two turns here: six processes); shared
// (share project), six turns have exactly three. The memory ratio is the bench's (broker group).
func TestBrokerSixTurns(t *testing.T) {
	for _, tc := range []struct {
		shared      bool
		turns, want int
	}{{false, 2, 6}, {true, 6, 3}} {
		t.Run(fmt.Sprintf("shared=%v", tc.shared), func(t *testing.T) {
			f := newBrokerFixture(t)
			f.caps(t, testkit.ReferenceServers(f.node, f.mods, f.ws, "SPEAR_SIX_TURNS="+f.dir, tc.shared))
			faces := make([]*faceSession, tc.turns)
			defer func() {
				for _, s := range faces {
					if s != nil {
						s.close()
					}
				}
			}()
			envs := make([][]string, tc.turns)
			for i := range tc.turns {
				envs[i] = f.turn(t, fmt.Sprintf("six%d", i))
			}
			var wg sync.WaitGroup
			for i := range tc.turns {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ids := []string{"describe"}
					for _, c := range sixTurnCalls {
						ids = append(ids, c.id)
					}
					if out, errOut, code := f.spearIn(t, envs[i], "", "-c", "spear-capability "+strings.Join(ids, " ")); code != 0 {
						t.Errorf("turn %d: describe: exit %d, %q; stderr %s", i, code, lastLines(out, 3), errOut)
					}
					for _, c := range sixTurnCalls {
						out, errOut, code := f.spearIn(t, envs[i], "", "-c", fmt.Sprintf("spear-capability invoke %s '%s'", c.id, c.args))
						if code != 0 || !strings.Contains(out, c.want) {
							t.Errorf("turn %d: %s: exit %d, %q; stderr %s", i, c.id, code, lastLines(out, 3), errOut)
						}
					}
					s := startFace(t, f.ws, envs[i])
					faces[i] = s
					if _, err := s.call("spear_describe", map[string]any{"ids": []string{"ev/echo"}}); err != nil {
						t.Errorf("turn %d: spear_describe: %v", i, err)
					}
					out, err := s.call("spear_invoke", map[string]any{"id": "ev/echo", "arguments": map[string]any{"message": "face"}})
					if err != nil || !strings.Contains(out, "Echo: face") {
						t.Errorf("turn %d: spear_invoke: %q, %v; stderr %s", i, out, err, s.stderr.String())
					}
				}()
			}
			wg.Wait()
			pids, rss, pss := testkit.Marked("SPEAR_SIX_TURNS=" + f.dir)
			t.Logf("%d turns, shared=%v: %d server processes, %.0f MiB resident, %.0f MiB proportional",
				tc.turns, tc.shared, len(pids), float64(rss)/1024, float64(pss)/1024)
			if len(pids) != tc.want {
				t.Errorf("%d server processes %v, want %d", len(pids), pids, tc.want)
			}
			if tc.shared {
				return
			}
			for i := range tc.turns {
				f.spearIn(t, envs[i], "", "--end-turn")
			}
		})
	}
}

// brokerAsk connects to the broker's socket, says hello with protocol, sends reqs and returns
// the answers, one per line read (the last may be "" when the broker closed the connection).
func brokerAsk(t *testing.T, sock string, protocol int, reqs ...map[string]any) []map[string]any {
	t.Helper()
	conn, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReader(conn)
	var answers []map[string]any
	for _, req := range append([]map[string]any{{"op": "hello", "protocol": protocol}}, reqs...) {
		b, _ := json.Marshal(req)
		if _, err := conn.Write(append(b, '\n')); err != nil {
			break
		}
		line, err := r.ReadBytes('\n')
		if err != nil {
			break
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("the broker answered %q: %v", line, err)
		}
		answers = append(answers, m)
	}
	return answers
}

// TestBrokerRefusesUnknownRequests speaks the broker's socket protocol directly (SPEC 14: each
// request names the entry, the share key and the launch-key hash; the broker reads the
// configuration itself and refuses what it does not find there): an unknown share key, a share
// key of a project the entry does not reach, a key for a share-all entry, a wrong hash and an
// unknown entry are refused and start nothing; the same request with what the configuration
// holds starts the upstream and calls it.
func TestBrokerRefusesUnknownRequests(t *testing.T) {
	f := newBrokerFixture(t)
	other := filepath.Join(f.dir, "other")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	f.write(t, "home/projects.json", map[string]any{"projects": []any{map[string]any{"name": "demo", "root": f.ws},
		map[string]any{"name": "other", "root": other}}})
	recP, recA := filepath.Join(f.dir, "rec-p.jsonl"), filepath.Join(f.dir, "rec-a.jsonl")
	f.caps(t, []map[string]any{
		{"id": "p", "scope": "corpus demo", "share": "project", "restart_delay": 0.2, "read": []string{"pid"}, "command": f.testServer("--tools", "pid", "--record", recP)},
		{"id": "a", "scope": "corpus other", "share": "all", "restart_delay": 0.2, "read": []string{"pid"}, "command": f.testServer("--tools", "pid", "--record", recA)},
	})
	reg, err := policy.Load(policy.Paths{Home: f.home})
	if err != nil || len(reg.Providers) != 2 {
		t.Fatalf("policy: %v, %d providers (%v)", err, len(reg.Providers), reg.Problems)
	}
	launch := map[string]string{}
	for _, p := range reg.Providers {
		launch[p.ID] = p.LaunchKeyNow()
	}

	// A turn's answer starts the broker (and p's upstream for demo; a reaches only other).
	out, errOut, code := f.spearIn(t, f.turn(t, "t1"), "", "-c", "spear-capability invoke p/pid {}")
	if code != 0 {
		t.Fatalf("invoke: exit %d, %s %s", code, out, errOut)
	}
	socks := brokerSockets(f.run)
	if len(socks) != 1 || len(testkit.LivePids(recP)) != 1 {
		t.Fatalf("sockets %v, p's processes %v: want one broker and one upstream", socks, testkit.LivePids(recP))
	}
	hello := brokerAsk(t, socks[0], 0)
	broker, _ := hello[0]["broker"].(map[string]any)
	protocol, ok := broker["protocol"].(float64)
	if !ok {
		t.Fatalf("hello answered %v, with no broker protocol", hello)
	}

	start := func(provider, key, hash string) map[string]any {
		return map[string]any{"op": "start", "provider": provider, "share_key": key, "launch": hash}
	}
	for _, tc := range []struct {
		name string
		req  map[string]any
	}{
		{"a share key the registry does not hold", start("p", "nosuch", launch["p"])},
		{"a project the entry does not reach", start("p", "other", launch["p"])},
		{"a project key for a share-all entry", start("a", "demo", launch["a"])},
		{"another entry's launch hash", start("p", "demo", launch["a"])},
		{"a launch hash of nothing", start("p", "demo", strings.Repeat("0", 64))},
		{"an entry the configuration does not hold", start("ghost", "demo", launch["p"])},
	} {
		answers := brokerAsk(t, socks[0], int(protocol), tc.req, map[string]any{"op": "call", "name": "pid", "arguments": map[string]any{}})
		if len(answers) < 2 || answers[1]["err"] == nil {
			t.Errorf("%s: %v: answered %v, want a refusal", tc.name, tc.req, answers)
		}
		if len(answers) > 2 {
			t.Errorf("%s: the call after the refused start was answered: %v", tc.name, answers[2])
		}
	}
	if pids := testkit.LivePids(recP); len(pids) != 1 {
		t.Errorf("p runs in %d processes %v, want its one for demo", len(pids), pids)
	}
	if pids := testkit.LivePids(recA); len(pids) != 0 {
		t.Errorf("a runs in %v, want none", pids)
	}
	// What the configuration holds is served.
	answers := brokerAsk(t, socks[0], int(protocol), start("a", "", launch["a"]), map[string]any{"op": "call", "name": "pid", "arguments": map[string]any{}})
	if len(answers) != 3 || answers[1]["err"] != nil || answers[2]["result"] == nil {
		t.Errorf("a, share all: answered %v, want a start and a call's result", answers)
	}
	if pids := testkit.LivePids(recA); len(pids) != 1 {
		t.Errorf("a runs in %v, want one process", pids)
	}
}

// TestBrokerSecretsFace: the secrets test's MCP side. A shared entry's env_file holds a long
// random token; through spear-mcp a turn invokes the tool that answers its whole environment
// (and dumps it to stderr), then the upstream is killed (its stderr tail recorded) and a second
// call made. The token is in no answer the face gave, nor in any file under SPEAR_HOME but the
// env_file, the state parent, the turn's state or audit file, or broker.audit.
func TestBrokerSecretsFace(t *testing.T) {
	f := newBrokerFixture(t)
	b := make([]byte, 24)
	rand.Read(b)
	token := "tok" + hex.EncodeToString(b)
	envFile := filepath.Join(f.home, "s.env")
	if err := os.WriteFile(envFile, []byte("SPEAR_TEST_TOKEN="+token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(f.dir, "rec-s.jsonl")
	f.caps(t, []map[string]any{{"id": "s", "scope": "global", "share": "project", "restart_delay": 0.2, "env_file": envFile,
		"read": []string{"echo", "env"}, "command": f.testServer("--tools", "echo,env", "--record", record)}})
	env := f.turn(t, "face")
	s := startFace(t, f.ws, env)
	defer s.close()
	var answers strings.Builder
	invoke := func(tool string) {
		res, err := s.request("tools/call", map[string]any{"name": "spear_invoke", "arguments": map[string]any{"id": "s/" + tool, "arguments": map[string]any{}}})
		if err != nil {
			t.Fatalf("spear_invoke s/%s: %v; stderr %s", tool, err, s.stderr.String())
		}
		answers.Write(res)
	}
	invoke("env")
	if !strings.Contains(answers.String(), "SPEAR_TEST_TOKEN=") {
		t.Fatalf("the server's environment is not in the answer (did the call reach it?): %s", answers.String())
	}
	// The upstream, its stderr full of the environment, dies: the broker records its tail.
	pids := testkit.LivePids(record)
	if len(pids) != 1 {
		t.Fatalf("s runs in %v, want one process", pids)
	}
	syscall.Kill(pids[0], syscall.SIGKILL)
	if !testkit.Poll(func() bool {
		data, _ := os.ReadFile(filepath.Join(f.home, "broker.jsonl"))
		return bytes.Contains(data, []byte(`"provider_restarted"`))
	}) {
		t.Fatal("s was not restarted")
	}
	invoke("env")
	s.close()
	answers.WriteString(s.stderr.String())
	f.spear(t, "", "--broker-stop")

	if strings.Contains(answers.String(), token) {
		t.Errorf("the face's answers hold the env_file's token")
	}
	searched := 0
	for _, root := range []string{f.home, f.run, filepath.Join(f.dir, "state-face"), filepath.Join(f.dir, "audit.jsonl")} {
		filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
			if err != nil || !info.Mode().IsRegular() || path == envFile {
				return nil
			}
			searched++
			if data, _ := os.ReadFile(path); bytes.Contains(data, []byte(token)) {
				t.Errorf("%s holds the env_file's token", path)
			}
			return nil
		})
	}
	if searched < 4 {
		t.Errorf("only %d files searched: the audit files and the broker's are missing", searched)
	}
}
