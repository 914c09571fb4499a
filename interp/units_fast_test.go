package interp

import (
	"strings"
	"testing"
)

var simpleLineCases = []struct {
	line string
	want bool
}{
	{"echo hi\n", true},
	{"cd /tmp\n", true},
	{"x=$((x+1))\n", true},
	{"echo $((1<2)) $(( (3+4)*5 ))\n", true},
	{"echo ${HOME} $PATH $1\n", true},
	{"ls -la /usr/bin # a comment \\\n", true},
	{"\n", true},
	{"   \t\n", true},
	{"a=1 b=2 env\n", true},
	{"echo if then fi\n", true},
	{"echo hi", false},      // no newline: the last line is judged by the parser
	{"if true\n", false},    // reserved word first
	{"while x\n", false},    //
	{"! x\n", false},        //
	{"time ls\n", false},    //
	{"function f\n", false}, //
	{"echo 'a b'\n", true},  // quoted strings closed on the line
	{"spear-capability invoke a/b '{\"k\": [1, \"x y\"]}'\n", true},
	{"echo \"a b\" c\n", true},
	{"echo \"a $x\"\n", false}, // expansions in double quotes go to the parser
	{"echo 'a\n", false},       // a quote left open
	{"echo \"a\\\"b\"\n", false},
	{"echo \"a\n", false},     //
	{"echo a \\\n", false},    // continuation
	{"echo a | wc\n", false},  // operators
	{"echo a &&\n", false},    //
	{"echo a;\n", false},      //
	{"f() {\n", false},        //
	{"cat <<EOF\n", false},    //
	{"echo $(ls)\n", false},   // command substitution
	{"echo `ls`\n", false},    //
	{"echo ${x:-y}\n", false}, // expansions beyond ${NAME}
	{"echo $((x+$(ls)))\n", false},
	{"echo $((x+1)\n", false}, // unbalanced arithmetic
	{"echo a#b\n", false},     // # inside a word
	{"[ -f x ]\n", false},     // brackets go to the parser
	{"echo a\nb\n", false},    // one line only
	{"spear-capability list\n", true},
}

func TestSimpleLine(t *testing.T) {
	t.Parallel()
	for _, c := range simpleLineCases {
		if got := simpleLine(c.line); got != c.want {
			t.Errorf("simpleLine(%q) = %v, want %v", c.line, got, c.want)
		}
		checkSimpleAgrees(t, c.line)
	}
}

// checkSimpleAgrees: what simpleLine takes as a whole unit, the parser-based reading must end
// there too (a parse error also ends a unit, so the unit is the same either way).
func checkSimpleAgrees(t *testing.T, line string) {
	t.Helper()
	if !simpleLine(line) {
		return
	}
	var u Unit
	u.text.WriteString(line)
	u.parsed.WriteString(line)
	if !u.complete() {
		t.Errorf("simpleLine(%q) is true but the parser reads an incomplete command", line)
	}
}

func FuzzSimpleLine(f *testing.F) {
	for _, c := range simpleLineCases {
		f.Add(c.line)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if !strings.HasSuffix(line, "\n") {
			line += "\n"
		}
		checkSimpleAgrees(t, line)
	})
}
