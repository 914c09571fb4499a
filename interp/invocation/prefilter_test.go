package invocation

import "testing"

func TestMayInvoke(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		src  string
		want bool
	}{
		{"true", false},
		{"ls -la /tmp", false},
		{"spear-capability list", true},
		{`"spear-capability" list`, true},
		{`spear\-capability list`, true},
		{"'spear'\"-cap\"ability", true},
		{"spear-\\\ncapability list", true}, // backslash-newline is removed by bash
		{"echo $'\\x73pear'", true},         // $'...' may spell it with escapes
		{`echo $"x"`, true},
		{"grep spear-capability file", true}, // text: the recognizer decides
		{"spear capability", false},
		{"spear‐capability list", false}, // U+2010, a look-alike
		{"spear-capabilit", false},
		{"sspear-capability", true},
		{"(spear-capabil\x00ity )", true}, // bash drops NUL bytes from its input
	} {
		if got := MayInvoke(c.src); got != c.want {
			t.Errorf("MayInvoke(%q) = %v, want %v", c.src, got, c.want)
		}
	}
}
