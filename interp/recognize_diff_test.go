//go:build unix

package interp

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The differential test runs generated inputs under the real bash with a
// recording spear-capability first on PATH. Whenever bash runs the name,
// Analyze must not forward the input; when the generator put the name only in
// text positions (and made no untrusted form), Analyze must not refuse it.

// chooser drives the generator.
type chooser interface{ intn(n int) int }

type randChooser struct{ r *rand.Rand }

func (c randChooser) intn(n int) int { return c.r.IntN(n) }

// byteChooser turns fuzz bytes into choices; once they run out it picks 0,
// which always leads to the shortest production.
type byteChooser struct {
	b []byte
	i int
}

func (c *byteChooser) intn(n int) int {
	if c.i >= len(c.b) {
		return 0
	}
	v := int(c.b[c.i]) % n
	c.i++
	return v
}

// gen writes one input. It tracks what it placed: the name (after quote
// removal) in a command position, and forms the parser cannot be trusted with.
type gen struct {
	c         chooser
	b         strings.Builder
	depth     int
	inBq      bool // inside backquotes: no nested backquotes or here-documents
	named     bool // the name was put in a command position
	untrusted bool
}

// Spellings of the name, and words that are not the name.
var (
	nameSpellings = []string{
		`spear-capability`, `"spear-capability"`, `'spear-capability'`, `spear\-capability`,
		`'spear'"-capability"`, `sp"ea"r-capability`, `$'spear-capability'`, "spear-\\\ncapability",
		`\spear-capability`, `spear-capabilit"y"`,
	}
	otherSpellings = []string{
		"spear\u2010capability", `spear-capabilit`, `xspear-capability`, `spear-capabilityx`,
		`spear_capability`,
	}
	nameArgs = []string{"", " list", " describe a/b", " invoke a/b '{}'", " bogus", ` list "$(true)"`}
	textArgs = []string{
		" spear-capability", " 'spear-capability list'", ` "spear-capability"`, " spear-capability list",
		` x\ spear-capability`, " a", "",
	}
	delimiters = []struct {
		word   string
		quoted bool
	}{
		{"EOF", false}, {"'EOF'", true}, {`"EOF"`, true}, {`"E"OF`, true}, {`E\OF`, true},
		{`'E'OF`, true}, {"\\EOF", true},
	}
)

func (g *gen) pick(list []string) string { return list[g.c.intn(len(list))] }

func (g *gen) w(s string) { g.b.WriteString(s) }

// program: lines of lists, some with comments.
func (g *gen) program() {
	n := 1 + g.c.intn(3)
	for i := 0; i < n; i++ {
		if i > 0 {
			g.w("\n")
		}
		g.line()
	}
}

func (g *gen) line() {
	switch g.c.intn(12) {
	case 0:
		g.w("# " + g.pick(textArgs))
		return
	case 1:
		if !g.inBq {
			g.heredoc()
			return
		}
	case 2:
		g.w("f() { ")
		g.list()
		g.w("; }; f")
		return
	case 3:
		g.w("coproc ")
		g.simple()
		return
	}
	g.list()
	switch g.c.intn(8) {
	case 0:
		g.w(" # note spear-capability list")
	case 1:
		if !g.inBq {
			// bash ends the comment at the newline despite the backslash
			// (inside backquotes it would not)
			g.w(" # note \\")
		}
	case 2:
		g.w(" &")
	case 3:
		g.w(";")
	}
}

func (g *gen) list() {
	g.pipeline()
	for g.c.intn(3) == 1 {
		g.w([]string{"; ", " && ", " || ", " & ", " && \\\n"}[g.c.intn(5)])
		g.pipeline()
	}
}

func (g *gen) pipeline() {
	switch g.c.intn(8) {
	case 1:
		g.w("! ")
	case 2:
		g.w("time ")
	case 3:
		g.w("time -p ")
	}
	g.command()
	if g.c.intn(4) == 1 {
		g.w([]string{" | ", " |& ", " |\n"}[g.c.intn(3)])
		g.command()
	}
}

