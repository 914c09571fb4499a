package realshell

import "testing"

func TestMayDiscard(t *testing.T) {
	for _, c := range []struct {
		text           string
		ends, function bool
	}{
		{"a=(1); echo ${a[0#4]}", true, false},
		{"a[1/0]=1", true, false},
		{"echo $((a[2#44]))", true, false},
		{"a=( [$'x\\001']=foo )", true, false},
		{"a+=(\n [1/0]=x\n)", true, false},
		{"f() { echo ${a[1/0]}; }", true, true},
		{"function g { a[1]=2; }", true, true},
		{"declare -i i", true, false},
		{"typeset -ai a=(0#4)", true, false},
		{"f() { local -r -i n; }", true, true},
		{"declare -gi x; echo", true, false},
		{"echo declare -i", true, false}, // a byte scan: too many only costs batching
		{"declare -a a", false, false},
		{"declare -- i=1; echo -i", false, false},
		{"[ -n x ] && [[ y ]]", false, false},
		{"i=0#4", false, false},
		{"echo $((1/0))", false, false},
		{"mydeclare -i", false, false},
		{"f() { :; }", false, false},
		{"echo ${a[@]} ${#b[*]} ${PIPESTATUS[@]}", false, false},
		{"# Bash-2.01[.1] fails this\n  # declare -i x", false, false},
	} {
		ends, function := mayDiscard(c.text)
		if ends != c.ends || function != c.function {
			t.Errorf("mayDiscard(%q) = %v, %v, want %v, %v", c.text, ends, function, c.ends, c.function)
		}
	}
}
