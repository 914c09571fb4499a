package interp

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

var unitTests = []struct {
	name  string
	in    string
	units []string
}{
	{"empty", "", nil},
	{"lines", "echo a\necho b\n", []string{"echo a\n", "echo b\n"}},
	{"blank lines", "\n\necho\n", []string{"\n", "\n", "echo\n"}},
	{"no final newline", "echo a\necho b", []string{"echo a\n", "echo b"}},
	{"two commands on a line", "echo a; echo b\n", []string{"echo a; echo b\n"}},
	{"single quote", "echo 'a\nb'\necho c", []string{"echo 'a\nb'\n", "echo c"}},
	{"double quote", "echo \"a\nb\nc\"\necho d\n", []string{"echo \"a\nb\nc\"\n", "echo d\n"}},
	{"backslash newline", "echo a \\\nb\necho c\n", []string{"echo a \\\nb\n", "echo c\n"}},
	{"backslash newline twice", "echo a \\\nb \\\nc\n", []string{"echo a \\\nb \\\nc\n"}},
	{"escaped backslash", "echo a \\\\\necho b\n", []string{"echo a \\\\\n", "echo b\n"}},
	{"comment backslash", "echo a # x \\\necho b\n", []string{"echo a # x \\\n", "echo b\n"}},
	{"comment only backslash", "# x \\\necho b\n", []string{"# x \\\n", "echo b\n"}},
	{"pipe", "echo a |\ncat\necho b\n", []string{"echo a |\ncat\n", "echo b\n"}},
	{"and", "true &&\necho b\n", []string{"true &&\necho b\n"}},
	{"or", "false ||\n\necho b\n", []string{"false ||\n\necho b\n"}},
	{"if", "if true; then\necho a\nfi\necho b\n", []string{"if true; then\necho a\nfi\n", "echo b\n"}},
	{"while", "while false\ndo\n:\ndone\n", []string{"while false\ndo\n:\ndone\n"}},
	{"case", "case x in\nx) echo;;\nesac\n", []string{"case x in\nx) echo;;\nesac\n"}},
	{"function", "f() {\necho\n}\nf\n", []string{"f() {\necho\n}\n", "f\n"}},
	{"subshell", "(\necho\n)\n", []string{"(\necho\n)\n"}},
	{"command substitution", "x=$(\necho\n)\necho $x\n", []string{"x=$(\necho\n)\n", "echo $x\n"}},
	{"heredoc", "cat <<EOF\nx\nEOF\necho b\n", []string{"cat <<EOF\nx\nEOF\n", "echo b\n"}},
	{"heredoc quoted", "cat <<'EOF'\n$(\nEOF\necho b\n", []string{"cat <<'EOF'\n$(\nEOF\n", "echo b\n"}},
	{"heredoc dash", "cat <<-EOF\n\tx\n\tEOF\necho b\n", []string{"cat <<-EOF\n\tx\n\tEOF\n", "echo b\n"}},
	{"heredoc delimiter lookalike", "cat <<EOF\n EOF\nEOFX\nEOF\n", []string{"cat <<EOF\n EOF\nEOFX\nEOF\n"}},
	{"heredoc two", "cat <<A <<B\na\nA\nb\nB\necho\n", []string{"cat <<A <<B\na\nA\nb\nB\n", "echo\n"}},
	{"heredoc in substitution", "x=$(cat <<EOF\nhi\nEOF\n)\necho\n", []string{"x=$(cat <<EOF\nhi\nEOF\n)\n", "echo\n"}},
	// Bash reads a body raw to its delimiter and expands it later: an unbalanced
	// backquote or $( in the body does not keep the unit open.
	{"heredoc open backquote", "cat <<EOF\nuse `x\nEOF\necho b\n", []string{"cat <<EOF\nuse `x\nEOF\n", "echo b\n"}},
	{"heredoc open substitution", "cat <<EOF\n$(\nEOF\necho b\n", []string{"cat <<EOF\n$(\nEOF\n", "echo b\n"}},
	{"heredoc partly quoted", "cat <<\"E\"OF\n$(\nEOF\necho b\n", []string{"cat <<\"E\"OF\n$(\nEOF\n", "echo b\n"}},
	{"heredoc quote in delimiter", "cat <<\"it's\"\n`\nit's\necho b\n", []string{"cat <<\"it's\"\n`\nit's\n", "echo b\n"}},
	{"heredoc at end", "cat <<EOF\nx\n", []string{"cat <<EOF\nx\n"}},
	{"here-string", "cat <<<x\necho\n", []string{"cat <<<x\n", "echo\n"}},
	{"shift", "echo $((1<<2))\necho\n", []string{"echo $((1<<2))\n", "echo\n"}},
	{"syntax error", "echo )\necho b\n", []string{"echo )\n", "echo b\n"}},
	{"open quote at end", "echo 'a\nb\n", []string{"echo 'a\nb\n"}},
	{"crlf", "echo a\r\necho b\r\n", []string{"echo a\r\n", "echo b\r\n"}},
	{"crlf quote", "echo 'a\r\nb'\r\n", []string{"echo 'a\r\nb'\r\n"}},
	{"trailing backslash at end", "echo a \\", []string{"echo a \\"}},
	{"invocation", "spear-capability list\necho b\n", []string{"spear-capability list\n", "echo b\n"}},
}

