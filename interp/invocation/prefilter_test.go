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

func TestNameInText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"spear-capability", true},
		{"sspear-capability", true},
		{"spespear-capability", true},
		{"'spear'\"-capa\\bility\"", true},
		{"spear-\\\ncapability", true},
		{"spear-\ncapability", false},
		{"spear capability", false},
		{"spear-capabilit", false},
		{"", false},
	} {
		if got := NameInText(tc.in); got != tc.want {
			t.Errorf("NameInText(%q) = %v; want %v", tc.in, got, tc.want)
		}
	}
}
