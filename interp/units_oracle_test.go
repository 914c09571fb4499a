package interp

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The unit reader must cut a session's input where bash -s does. bash -n cannot say where (it
// shows no unit boundaries, and exits 0 on an unterminated here-document), so these tests run
// the input itself through bash -s with a marker command (`echo __MN`) on lines of its own: a
// marker bash runs is a command of its own, so the unit reader must make it a unit of its own,
// and a marker bash does not run (it is here-document text, or inside a string) must not be one.

// markers replaces each line "@" of in by a marker line and returns the text and the markers'
// line numbers (1-based).
func markers(in string) (string, map[int]string) {
	lines := strings.SplitAfter(in, "\n")
	at := map[int]string{}
	for i, l := range lines {
		if strings.TrimSuffix(l, "\n") == "@" {
			m := fmt.Sprintf("__M%d", i+1)
			at[i+1] = m
			lines[i] = "echo " + m + strings.TrimPrefix(l, "@")
		}
	}
	return strings.Join(lines, ""), at
}

// syntaxErrorLine is bash's report of a syntax error in its input (not one in a command
// substitution it expands: "bash: command substitution: line 3: syntax error ...").
var syntaxErrorLine = regexp.MustCompile(`(?m)^[^:\n]*: line (\d+): syntax error`)

// expansionError is bash's report of a command substitution it could not parse when it expanded
// it (a here-document body holding `$(`): that can end bash -s at a line it does not name, or
// send it back to read lines it had read.
var expansionError = regexp.MustCompile(`(?m)^[^:\n]*: command substitution: line \d+: (syntax error|unexpected EOF)`)

// bashRuns runs text through bash -s and returns the markers it printed and the line of the
// syntax error that ended it (0 for none): bash -s reads nothing after one. After an expansion
// error nothing is judged (1).
func bashRuns(t testing.TB, bash, text string) (map[string]bool, int) {
	cmd := exec.Command(bash, "-s")
	cmd.Dir = t.TempDir()
	// No command but builtins can run: lines that are no command of bash's are not found.
	cmd.Env = []string{"PATH=/nonexistent", "LC_ALL=C", "TMPDIR=" + cmd.Dir}
	cmd.Stdin = strings.NewReader(text)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	cmd.Run()
	ran := map[string]bool{}
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "__M") {
			ran[l] = true
		}
	}
	stop := 0
	if m := syntaxErrorLine.FindStringSubmatch(errs.String()); m != nil {
		stop, _ = strconv.Atoi(m[1])
	}
	if expansionError.MatchString(errs.String()) {
		stop = 1 // nothing it ran afterwards is about where units end (it may even read lines again)
	}
	return ran, stop
}

// checkAgainstBash compares which markers of in (see markers) the unit reader makes units of
// their own with which bash -s runs.
func checkAgainstBash(t *testing.T, bash, in string) {
	t.Helper()
	text, at := markers(in)
	ran, stop := bashRuns(t, bash, text)
	u := NewUnitReader(strings.NewReader(text))
	u.Shell = bash
	own := map[string]bool{}
	var units []string
	for {
		s, err := u.Next()
		if err != nil {
			break
		}
		units = append(units, s)
		if m, ok := strings.CutPrefix(s, "echo "); ok && strings.HasPrefix(m, "__M") && strings.Count(s, "\n") <= 1 {
			own[strings.TrimSuffix(m, "\n")] = true
		}
	}
	for line, m := range at {
		if stop > 0 && line >= stop {
			continue // bash read no further
		}
		if ran[m] != own[m] {
			t.Errorf("input %q\nmarker on line %d: bash -s runs it: %v; a unit of its own: %v\nunits %q", text, line, ran[m], own[m], units)
		}
	}
}

func bashPath(t testing.TB) string {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	return bash
}

