package envelope

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Exact texts as the terminals sent them (testdata/harness/captured), with paths of our own.
const (
	claudeSetup = `source /home/u/.claude/shell-snapshots/snapshot-bash-1796137640383-mm6h10.sh 2>/dev/null || true && \builtin shopt -u extglob 2>/dev/null || true && { \builtin unalias -- 'which'; \builtin unset -f -- 'which'; } >/dev/null 2>&1 || true && { \builtin unalias -- 'unsetenv'; \builtin unset -f -- 'unsetenv'; } >/dev/null 2>&1 || true && `
	geminiHead  = "shopt -u promptvars nullglob extglob nocaseglob dotglob; _bgpids_file=/tmp/gemini-shell-nviR6R/bgpids.tmp\n(\n  trap 'jobs -p > \"$_bgpids_file\"' EXIT\n"
	geminiTail  = "\n)\n__code=$?\nexit $__code"
	codexSelf   = "/usr/local/bin/bash"
)

func claude(word, tail string) string {
	return claudeSetup + "eval " + word + tail + " && pwd -P >| /tmp/claude-bca6-cwd"
}

func gemini(cmd string) string { return geminiHead + cmd + geminiTail }

// codex is Codex's snapshot envelope around a command word, made from the template (the
// captured texts check the template itself: TestCapturedEnvelopes).
func codex(word string) string {
	e := Envelopes("codex")[0]
	t := strings.Replace(e.Text, markWord, "/home/u/.codex/shell_snapshots/01a2.1796.sh", 1)
	t = strings.ReplaceAll(t, markDir, "/usr/lib/node_modules/@openai/codex/vendor/codex-path")
	t = strings.Replace(t, markSelf, codexSelf, 1)
	return strings.Replace(t, "'"+markCommand+"'", word, 1)
}