// command writes one command. Every $( is followed by a blank: bash and mvdan
// read $(( differently, and people write $( ( for a subshell.
func (g *gen) command() {
	if g.depth > 3 {
		g.simple()
		return
	}
	g.depth++
	defer func() { g.depth-- }()
	switch g.c.intn(16) {
	case 1:
		g.w("( ")
		g.list()
		g.w(" )")
	case 2:
		g.w("{ ")
		g.list()
		g.w("; }")
	case 3:
		g.w("if ")
		g.list()
		g.w("; then ")
		g.list()
		g.w("; fi")
	case 4:
		g.w("while false; do ")
		g.list()
		g.w("; done")
	case 5:
		g.w("for i in 1; do ")
		g.list()
		g.w("; done")
	case 6:
		g.w("case x in x) ")
		g.list()
		g.w(";; esac")
	case 7:
		g.w("echo $( ")
		g.list()
		g.w(")")
	case 8:
		g.w(`echo "$( `)
		g.list()
		g.w(`)"`)
	case 9:
		if g.inBq {
			g.simple()
			return
		}
		g.inBq = true
		g.w("echo `")
		g.list()
		g.w("`")
		g.inBq = false
	case 10:
		g.w("cat <(")
		g.list()
		g.w(")")
	case 11:
		g.w("x=$( ")
		g.list()
		g.w(")")
	case 12:
		g.w("echo ${x:-$( ")
		g.list()
		g.w(")}")
	case 13:
		if g.inBq {
			// mvdan cannot parse [[ ]] inside backquotes: a parse error is an
			// untrusted form (refused when the name is in the text).
			g.simple()
			return
		}
		g.w("[[ -n $( ")
		g.list()
		g.w(") ]]")
	default:
		g.simple()
	}
}

func (g *gen) simple() {
	switch g.c.intn(10) {
	case 0, 1:
		g.w("echo" + g.pick(textArgs))
	case 2:
		g.w([]string{"true", ":", "false"}[g.c.intn(3)])
	case 3:
		g.w(g.pick(otherSpellings) + g.pick(nameArgs))
	case 4:
		g.w("command -v " + g.pick(nameSpellings) + " >/dev/null")
	case 5:
		if !g.inBq {
			// Without extglob bash reads !( as ! and a subshell.
			g.w("!(" + g.pick(nameSpellings) + g.pick(nameArgs) + ")")
			g.named, g.untrusted = true, true
			return
		}
		fallthrough
	default:
		wrapper := []string{"", "", "", "exec ", "command ", "command -p ", "builtin command ", "command -- "}[g.c.intn(8)]
		g.w(wrapper + g.pick(nameSpellings) + g.pick(nameArgs))
		g.named = true
	}
}