var heredocCases = []struct{ name, in string }{
	// The example: the body is not run, the listing is not answered.
	{"issue", "cat > /dev/null <<EOF\nline \\\nEOF\n@\nspear-capability list\n@\ntouch mark\nEOF\n@\n"},
	{"joined twice", ": <<EOF\na \\\nb \\\nEOF\nEOF\n@\n"},
	{"escaped backslash", ": <<EOF\na \\\\\nEOF\n@\n"},
	{"three backslashes", ": <<EOF\na \\\\\\\nEOF\n@\nEOF\n@\n"},
	{"joined delimiter", ": <<EOF\nEO\\\nF\n@\n"},
	{"delimiter then backslash", ": <<EOF\nEOF\\\n\n@\n"},
	{"quoted", ": <<'EOF'\nline \\\nEOF\n@\n"},
	{"double quoted", ": <<\"EOF\"\nline \\\nEOF\n@\n"},
	{"partly quoted", ": <<E\"O\"F\nline \\\nEOF\n@\n"},
	{"backslash quoted", ": <<\\EOF\nline \\\nEOF\n@\n"},
	{"dash", ": <<-EOF\n\tline \\\n\tEOF\n\tEOF\n@\n"},
	{"dash quoted", ": <<-'EOF'\n\tline \\\n\tEOF\n@\n"},
	{"dash joined tabs", ": <<-EOF\n\t\\\n\tEOF\n@\n"},
	{"two on a line", ": <<A <<'B'\na \\\nA\nA\nb \\\nB\n@\n"},
	{"two commands", ": <<A; : <<-B\nA\n\tB\n@\n"},
	{"in substitution", "false && : $(: <<EOF\nx \\\nEOF\nEOF\n)\n@\n"},
	{"in quoted substitution", "false && : \"$(: <<EOF\nEOF\n)\"\n@\n"},
	{"open substitution in body", ": <<EOF\n$(\nEOF\n@\n"},
	{"open backquote in body", ": <<EOF\n`\nEOF\n@\n"},
	{"pipe", ": <<EOF |\nx\nEOF\n:\n@\n"},
	{"lookalikes", ": <<EOF\n EOF\nEOF \nEOFX\n@\nEOF\n@\n"},
	{"empty delimiter", ": <<''\nx\n\n@\n"},
	{"at end", ": <<EOF\nx \\\n@\n"},
	// bash reads a backquoted command as a string: its here-document is no operator yet, and
	// the backquote closes where it closes.
	{"backquote closed in body", ": `: <<EOF\nx`\n@\nEOF\n@\n"},
	{"quote in backquote", "false && : `: <<D\nb'\nx`\n@\n"},
	{"backquote holds body", ": `: <<EOF\nx \\\nEOF\n@\nEOF`\n@\n"},
	// A command substitution closed on the operator's line: its body comes first.
	{"substitution closed on the line", ": <<A $(: <<EOF)\nx\nA\n@\nEOF\n@\n"},
	{"two substitutions closed", ": <<C $(: <<A) $(: <<'B')\nA\nb \\\nB\nC\n@\nC\n@\n"},
	// A ( that ends the line: the body is read first.
	{"subshell opened at line end", ": <<EOF && (\nx \\\nEOF\nEOF\n:\n)\n@\n"},
	// The delimiter is the word after quote removal, with $'' and $"" translated, and a $( )
	// as bash prints the command back; quotes inside expansions do not quote the word.
	{"ansi-c delimiter", ": <<$'a'\na\n@\n$'a'\n@\n"},
	{"ansi-c escape delimiter", ": <<$'a\\x41'\naA\n@\n"},
	{"locale delimiter", ": <<$\"a\"\na\n@\n$\"a\"\n@\n"},
	{"substitution delimiter", ": <<$(echo  x)\n$(echo  x)\n@\n$(echo x)\n@\n"},
	{"quotes in substitution", ": <<$(echo \"x\")\nz \\\n$(echo \"x\")\n@\n$(echo \"x\")\n@\n"},
	{"quotes in parameter", ": <<${a:-\"x\"}\nz \\\n${a:-\"x\"}\n@\n${a:-\"x\"}\n@\n"},
	{"substitution across lines", ": <<a$(\necho  b)c\na$(\necho  b)c\n@\na$(echo b)c\n@\n"},
}

func TestUnitReaderHeredocBash(t *testing.T) {
	t.Parallel()
	bash := bashPath(t)
	for _, tc := range heredocCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkAgainstBash(t, bash, tc.in)
		})
	}
}

// heredocLines are what generated inputs are made of: here-document operators of every kind,
// body lines, delimiter lines and their lookalikes, and lines that open or close strings and
// substitutions. Nothing in them runs a program (bash runs with no PATH), and a subshell opens
// only after false &&: a marker in a subshell that runs is run by bash but is rightly no unit of
// its own, which the oracle cannot tell from a missed cut.
var heredocLines = []string{
	": <<EOF", ": <<-EOF", ": <<'EOF'", ": <<\"EOF\"", ": <<\\EOF", ": <<E\"O\"F", ": <<-'E'OF",
	": <<EOF; : <<-'D'", ": <<D <<EOF", "false && : $(: <<EOF", "false && : \"$(: <<-D",
	"false && : <<EOF |", "x", "x \\", "x \\\\", "EOF", "\tEOF", " EOF", "EOF \\", "EO\\", "F", "\\",
	"D", "\tD", "\t\tx \\", "EOF\\", "", ")", "$(", "'", "\"", ": 'a", "b'", "false a \\",
	"false &&", "\t\\", "D\\",
	"false && : `: <<EOF", "x`", "false && : $(: <<EOF)", ": <<D $(: <<EOF)", "false && : <<EOF && (",
	"false && ( : <<D && (", ": <<$'EOF'", ": <<$(echo  EOF)", "$(echo EOF)", ": <<${x:-\"EOF\"}", "${x:-\"EOF\"}",
}