var envelopeTests = []struct {
	name, terminal, src string
	login               bool
	variant, command    string // variant "" = no match
}{
	{"claude stdin", "claude-code", claude(`'spear-capability list'`, " < /dev/null"), false, "snapshot-stdin", "spear-capability list"},
	{"claude quote inside", "claude-code", claude(`'echo first`+"\n"+`spear-capability invoke notes/search_notes '"'"'{"query": "spear"}'"'"''`, " < /dev/null"), false,
		"snapshot-stdin", "echo first\nspear-capability invoke notes/search_notes '{\"query\": \"spear\"}'"},
	{"claude heredoc, no stdin", "claude-code", claude(`'cat <<'"'"'EOF'"'"'`+"\nheredoc body\nEOF'", ""), false, "snapshot", "cat <<'EOF'\nheredoc body\nEOF"},
	{"claude bare word", "claude-code", claude(`pwd`, " < /dev/null"), false, "snapshot-stdin", "pwd"},
	{"claude no snapshot", "claude-code", strings.TrimPrefix(claude(`'spear-capability list'`, " < /dev/null"), `source /home/u/.claude/shell-snapshots/snapshot-bash-1796137640383-mm6h10.sh 2>/dev/null || true && `), false, "nosnapshot-stdin", "spear-capability list"},
	{"claude command substitution in the word", "claude-code", claude(`"$(spear-capability list)"`, " < /dev/null"), false, "", ""},
	{"claude variable in the word", "claude-code", claude(`'spear-capability '$x`, " < /dev/null"), false, "", ""},
	{"claude ANSI-C word", "claude-code", claude(`$'spear-capability list'`, " < /dev/null"), false, "", ""},
	{"claude glob in the word", "claude-code", claude(`spear-capability*`, " < /dev/null"), false, "", ""},
	{"claude two words", "claude-code", claude(`'spear-capability list' x`, " < /dev/null"), false, "", ""},
	{"claude command after", "claude-code", claude(`'spear-capability list'`, " < /dev/null") + "; rm -rf x", false, "", ""},
	{"claude command before", "claude-code", "rm -rf x; " + claude(`'spear-capability list'`, " < /dev/null"), false, "", ""},
	{"claude trailing newline", "claude-code", claude(`'spear-capability list'`, " < /dev/null") + "\n", false, "", ""},
	{"claude snapshot path with a variable", "claude-code", strings.Replace(claude(`'spear-capability list'`, " < /dev/null"), "/home/u/", "$HOME/", 1), false, "", ""},
	{"claude snapshot path with a space", "claude-code", strings.Replace(claude(`'spear-capability list'`, " < /dev/null"), "/home/u/", "'/home/u x/'", 1), false, "", ""},
	{"claude other redirection", "claude-code", claude(`'spear-capability list'`, " < /etc/passwd"), false, "", ""},
	{"claude or instead of and", "claude-code", strings.Replace(claude(`'spear-capability list'`, " < /dev/null"), "< /dev/null &&", "< /dev/null ||", 1), false, "", ""},
	{"claude under another terminal", "gemini", claude(`'spear-capability list'`, " < /dev/null"), false, "", ""},

	{"gemini", "gemini", gemini("spear-capability list"), false, "subshell", "spear-capability list"},
	{"gemini two lines", "gemini", gemini("echo first\nspear-capability list"), false, "subshell", "echo first\nspear-capability list"},
	{"gemini heredoc", "gemini", gemini("cat <<'EOF'\nspear-capability list\nEOF"), false, "subshell", "cat <<'EOF'\nspear-capability list\nEOF"},
	{"gemini comment last", "gemini", gemini("spear-capability list\n# done"), false, "subshell", "spear-capability list\n# done"},
	{"gemini trailing semicolon", "gemini", gemini("spear-capability list;"), false, "subshell", "spear-capability list;"},
	{"gemini breaks out of the subshell", "gemini", gemini("echo a\n)\nspear-capability list\n(\necho b"), false, "", ""},
	{"gemini command after", "gemini", gemini("spear-capability list") + "\necho after", false, "", ""},
	{"gemini command before", "gemini", "echo before; " + gemini("spear-capability list"), false, "", ""},
	{"gemini trap changed", "gemini", strings.Replace(gemini("spear-capability list"), "jobs -p", "jobs -l", 1), false, "", ""},
	{"gemini temp file with a substitution", "gemini", strings.Replace(gemini("spear-capability list"), "/tmp/gemini-shell-nviR6R", "$(spear-capability list)", 1), false, "", ""},
	{"gemini empty command", "gemini", gemini(""), false, "", ""},
	{"gemini comment only", "gemini", gemini("# spear-capability list"), false, "", ""},
	{"gemini carriage return", "gemini", gemini("spear-capability list\r"), false, "", ""},

	{"codex", "codex", codex(`'spear-capability list'`), false, "snapshot", "spear-capability list"},
	{"codex quote inside", "codex", codex(`'bash -c '"'"'exit 7'"'"''`), false, "snapshot", "bash -c 'exit 7'"},
	{"codex self is another program", "codex", strings.Replace(codex(`'spear-capability list'`), codexSelf, "/bin/bash", 1), false, "", ""},
	{"codex self relative", "codex", strings.Replace(codex(`'spear-capability list'`), "'"+codexSelf+"'", "bash", 1), false, "", ""},
	{"codex with a name", "codex", codex(`'spear-capability list' name`), false, "", ""},
	{"codex with another option", "codex", strings.Replace(codex(`'spear-capability list'`), " -c ", " -x -c ", 1), false, "", ""},
	{"codex login", "codex", "spear-capability list", true, "login", "spear-capability list"},
	{"codex without login", "codex", "spear-capability list", false, "", ""},

	{"terminal-bench blocking", "terminal-bench", "spear-capability list; tmux wait -S done", false, "blocking", "spear-capability list"},
	{"terminal-bench two commands", "terminal-bench", "cd /app; spear-capability list; tmux wait -S done", false, "blocking", "cd /app; spear-capability list"},
	{"terminal-bench typed", "terminal-bench", "spear-capability list", false, "typed", "spear-capability list"},
	{"terminal-bench other channel", "terminal-bench", "spear-capability list; tmux wait -S other", false, "typed", "spear-capability list; tmux wait -S other"},
	{"terminal-bench in a comment", "terminal-bench", "spear-capability list # ; tmux wait -S done", false, "typed", "spear-capability list # ; tmux wait -S done"},

	{"no terminal", "none", "spear-capability list", false, "", ""},
	{"unknown terminal", "vim", "spear-capability list", false, "", ""},
}

