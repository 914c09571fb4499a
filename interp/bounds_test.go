package interp

import (
	"strings"
	"testing"
	"time"
)

// nest builds n levels of open around inner, closed by close.
func nest(open, inner, close string, n int) string {
	return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
}

func TestNesting(t *testing.T) {
	t.Parallel()
	const name = "spear-capability list"
	tests := []struct {
		in   string
		want int
	}{
		{name, 0},
		{"echo $(date) ${HOME} (cd x) { y; }", 1},
		{nest("$(", name, ")", 10), 10},
		{nest("${a:-", name, "}", 7), 7},
		{nest("(", name, ")", 3) + nest("{ ", name, "; }", 4), 4},
		{nest("if true; then ", name, "; fi", 5), 5},
		{nest("while x; do ", name, "; done", 3) + "; " + nest("case a in a) ", name, ";; esac", 2), 3},
		{"iffy; fi_x; done2 " + name, 0}, // keywords only as whole words
		{strings.Repeat("true && ", 9) + name, 9},
		{strings.Repeat("a | ", 4) + "b; " + strings.Repeat("c || ", 2) + name, 4},
		{strings.Repeat("a & ", 50) + name, 0}, // a lone & ends a chain
		{"( a | b | " + name + " )", 3},
		{"`a \\`b\\` `", 2},
		{"`a \\`b \\\\\\`c\\\\\\` \\` `", 3},
		{"))))}}}} " + name, 0},    // closings never go below zero
		{"echo '((((' " + name, 4}, // blind to quotes: it overcounts
	}
	for _, tt := range tests {
		if got := nesting(tt.in); got != tt.want {
			t.Errorf("nesting(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// Input past the bounds that may spell the name is refused malformed before any parse, in
// bounded time; input that cannot spell it is forwarded whatever its size or depth.
func TestInputBounds(t *testing.T) {
	t.Parallel()
	const name = "spear-capability list"
	big := "echo " + strings.Repeat("x", MaxInputBytes) + "; " + name
	refused := []string{
		nest("$(", name, ")", 450000), // the attack: 900 KB of $( with the name at the bottom
		nest("$(", name, ")", MaxNesting+1),
		nest("(", name, ")", MaxNesting+1),
		nest("{ ", name, "; }", MaxNesting+1),
		nest("if x; then ", name, "; fi", MaxNesting+1),
		nest("$((", "1", "))", MaxNesting) + "; " + name,
		strings.Repeat("true && ", MaxNesting+1) + name,
		strings.Repeat("a|", MaxNesting+1) + name,
		big,
		nest("$(", "$'\\x73pear-capability' list", ")", MaxNesting+1), // may spell it through $'...'
	}
	for _, src := range refused {
		start := time.Now()
		a := Analyze(src)
		if a.Verdict != Refuse || a.Code != CodeMalformed || !strings.Contains(a.Reason, "more than") {
			t.Errorf("Analyze(%.40q... %d bytes) = %v %s %q, want malformed", src, len(src), a.Verdict, a.Code, a.Reason)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Logf("Analyze of %d bytes took %v", len(src), d) // not a timed assertion: a hint
		}
	}
	forwarded := []string{
		nest("$(", "echo hi", ")", 450000),
		"echo " + strings.Repeat("x", 2*MaxInputBytes),
		strings.Repeat("a|", 100000) + "b",
	}
	for _, src := range forwarded {
		if a := Analyze(src); a.Verdict != Forward {
			t.Errorf("Analyze(%.40q... %d bytes) = %v %s, want forward", src, len(src), a.Verdict, a.Code)
		}
	}
	within := []string{
		nest("$(", name, ")", MaxNesting-1),
		"echo " + strings.Repeat("x", MaxInputBytes-100) + "\n" + name,
	}
	for _, src := range within {
		if a := Analyze(src); a.Verdict == Refuse && strings.Contains(a.Reason, "more than") {
			t.Errorf("Analyze(%.40q... %d bytes) refused as past the bounds: %s", src, len(src), a.Reason)
		}
	}
}

// A session's unit reader never parses a unit past the bounds that may spell the name: the
// unit ends at its line, and Analyze refuses it.
func TestUnitReaderBounds(t *testing.T) {
	t.Parallel()
	deep := nest("$(", "spear-capability list", ")", 450000)
	u := NewUnitReader(strings.NewReader(deep + "\necho after\n"))
	first, err := u.Next()
	if err != nil || first != deep+"\n" {
		t.Fatalf("first unit: %d bytes, %v", len(first), err)
	}
	if a := Analyze(first); a.Verdict != Refuse || a.Code != CodeMalformed {
		t.Errorf("first unit: %v %s", a.Verdict, a.Code)
	}
	if second, err := u.Next(); err != nil || second != "echo after\n" {
		t.Errorf("second unit %q, %v", second, err)
	}
}