// genHeredocInput makes an input of at most 16 lines from data: each byte chooses a line, and
// its high bit puts a marker after it. No marker follows a line of blanks and a backslash: at
// the top level that line joins the marker's, and the marker would run as part of a command.
func genHeredocInput(data []byte) string {
	var b strings.Builder
	bare := false
	for i, c := range data {
		if i == 16 {
			break
		}
		line := heredocLines[int(c&0x7f)%len(heredocLines)]
		if strings.HasPrefix(line, ": ") {
			// No command with a here-document runs: a body is never expanded (a `$(` in it would
			// be an expansion error, after which bash -s says nothing about units).
			line = "false && " + line
		}
		b.WriteString(line + "\n")
		bare = strings.Trim(line, " \t") == `\`
		if c&0x80 != 0 && !bare {
			b.WriteString("@\n")
		}
	}
	if bare {
		b.WriteString(":\n")
	}
	b.WriteString("@\n")
	return b.String()
}

func FuzzUnitReaderHeredoc(f *testing.F) {
	bash := bashPath(f)
	for _, seed := range [][]byte{
		{0, 13 | 0x80, 15, 14 | 0x80},          // : <<EOF / x \ / EOF / EOF
		{1, 24 | 0x80, 16 | 0x80, 16},          // <<- with a joined tab line
		{5, 13, 15 | 0x80, 15},                 // E"O"F: no join
		{9, 13, 15, 15, 28 | 0x80},             // in $( )
		{7, 15, 13, 20 | 0x80, 15, 21},         // two, the second quoted
		{0, 19, 20 | 0x80},                     // EO\ F
		{11, 12, 15 | 0x80, 12 | 0x80},         // a pipe
		{10, 13, 22 | 0x80, 23, 28, 26 | 0x80}, // "$(<<-D
		{42, 22 | 0x80, 27 | 0x80, 27 | 0x80},  // a ( within a ( at a line's end
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkAgainstBash(t, bash, genHeredocInput(data))
	})
}

// A batch of units mvdan cannot parse starts one real shell, not one per unit (and not one per
// line: each unit here is three lines, and each line was asked about).
func TestUnitReaderOneChecker(t *testing.T) {
	bash := bashPath(t)
	dir := t.TempDir()
	count := filepath.Join(dir, "count")
	shell := filepath.Join(dir, "bash")
	script := "#!/bin/sh\necho x >> '" + count + "'\nexec '" + bash + "' \"$@\"\n"
	if err := os.WriteFile(shell, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	unit := "a=(\n [1]==\n)\n"
	in := strings.Repeat(unit+"echo $a\n", 20)
	u := NewUnitReader(strings.NewReader(in))
	u.Shell = shell
	var got []string
	for {
		s, err := u.Next()
		if err != nil {
			break
		}
		got = append(got, s)
	}
	if len(got) != 40 || got[0] != unit || got[1] != "echo $a\n" || got[38] != unit {
		t.Errorf("units %q", got)
	}
	b, _ := os.ReadFile(count)
	if n := bytes.Count(b, []byte("x")); n > 1 {
		t.Errorf("%d real shells started for one batch; want at most 1", n)
	}
}

// unparsableInput is a command mvdan cannot parse that bash reads as one: an array assignment of
// n lines, as bash's own unicode1.sub has.
func unparsableInput(n int) string {
	var b strings.Builder
	b.WriteString("declare -a T=(\n")
	for i := range n {
		fmt.Fprintf(&b, " [0x%04x]=$'\\%03o' [0x%04x]==x\n", 2*i, i%256, 2*i+1)
	}
	b.WriteString(")\necho ${#T[@]}\n")
	return b.String()
}

// BenchmarkUnparsable reads a 500-line command mvdan cannot parse: through the unit reader
// (asking the real shell), and through bash -s itself, side by side.
func BenchmarkUnparsable(b *testing.B) {
	bash := bashPath(b)
	in := unparsableInput(500)
	b.Run("units", func(b *testing.B) {
		for b.Loop() {
			u := NewUnitReader(strings.NewReader(in))
			u.Shell = bash
			n := 0
			for {
				if _, err := u.Next(); err != nil {
					break
				}
				n++
			}
			if n != 2 {
				b.Fatalf("%d units; want 2", n)
			}
		}
	})
	b.Run("bash-s", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command(bash, "-s")
			cmd.Stdin = strings.NewReader(in)
			if out, err := cmd.Output(); err != nil || string(out) != "1000\n" {
				b.Fatalf("bash -s: %q, %v", out, err)
			}
		}
	})
}