func TestMatchEnvelope(t *testing.T) {
	t.Parallel()
	ctx := func(login bool) Context {
		return Context{Login: login, IsSelf: func(p string) bool { return p == codexSelf }}
	}
	for _, tt := range envelopeTests {
		t.Run(tt.name, func(t *testing.T) {
			m := MatchEnvelope(tt.terminal, tt.src, ctx(tt.login))
			switch {
			case m == nil && tt.variant != "":
				t.Fatalf("no match, want %s", tt.variant)
			case m != nil && tt.variant == "":
				t.Fatalf("matched %s/%s (command %q), want no match", m.Envelope.Version, m.Envelope.Variant, m.Command)
			case m != nil && (m.Envelope.Variant != tt.variant || m.Command != tt.command):
				t.Fatalf("matched %s with command %q, want %s with %q", m.Envelope.Variant, m.Command, tt.variant, tt.command)
			}
		})
	}
}

// TestEnvelopeMutations: one byte changed, removed or added anywhere in an envelope's own text
// makes it no envelope (the same text is the only exception).
func TestEnvelopeMutations(t *testing.T) {
	t.Parallel()
	ctx := Context{IsSelf: func(p string) bool { return p == codexSelf }}
	for _, tt := range envelopeTests {
		if tt.variant == "" || tt.login || tt.variant == "typed" {
			continue // nothing of its own to mutate
		}
		m := MatchEnvelope(tt.terminal, tt.src, ctx)
		if m == nil {
			t.Fatalf("%s: no match", tt.name)
		}
		fixed := m.fixedOffsets()
		for i := 0; i < len(fixed); i++ {
			off := fixed[i]
			if len(fixed) > 2000 && i < len(fixed)-300 && i%601 != 0 {
				continue // Codex's 38 KB prelude: its end, and a sample of the rest
			}
			for _, mut := range mutations(tt.src, off) {
				if mut == tt.src {
					continue
				}
				// A form that is the command alone (typed) takes any text, as before.
				if got := MatchEnvelope(tt.terminal, mut, ctx); got != nil && got.Command != mut && !m.slotGrows(mut) {
					t.Fatalf("%s: mutated at %d (%q) still matches %s with command %q", tt.name, off, mut[max(0, off-20):min(len(mut), off+20)], got.Envelope.Variant, got.Command)
				}
			}
		}
	}
}

const mutationBytes = " x;\n&|'\"$()0"

// mutations of src at off: the byte replaced by a few that matter to a shell, removed, and
// with one inserted before it.
func mutations(src string, off int) []string {
	var out []string
	for _, b := range []byte(mutationBytes) {
		out = append(out, src[:off]+string(b)+src[off+1:], src[:off]+string(b)+src[off:])
	}
	return append(out, src[:off]+src[off+1:])
}

// slotGrows tells whether mut is m's input with a byte added at the start or end of a slot:
// the byte is then the slot's, not a change of the envelope's own text.
func (m *Match) slotGrows(mut string) bool {
	for _, b := range m.bindings {
		for _, at := range []int{b.start, b.end} {
			for _, c := range []byte(mutationBytes) {
				if mut == m.src[:at]+string(c)+m.src[at:] {
					return true
				}
			}
		}
	}
	return false
}