func readUnits(t *testing.T, r io.Reader) []string {
	t.Helper()
	u := NewUnitReader(r)
	var got []string
	for {
		s, err := u.Next()
		if errors.Is(err, io.EOF) {
			if s != "" {
				t.Errorf("Next returned %q with io.EOF", s)
			}
			return got
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		got = append(got, s)
	}
}

func TestUnitReader(t *testing.T) {
	t.Parallel()
	for _, tc := range unitTests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, r := range []io.Reader{strings.NewReader(tc.in), iotest.OneByteReader(strings.NewReader(tc.in))} {
				got := readUnits(t, r)
				if strings.Join(got, "\x00") != strings.Join(tc.units, "\x00") || len(got) != len(tc.units) {
					t.Errorf("units of %q\n got %q\nwant %q", tc.in, got, tc.units)
				}
			}
		})
	}
}

func TestUnitReaderLong(t *testing.T) {
	t.Parallel()
	long := "echo " + strings.Repeat("x", 1<<20) + "\n"
	// A long here-document must not be re-parsed once per line.
	body := strings.Repeat("line with `backquote and $(paren\n", 20000)
	hdoc := "cat <<EOF\n" + body + "EOF\n"
	quoted := "echo '" + strings.Repeat("a\n", 20000) + "'\n"
	in := long + hdoc + quoted + "echo end\n"
	got := readUnits(t, strings.NewReader(in))
	want := []string{long, hdoc, quoted, "echo end\n"}
	if len(got) != len(want) {
		t.Fatalf("got %d units; want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("unit %d differs (%d bytes; want %d)", i, len(got[i]), len(want[i]))
		}
	}
}

func TestUnitReaderError(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	u := NewUnitReader(io.MultiReader(strings.NewReader("echo a\necho 'b\n"), iotest.ErrReader(boom)))
	for i, want := range []string{"echo a\n", "echo 'b\n"} {
		s, err := u.Next()
		if err != nil || s != want {
			t.Fatalf("unit %d = %q, %v; want %q", i, s, err, want)
		}
	}
	for range 2 {
		if _, err := u.Next(); !errors.Is(err, boom) {
			t.Fatalf("Next after the error = %v; want boom", err)
		}
	}
}

func TestRequoteDelimiters(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
		spans    int
	}{
		{"cat <<\"E\"OF", "cat <<'EOF'", 1},
		{"cat <<-'E'OF x", "cat <<-'EOF' x", 1},
		{"cat << \"E\"O\"F\"X", "cat << '''EOFX'", 1},
		{"cat <<\"E\"OF <<'A'B", "cat <<'EOF' <<'AB'", 2},
		{"cat <<\"EOF\"", "cat <<\"EOF\"", 0},
		{"cat <<EOF", "cat <<EOF", 0},
		{"cat <<\"E\"O\\F", "cat <<\"E\"O\\F", 0},
		{"cat <<\"E\"$x", "cat <<\"E\"$x", 0},
		{"cat <<\"it's\"x", "cat <<\"it's\"x", 0},
		{"cat <<<\"E\"OF", "cat <<<\"E\"OF", 0},
	} {
		got, spans := requoteDelimiters(tc.in)
		if got != tc.want || len(spans) != tc.spans {
			t.Errorf("requoteDelimiters(%q) = %q, %d spans; want %q, %d", tc.in, got, len(spans), tc.want, tc.spans)
		}
	}
}

// CutShort tells whether the last unit is a command the end of input cut short (the session
// then sends it so that bash meets the end as bash -s does: its status depends on how).
func TestUnitReaderCutShort(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{
		"false\necho \"a":          true,
		"false\necho \"a\n":        true,
		"echo ${a":                 true,
		"echo $((1+\n":             true,
		"if true; then echo x\n":   true,
		"echo a |":                 true,
		"for i in 1; do\necho \"a": true,
		"echo a\n":                 false,
		"echo a":                   false,
		"echo a \\":                false,
		"cat <<EOF\nx\n":           false,
		"cat <<EOF":                false,
		"if then\n":                false,
		"":                         false,
	} {
		u := NewUnitReader(strings.NewReader(in))
		u.Shell = "bash"
		for {
			if _, err := u.Next(); err != nil {
				break
			}
		}
		if got := u.CutShort(); got != want {
			t.Errorf("CutShort after %q = %v; want %v", in, got, want)
		}
	}
}
