package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/spear-shell/spear-shell/testdata/testkit"
)

// The interop suite: spear-shell, as an agent's shell, against MCP servers nobody here wrote
// (the npm reference servers of testdata/interop, TypeScript SDK) and one built with the Go SDK
// (testdata/interop/gosdkserver). Each server gets its spear-capability lines, with their
// expected exits and output, once in a stdin session and once as -c processes of one turn; the
// suite prints the table of servers, calls tried and calls as expected. Python SDK servers are not in it: their registry cannot be reached from
// here. Without node or the npm servers it skips, unless SPEAR_REQUIRE_INTEROP=1 (make test).

type interopCall struct {
	pre    string // a plain command forwarded to bash before the call, not counted
	line   string
	exit   int
	stdout []string // regexps each some line of stdout must match
	stderr []string // regexps each some line of stderr must match
	absent []string // regexps no line of stdout or stderr may match
}

type interopServer struct {
	name, sdk, version string
	entries            []map[string]any // capabilities.json entries; "$DIR" in a string is the scratch directory
	setup              func(t *testing.T, dir string)
	calls              []interopCall
}

func TestInterop(t *testing.T) {
	node, mods := interopDeps(t)
	sdk := "TypeScript SDK " + npmVersion(t, mods, "@modelcontextprotocol/sdk")
	script := func(pkg string, args ...string) []string {
		return append([]string{node, filepath.Join(mods, "@modelcontextprotocol", pkg, "dist", "index.js")}, args...)
	}
	servers := []interopServer{
		everythingServer(script("server-everything", "stdio"), npmVersion(t, mods, "@modelcontextprotocol/server-everything"), sdk),
		filesystemServer(script("server-filesystem", "$DIR/files"), npmVersion(t, mods, "@modelcontextprotocol/server-filesystem"), sdk),
		memoryServer(script("server-memory"), npmVersion(t, mods, "@modelcontextprotocol/server-memory"), sdk),
		thinkingServer(script("server-sequential-thinking"), npmVersion(t, mods, "@modelcontextprotocol/server-sequential-thinking"), sdk),
		goSDKServer(t),
	}
	type tally struct{ tried, ok int }
	var mu sync.Mutex
	tallies := map[string]tally{}
	t.Run("servers", func(t *testing.T) {
		for _, s := range servers {
			modes := []string{"session", "-c"}
			if s.name == "server-everything" || s.name == "server-memory" {
				modes = append(modes, "locked") // under the operator's lock (SPEC 15)
			}
			for _, mode := range modes {
				t.Run(s.name+"/"+mode, func(t *testing.T) {
					t.Parallel()
					tried, ok := runInterop(t, s, mode)
					mu.Lock()
					n := tallies[s.name]
					tallies[s.name] = tally{n.tried + tried, n.ok + ok}
					mu.Unlock()
				})
			}
		}
	})
	var b strings.Builder
	b.WriteString("| server | SDK | version | calls tried | calls as expected |\n|---|---|---|---|---|\n")
	total := tally{}
	for _, s := range servers {
		n := tallies[s.name]
		total.tried += n.tried
		total.ok += n.ok
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d |\n", s.name, s.sdk, s.version, n.tried, n.ok)
	}
	fmt.Fprintf(&b, "| all | | | %d | %d |\n", total.tried, total.ok)
	t.Logf("interop servers:\n%s", b.String())
	if out := os.Getenv("SPEAR_INTEROP_TABLE"); out != "" {
		if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// interopDeps returns node and the npm servers (findInterop), or skips (fails with
// SPEAR_REQUIRE_INTEROP=1).
func interopDeps(t *testing.T) (node, mods string) {
	if interopNode == "" {
		msg := "interop servers not installed (make deps): node, or testdata/interop/node_modules, is missing"
		if os.Getenv("SPEAR_REQUIRE_INTEROP") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return interopNode, interopMods
}

func npmVersion(t *testing.T, mods, pkg string) string {
	b, err := os.ReadFile(filepath.Join(mods, pkg, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p struct{ Version string }
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	return p.Version
}

// runInterop runs the server's calls in one turn, in a stdin session or (mode "-c") one -c
// process each, as agent terminals run commands (the turn's keeper then holds the providers;
// --end-turn stops it), and checks each call; it returns how many calls were tried and how many
// answered as expected.
func runInterop(t *testing.T, s interopServer, mode string) (tried, ok int) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	home := filepath.Join(dir, "home")
	for _, d := range []string{ws, home, filepath.Join(dir, "files")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if s.setup != nil {
		s.setup(t, dir)
	}
	writeJSON := func(path string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		b = bytes.ReplaceAll(b, []byte("$DIR"), []byte(dir))
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeJSON(filepath.Join(home, "projects.json"), map[string]any{"projects": []any{map[string]any{"name": "ws", "root": ws}}})
	writeJSON(filepath.Join(home, "capabilities.json"), map[string]any{"providers": s.entries})
	manifest := filepath.Join(dir, "turn.json")
	writeJSON(manifest, map[string]any{"turn": "interop", "task": "implementation", "workspace": ws,
		"audit": filepath.Join(dir, "audit.jsonl"), "state_dir": filepath.Join(dir, "state")})
	env := []string{"SPEAR_HOME=" + home, "SPEAR_TURN_MANIFEST=" + manifest, "SPEAR_ISOLATION=none",
		"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + dir}
	run := func(stdin string, args ...string) (stdout, stderr string, exit int) {
		cmd := exec.Command(filepath.Join(binDir, "spear-shell"), args...)
		cmd.Dir, cmd.Env = ws, env
		cmd.Stdin = strings.NewReader(stdin)
		return testkit.Run(t, cmd)
	}

	if mode == "locked" {
		// Lock what the server lists, then nothing may have drifted when it is listed again (its
		// definitions are stable in canonical form), and the turn's calls answer as unlocked.
		if o, e, code := run("", "--lock"); code != 0 || !strings.Contains(o, "locked ") {
			t.Fatalf("--lock: exit %d\n%s%s", code, o, e)
		}
		if o, e, code := run("", "--lock", "--diff"); code != 0 || !strings.Contains(o, ": no drift (") {
			t.Fatalf("--lock --diff: exit %d\n%s%s", code, o, e)
		}
		if _, err := os.Stat(filepath.Join(home, "capabilities.lock.json")); err != nil {
			t.Fatal(err)
		}
		defer func() {
			// the turn ran under the lock: its family's record names the lock's hash
			b, _ := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
			if !regexp.MustCompile(`"event":"capability_family_selected".*"lock":"[0-9a-f]{64}"|"lock":"[0-9a-f]{64}".*"event":"capability_family_selected"`).Match(b) {
				t.Errorf("no capability_family_selected record names the lock:\n%s", short(string(b)))
			}
		}()
	}
	var outs, errs []piece
	if mode == "-c" {
		for _, c := range s.calls {
			if c.pre != "" {
				run("", "-c", c.pre)
			}
			o, e, code := run("", "-c", strings.ReplaceAll(c.line, "$DIR", dir))
			outs = append(outs, piece{text: o, tag: fmt.Sprint(code)})
			errs = append(errs, piece{text: e})
		}
		if o, e, code := run("", "--end-turn"); code != 0 {
			t.Errorf("--end-turn: exit %d\n%s%s", code, o, e)
		}
	} else {
		var in strings.Builder
		for _, c := range s.calls {
			if c.pre != "" {
				fmt.Fprintf(&in, "%s >/dev/null 2>&1\n", c.pre)
			}
			fmt.Fprintf(&in, "%s\necho \"@@ $?\"\necho @@ >&2\n", strings.ReplaceAll(c.line, "$DIR", dir))
		}
		stdout, stderr, code := run(in.String())
		if code != 0 {
			t.Errorf("session: exit %d", code)
		}
		outs = splitAt(stdout, regexp.MustCompile(`(?m)^@@ (\d+)\n`))
		errs = splitAt(stderr, regexp.MustCompile(`(?m)^@@\n`))
		if len(outs) < len(s.calls) || len(errs) < len(s.calls) {
			t.Fatalf("%d answers on stdout and %d on stderr for %d calls\nstdout:\n%s\nstderr:\n%s",
				len(outs), len(errs), len(s.calls), short(stdout), short(stderr))
		}
	}
	for i, c := range s.calls {
		tried++
		var bad []string
		if outs[i].tag != fmt.Sprint(c.exit) {
			bad = append(bad, fmt.Sprintf("exit %s, want %d", outs[i].tag, c.exit))
		}
		for _, re := range c.stdout {
			if !regexp.MustCompile("(?m)" + re).MatchString(outs[i].text) {
				bad = append(bad, "stdout lacks "+re)
			}
		}
		for _, re := range c.stderr {
			if !regexp.MustCompile("(?m)" + re).MatchString(errs[i].text) {
				bad = append(bad, "stderr lacks "+re)
			}
		}
		for _, re := range c.absent {
			if regexp.MustCompile("(?m)" + re).MatchString(outs[i].text + errs[i].text) {
				bad = append(bad, "output has "+re)
			}
		}
		if len(bad) > 0 {
			t.Errorf("%s\n  %s\nstdout:\n%s\nstderr:\n%s", c.line, strings.Join(bad, "\n  "), short(outs[i].text), short(errs[i].text))
			continue
		}
		ok++
	}
	return tried, ok
}

type piece struct{ text, tag string }

// splitAt cuts s after each match of sep, which ends a piece; its first group is the piece's tag.
func splitAt(s string, sep *regexp.Regexp) []piece {
	var out []piece
	start := 0
	for _, m := range sep.FindAllStringSubmatchIndex(s, -1) {
		p := piece{text: s[start:m[0]]}
		if len(m) > 2 && m[2] >= 0 {
			p.tag = s[m[2]:m[3]]
		}
		out = append(out, p)
		start = m[1]
	}
	return out
}

func short(s string) string {
	if len(s) > 3000 {
		return s[:3000] + fmt.Sprintf("... (%d bytes)", len(s))
	}
	return s
}

func invoke(target, args string) string {
	return "spear-capability invoke " + target + " '" + args + "'"
}

const framed = `^<<<spear-capability result `

func everythingServer(command []string, version, sdk string) interopServer {
	read := []string{"echo", "get-sum", "get-structured-content", "gzip-file-as-resource", "get-tiny-image",
		"get-resource-links", "get-resource-reference", "get-annotated-message", "get-env"}
	return interopServer{
		name: "server-everything", sdk: sdk, version: version,
		entries: []map[string]any{{"id": "ev", "command": command, "scope": "global", "read": read}},
		calls: []interopCall{
			{line: "spear-capability list", stdout: []string{`^ev/echo  READ  `, `^ev/toggle-simulated-logging  WRITE  `}},
			{line: "spear-capability describe ev/echo ev/get-sum ev/gzip-file-as-resource ev/get-structured-content ev/get-tiny-image " +
				"ev/get-resource-links ev/get-resource-reference ev/get-annotated-message ev/get-env ev/toggle-simulated-logging",
				stdout: []string{`"\$schema": "http://json-schema.org/draft-07/schema#"`, `"format": "uri"`, `^output schema:$`}},
			{line: invoke("ev/echo", `{"message":"héllo 漢字"}`), stdout: []string{framed, `^Echo: héllo 漢字$`}},
			{line: invoke("ev/get-sum", `{"a":2,"b":40}`), stdout: []string{`42`}},
			{line: invoke("ev/get-sum", `{"a":"two","b":1}`), exit: 3, stderr: []string{`^spear-capability: invalid-arguments: ev/get-sum: .*at /a: got string, want number`}},
			{line: invoke("ev/get-sum", `{"a":1,"c":1}`), exit: 3, stderr: []string{`invalid-arguments: ev/get-sum: argument "c" is not declared`}},
			// The text item holds the same JSON as structuredContent: shown once.
			{line: invoke("ev/get-structured-content", `{"location":"Chicago"}`), stdout: []string{`"temperature":36`},
				absent: []string{`(?s)temperature.*temperature`}},
			{line: invoke("ev/get-structured-content", `{"location":"Atlantis"}`), exit: 3, stderr: []string{`invalid-arguments: .*at /location: value must be one of`}},
			// format is an annotation: a fragment of "%zz" makes no URI for Go's url.Parse (the schema
			// library's "uri" check, asserted for draft-07 before), but the server's own check (a
			// WHATWG URL) takes it, and compresses the data.
			{line: invoke("ev/gzip-file-as-resource", `{"name":"t.gz","data":"data:text/plain,hello#%zz","outputType":"resource"}`),
				stdout: []string{`^\[embedded resource: demo://resource/session/t\.gz application/gzip, \d+ bytes of base64 data, not shown\]$`}},
			{line: invoke("ev/get-tiny-image", `{}`), stdout: []string{`^\[image content: image/png, \d+ bytes of base64 data, not shown\]$`}},
			{line: invoke("ev/get-resource-links", `{"count":2}`), stdout: []string{`^\[resource link: demo://resource/`}},
			{line: invoke("ev/get-resource-reference", `{}`), stdout: []string{`^\[embedded resource: demo://resource/dynamic/text/1 text/plain\]$`, `^Resource 1: This is a plaintext resource`}},
			{line: invoke("ev/get-annotated-message", `{"messageType":"error"}`), stdout: []string{`^Error: Operation failed$`}},
			// The server's environment is exactly PATH and HOME (SPEC 2.3).
			{line: invoke("ev/get-env", `{}`), stdout: []string{`"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"`, `"HOME": `},
				absent: []string{`SPEAR_`}},
			{line: invoke("ev/toggle-simulated-logging", `{}`), exit: 3, stderr: []string{`write-refused: ev/toggle-simulated-logging is a WRITE capability`}},
			{line: invoke("ev/nonesuch", `{}`), exit: 3, stderr: []string{`^spear-capability: unknown-capability: ev/nonesuch: no such capability`}},
			{line: invoke("ev/echo", `{"message":"still here"}`), stdout: []string{`^Echo: still here$`}},
		},
	}
}

// A 5 MB file through the filesystem server: about 10.3 MB on the wire (the text again in
// structuredContent). Under the default limit it is shown cut; under an 8 MiB max_message the
// call is a tool-error and the provider stays.
func filesystemServer(command []string, version, sdk string) interopServer {
	read := []string{"read_text_file", "read_multiple_files", "list_directory", "get_file_info", "list_allowed_directories",
		"directory_tree", "search_files"}
	return interopServer{
		name: "server-filesystem", sdk: sdk, version: version,
		entries: []map[string]any{
			{"id": "fs", "command": command, "scope": "global", "read": read},
			{"id": "fs8", "command": command, "scope": "global", "read": read, "max_message": 8 << 20},
		},
		setup: func(t *testing.T, dir string) {
			files := filepath.Join(dir, "files")
			big := bytes.Repeat([]byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n"), 5<<20/64)
			for name, b := range map[string][]byte{"hello.txt": []byte("hello from a file\n"), "big.txt": big} {
				if err := os.WriteFile(filepath.Join(files, name), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		},
		calls: []interopCall{
			{line: "spear-capability list", stdout: []string{`^fs/read_text_file  READ  Read the complete contents of a file`, `^fs8/write_file  WRITE  `}},
			{line: "spear-capability describe fs/list_allowed_directories fs/read_text_file fs8/read_text_file fs/get_file_info fs/list_directory fs/write_file",
				stdout: []string{`^fs8/read_text_file  READ$`, `^fs/write_file  WRITE$`}},
			{line: invoke("fs/list_allowed_directories", `{}`), stdout: []string{`/files`}},
			// The text is the file, not JSON: structuredContent is shown too.
			{line: invoke("fs/read_text_file", `{"path":"$DIR/files/hello.txt"}`),
				stdout: []string{`^hello from a file$`, `^\{"content":"hello from a file\\n"\}$`}},
			{line: invoke("fs/read_text_file", `{"path":"$DIR/files/big.txt"}`),
				stdout: []string{`^spear-capability: the result above was cut to 65536 of its 10\d{6} bytes$`}},
			{line: invoke("fs8/read_text_file", `{"path":"$DIR/files/big.txt"}`), exit: 1,
				stderr: []string{`^spear-capability: tool-error: fs8/read_text_file: the result \(\d+ bytes\) was larger than the limit of 8388608 bytes \(max_message\) and was discarded$`},
				absent: []string{`unavailable`}},
			{line: invoke("fs8/read_text_file", `{"path":"$DIR/files/hello.txt","head":1}`), stdout: []string{`^hello from a file$`}},
			{line: invoke("fs/get_file_info", `{"path":"$DIR/files/big.txt"}`), stdout: []string{`size: 5242880`}},
			{line: invoke("fs/list_directory", `{"path":"$DIR/files"}`), stdout: []string{`^\[FILE\] big\.txt$`, `^\[FILE\] hello\.txt$`}},
			{line: invoke("fs/read_text_file", `{"path":"/etc/hostname"}`), exit: 1, stderr: []string{`^spear-capability: tool-error: fs/read_text_file reported an error$`}},
			{line: invoke("fs/read_text_file", `{"path":7}`), exit: 3, stderr: []string{`invalid-arguments: .*at /path: got number, want string`}},
			{line: invoke("fs/write_file", `{"path":"$DIR/files/x","content":"x"}`), exit: 3, stderr: []string{`write-refused: fs/write_file is a WRITE capability`}},
		},
	}
}

func memoryServer(command []string, version, sdk string) interopServer {
	return interopServer{
		name: "server-memory", sdk: sdk, version: version,
		entries: []map[string]any{{"id": "mem", "command": command, "scope": "global", "write": "allow",
			"read": []string{"read_graph", "search_nodes", "open_nodes"}, "env": map[string]string{"MEMORY_FILE_PATH": "$DIR/memory.jsonl"}}},
		calls: []interopCall{
			{line: "spear-capability describe mem/create_entities mem/create_relations mem/add_observations mem/read_graph " +
				"mem/search_nodes mem/open_nodes mem/delete_entities", stdout: []string{`^mem/create_entities  WRITE$`, `^write policy: allow; `}},
			{line: invoke("mem/create_entities", `{"entities":[{"name":"spear","entityType":"project","observations":["a shell for agents"]},{"name":"bash","entityType":"program","observations":["the real shell"]}]}`),
				stdout: []string{`"name": "spear"`}},
			{line: invoke("mem/create_relations", `{"relations":[{"from":"spear","to":"bash","relationType":"forwards to"}]}`), stdout: []string{`"relationType": "forwards to"`}},
			{line: invoke("mem/add_observations", `{"observations":[{"entityName":"spear","contents":["answers spear-capability lines"]}]}`), stdout: []string{`answers spear-capability lines`}},
			// Pretty-printed text holding the same JSON as structuredContent: shown once.
			{line: invoke("mem/read_graph", `{}`), stdout: []string{`"relationType": "forwards to"`}, absent: []string{`(?s)forwards to.*forwards to`}},
			{line: invoke("mem/search_nodes", `{"query":"shell"}`), stdout: []string{`"name": "spear"`}},
			{line: invoke("mem/open_nodes", `{"names":["bash"]}`), stdout: []string{`"the real shell"`}},
			{line: invoke("mem/create_entities", `{"entities":"spear"}`), exit: 3, stderr: []string{`invalid-arguments: .*at /entities: got string, want array`}},
			{line: invoke("mem/delete_entities", `{"entityNames":["bash"]}`), stdout: []string{`Entities deleted successfully`}},
		},
	}
}

func thinkingServer(command []string, version, sdk string) interopServer {
	return interopServer{
		name: "server-sequential-thinking", sdk: sdk, version: version,
		entries: []map[string]any{{"id": "think", "command": command, "scope": "global", "read": []string{"sequentialthinking"}}},
		calls: []interopCall{
			{line: invoke("think/sequentialthinking", `{"thought":"Is the shell byte-exact?","nextThoughtNeeded":true,"thoughtNumber":1,"totalThoughts":2}`),
				stdout: []string{`"thoughtNumber": 1`}},
			{line: invoke("think/sequentialthinking", `{"thought":"Yes.","nextThoughtNeeded":false,"thoughtNumber":2,"totalThoughts":2}`),
				stdout: []string{`"thoughtHistoryLength": 2`}},
			{line: invoke("think/sequentialthinking", `{"thought":"x","nextThoughtNeeded":false,"thoughtNumber":0,"totalThoughts":1}`),
				exit: 3, stderr: []string{`invalid-arguments: .*at /thoughtNumber: minimum: got 0, want 1`}},
		},
	}
}

// goSDKServer is testdata/interop/gosdkserver with its interop tools (-more), built once.
func goSDKServer(t *testing.T) interopServer {
	bin := filepath.Join(binDir, "gosdkserver")
	if err := testkit.Build(bin, "./testdata/interop/gosdkserver"); err != nil {
		t.Fatal(err)
	}
	list := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "github.com/modelcontextprotocol/go-sdk")
	list.Dir = "../.."
	version, err := list.Output()
	if err != nil {
		t.Fatalf("go list -m go-sdk: %v", err)
	}
	return interopServer{
		name: "gosdkserver (testdata)", sdk: "Go SDK " + strings.TrimSpace(string(version)), version: "1.0.0",
		entries: []map[string]any{
			{"id": "go", "command": []string{bin, "-more"}, "scope": "global",
				"read": []string{"echo", "sum", "fail", "read_graph", "big", "hostile", "reword"}, "max_message": 1 << 20},
		},
		calls: []interopCall{
			{line: "spear-capability list", stdout: []string{`^go/read_graph  READ$`, `^  Reads the whole knowledge graph$`, `^  Innocent red text with an OSC \.$`,
				`^Provider go also lists tools that cannot be called: "get\(x\)" \(the name is not \[A-Za-z0-9_\.-\]\{1,128\}\); "read file" \(the name is not`},
				absent: []string{"\x1b", "\u202e"}},
			{line: "spear-capability describe go/echo go/sum go/read_graph", stdout: []string{`^output schema:$`}},
			{line: invoke("go/echo", `{"message":"héllo"}`), stdout: []string{`^héllo$`}},
			// The SDK puts the same JSON in a text item: shown once.
			{line: invoke("go/sum", `{"a":1.5,"b":2}`), stdout: []string{`^\{"sum":3\.5\}$`}, absent: []string{`(?s)3\.5.*3\.5`}},
			// A summary text and the graph only in structuredContent: both shown.
			{line: invoke("go/read_graph", `{}`), stdout: []string{`^Graph read successfully$`,
				`^\{"entities":\[\{"entityType":"project","name":"spear","observations":\["a shell for agents"\]\}\]\}$`}},
			{line: invoke("go/fail", `{"reason":"asked"}`), exit: 1, stdout: []string{`failing as asked: asked`}, stderr: []string{`tool-error: go/fail reported an error`}},
			{line: invoke("'go/read file'", `{}`), exit: 3,
				stderr: []string{`^spear-capability: unknown-capability: go/read file: provider go lists a tool of that name, but it cannot be called: the name is not`}},
			{line: invoke("'go/get(x)'", `{}`), exit: 3, stderr: []string{`provider go lists a tool of that name, but it cannot be called`}},
			{line: invoke("go/hostile", `{}`), stdout: []string{`^cleared\?evil$`}, absent: []string{"\x1b", "\u202e"}},
			// Over the entry's 1 MiB max_message: a tool-error, and the provider stays.
			{line: invoke("go/big", `{"bytes":2000000}`), exit: 1,
				stderr: []string{`tool-error: go/big: the result \(2000\d{3} bytes\) was larger than the limit of 1048576 bytes \(max_message\) and was discarded`}},
			{line: invoke("go/big", `{"bytes":100}`), stdout: []string{`^b{100}$`}},
			// The SDK announces the change (tools/list_changed, sent 10 ms after it, batched: the
			// pause stands for the agent's think time); the next answer lists again and refuses the
			// changed tool before any call reaches it.
			{line: invoke("go/reword", `{}`), stdout: []string{`^echo reworded$`}},
			{pre: "sleep 0.5", line: invoke("go/sum", `{"a":1,"b":1}`), stdout: []string{`"sum":2`}},
			{line: invoke("go/echo", `{"message":"x"}`), exit: 3, stderr: []string{`definition-changed: go/echo: the tool's definition changed`}},
			{line: "spear-capability describe go/echo", exit: 3, stderr: []string{`definition-changed`}},
		},
	}
}