// fixedOffsets lists the offsets of the input that belong to the envelope's own text.
func (m *Match) fixedOffsets() []int {
	var out []int
	for i := 0; i < len(m.src); i++ {
		in := false
		for _, b := range m.bindings {
			if i >= b.start && i < b.end {
				in = true
			}
		}
		if !in {
			out = append(out, i)
		}
	}
	return out
}

// TestEnvelopePlans: what each envelope runs, in order, follows from the template's tree.
func TestEnvelopePlans(t *testing.T) {
	t.Parallel()
	want := map[string]string{
		"claude-code 2.1.332/snapshot-stdin":   "forward require command require forward",
		"claude-code 2.1.332/nosnapshot":       "forward require command require forward",
		"gemini 0.61.0/subshell":               "forward forward forward command forward forward",
		"terminal-bench 0.2/blocking":          "command outside",
		"terminal-bench 0.2/typed":             "command",
		"codex 0.171.0/login":                  "command",
		"codex 0.171.0/snapshot (fresh, last)": "command",
	}
	names := []string{"forward", "require", "command", "outside"}
	for _, term := range Terminals() {
		for _, e := range Envelopes(term) {
			var kinds []string
			for _, s := range e.plan.steps {
				kinds = append(kinds, names[s.kind])
			}
			key := term + " " + e.Version + "/" + e.Variant
			got := strings.Join(kinds, " ")
			if e.plan.fresh {
				key += " (fresh, last)"
				got = kinds[len(kinds)-1]
			}
			if w, ok := want[key]; ok && got != w {
				t.Errorf("%s: plan %s, want %s", key, got, w)
			}
		}
	}
	if len(Terminals()) != 4 {
		t.Errorf("terminals %v, want claude-code, codex, gemini, terminal-bench", Terminals())
	}
}

// TestCapturedEnvelopes: every shell call the real terminals made for a model's command (make
// harness-capture) is one of their envelopes, with that command in its slot.
func TestCapturedEnvelopes(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("../../testdata/harness/captured/*.txt")
	if len(files) == 0 {
		t.Skip("no captured texts in testdata/harness/captured")
	}
	terminals := map[string]string{"claude-code": "claude-code", "codex": "codex", "gemini": "gemini"}
	checked := 0
	for _, file := range files {
		base := filepath.Base(file)
		term := terminals[strings.SplitN(base, "-", 2)[0]]
		if strings.HasPrefix(base, "claude-code") {
			term = "claude-code"
		}
		if term == "" {
			continue
		}
		for _, st := range readCaptured(t, file) {
			var matched []*Match
			for _, call := range st.calls {
				ctx := Context{Login: call.login, IsSelf: func(p string) bool { return strings.HasSuffix(p, "/shell/bash") }}
				if m := MatchEnvelope(term, call.text, ctx); m != nil {
					matched = append(matched, m)
				}
			}
			if len(matched) == 0 {
				t.Errorf("%s: step %q: no call is an envelope", base, st.command)
				continue
			}
			for _, m := range matched {
				// Gemini takes a `bash -c '...'` wrapper off the model's command itself.
				if m.Command != st.command && !(term == "gemini" && st.command == "bash -c '"+m.Command+"'") {
					t.Errorf("%s: step %q: envelope %s holds %q", base, st.command, m.Envelope.Variant, m.Command)
				}
			}
			checked++
		}
	}
	if checked < 20 {
		t.Errorf("only %d captured steps checked", checked)
	}
}

type capturedCall struct {
	text  string
	login bool
}

type capturedStep struct {
	command string
	calls   []capturedCall
}