// heredoc writes a here-document whose body holds the name as text or in a
// substitution, which runs only when no part of the delimiter is quoted.
func (g *gen) heredoc() {
	d := delimiters[g.c.intn(len(delimiters))]
	end := strings.NewReplacer("'", "", `"`, "", `\`, "").Replace(d.word)
	g.w("cat <<" + d.word + " >/dev/null\n")
	switch g.c.intn(5) {
	case 0:
		g.w("spear-capability list\n")
	case 1:
		g.w("text " + g.pick(nameSpellings) + " here\n")
	case 2:
		// mvdan cannot parse this body as unquoted; bash reads it as text
		// under a quoted delimiter and fails to expand it otherwise.
		g.w("text " + g.pick(nameSpellings) + " ` $(\n")
	default:
		inner := gen{c: g.c, depth: g.depth + 1, inBq: true}
		inner.w("$( ")
		inner.list()
		inner.w(")")
		g.w("x " + inner.b.String() + "\n")
		if !d.quoted {
			g.named = g.named || inner.named
			g.untrusted = g.untrusted || inner.untrusted
		}
	}
	g.w(end)
}

func generate(c chooser) gen {
	g := gen{c: c}
	g.program()
	if c.intn(10) == 0 {
		g.w("\r")
		g.untrusted = true
	}
	return g
}

// bashRunner runs inputs under bash with a recording stub first on PATH.
type bashRunner struct {
	bash string
	dir  string
	n    int
}

func newBashRunner(t testing.TB) *bashRunner {
	t.Helper()
	bash := "/bin/bash"
	if _, err := os.Stat(bash); err != nil {
		t.Skipf("no %s: %v", bash, err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	stub := "#!/bin/sh\necho ran >> \"$SPEAR_DIFF_LOG\"\n"
	if err := os.WriteFile(filepath.Join(bin, Name), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	return &bashRunner{bash: bash, dir: dir}
}

// run reports whether bash ran the name, and whether it found the input broken
// (a syntax error, or a substitution it could not read).
func (r *bashRunner) run(t testing.TB, src string) (ran, syntaxErr bool) {
	t.Helper()
	r.n++
	work := filepath.Join(r.dir, fmt.Sprint("run", r.n))
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	log, errFile := filepath.Join(work, "log"), filepath.Join(work, "stderr")
	stderr, err := os.Create(errFile)
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.bash, "-c", src)
	cmd.Dir = work
	cmd.Env = []string{
		"PATH=" + filepath.Join(r.dir, "bin") + ":/usr/bin:/bin", "HOME=" + work, "LC_ALL=C",
		"SPEAR_DIFF_LOG=" + log,
	}
	cmd.Stderr = stderr // a file, so background children cannot hold up Wait
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	err = cmd.Run()
	if cmd.Process != nil {
		// Background jobs and coprocesses outlive bash -c: end them.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if ctx.Err() != nil {
		t.Fatalf("bash -c %q did not finish: %v", src, err)
	}
	if _, err := os.Stat(log); err == nil {
		ran = true
	} else if !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	msg, _ := os.ReadFile(errFile)
	broken := false
	for _, m := range []string{"syntax error", "unexpected EOF", "bad substitution"} {
		broken = broken || strings.Contains(string(msg), m)
	}
	return ran, broken
}

// checkDifferential runs one generated input and checks Analyze against bash.
func checkDifferential(t testing.TB, r *bashRunner, g gen) {
	t.Helper()
	src := g.b.String()
	ran, syntaxErr := r.run(t, src)
	a := Analyze(src)
	if ran && a.Verdict == Forward {
		t.Errorf("bash ran %s in\n%s\nbut Analyze forwards it", Name, src)
	}
	if !g.named && !g.untrusted && !syntaxErr && a.Verdict == Refuse {
		t.Errorf("the name is only text in\n%s\nbut Analyze refuses it: %s: %s", src, a.Code, a.Reason)
	}
}

func TestDifferential(t *testing.T) {
	t.Parallel()
	r := newBashRunner(t)
	n := 400
	if testing.Short() {
		n = 60
	}
	seen := map[string]bool{}
	ran, command := 0, 0
	for seed := uint64(1); len(seen) < n && seed < uint64(20*n); seed++ {
		g := generate(randChooser{rand.New(rand.NewPCG(seed, 0x5eed))})
		if seen[g.b.String()] {
			continue
		}
		seen[g.b.String()] = true
		if g.named {
			command++
		}
		checkDifferential(t, r, g)
		if t.Failed() {
			t.Fatalf("seed %d", seed)
		}
		ran++
	}
	// The generator must exercise both directions.
	if command == 0 || command == ran {
		t.Errorf("%d of %d inputs put the name in a command position", command, ran)
	}
}

func FuzzDifferential(f *testing.F) {
	for _, seed := range []string{"", "\x01", "\x05\x07", "\x01\x00\x0b", "\x04\x03\x02\x01", "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := newBashRunner(t)
		checkDifferential(t, r, generate(&byteChooser{b: data}))
	})
}