// readCaptured reads a capture file: "-- step N: CMD" (JSON) then "== call" blocks of JSON
// arguments, the command string last.
func readCaptured(t *testing.T, file string) []capturedStep {
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var steps []capturedStep
	var args []string
	flush := func() {
		if len(steps) > 0 && len(args) > 0 {
			login := false
			for _, a := range args[:len(args)-1] {
				login = login || (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "l"))
			}
			s := &steps[len(steps)-1]
			s.calls = append(s.calls, capturedCall{args[len(args)-1], login})
		}
		args = nil
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "-- step "):
			flush()
			_, cmd, _ := strings.Cut(line, ": ")
			var c string
			if err := json.Unmarshal([]byte(cmd), &c); err != nil {
				t.Fatalf("%s: %q: %v", file, line, err)
			}
			steps = append(steps, capturedStep{command: c})
		case strings.HasPrefix(line, "== call"):
			flush()
		case strings.HasPrefix(line, `"`):
			var a string
			if err := json.Unmarshal([]byte(line), &a); err != nil {
				t.Fatalf("%s: %q: %v", file, line, err)
			}
			args = append(args, a)
		}
	}
	flush()
	return steps
}

func TestHead(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"spear-capability list", 100, "spear-capability list"},
		{"spear-capability list", 5, "spear"},
		{"a\x1b[31mb\r\n\tc\x7f", 100, "a\ufffd[31mb\ufffd\n\tc\ufffd"},
		{"é", 1, ""},
		{"aé", 2, "a"},
		{"a\xffb", 100, "a\ufffdb"},
		{"a\u0085b", 100, "a\ufffdb"},
	}
	for _, tt := range tests {
		if got := Head(tt.in, tt.n); got != tt.want {
			t.Errorf("Head(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

// BenchmarkMatchEnvelope measures the match of each terminal's usual text (go test -bench
// MatchEnvelope ./interp/envelope/).
func BenchmarkMatchEnvelope(b *testing.B) {
	ctx := Context{IsSelf: func(p string) bool { return p == codexSelf }}
	for _, c := range []struct{ terminal, src string }{
		{"claude-code", claude(`'spear-capability list'`, " < /dev/null")},
		{"codex", codex(`'spear-capability list'`)},
		{"gemini", gemini("spear-capability list")},
		{"terminal-bench", "spear-capability list; tmux wait -S done"},
	} {
		b.Run(c.terminal, func(b *testing.B) {
			for b.Loop() {
				if MatchEnvelope(c.terminal, c.src, ctx) == nil {
					b.Fatal("no match")
				}
			}
		})
	}
}

// TestTemplateErrors: a template whose command sits where no plan can be made of it is refused
// when the envelopes load, with a reason (a new terminal version must not slip in half-understood).
func TestTemplateErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ text, want string }{
		{"echo a", "0 command slots"},
		{"eval __SPEAR_COMMAND__; eval __SPEAR_COMMAND__", "2 command slots"},
		{"true || eval __SPEAR_COMMAND__", "only && is understood"},
		{"eval __SPEAR_COMMAND__ | cat", "only && is understood"},
		{"echo a; true && eval __SPEAR_COMMAND__", "must be the whole text"},
		{"echo __SPEAR_COMMAND__", "must be `eval CMD` or `exec SELF -c CMD`"},
		{"exec /bin/bash -c __SPEAR_COMMAND__", "must be `eval CMD` or `exec SELF -c CMD`"},
		{"eval __SPEAR_COMMAND__ > /dev/null", "only redirection may be < /dev/null"},
		{"{ __SPEAR_COMMAND__; } > out", "inside a *syntax.Block"},
		{"! eval __SPEAR_COMMAND__", "has flags"},
		{"if true; then __SPEAR_COMMAND__; fi", "inside a *syntax.IfClause"},
		{"echo 'unclosed", "without closing quote"},
	}
	for _, tt := range tests {
		e := &Envelope{Terminal: "t", Version: "1", Variant: "v", Text: tt.text}
		err := e.compile(nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("compile(%q) = %v, want an error with %q", tt.text, err, tt.want)
		}
	}
}
