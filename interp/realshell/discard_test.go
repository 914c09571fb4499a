package realshell

import "testing"

func TestMayDiscard(t *testing.T) {
	for _, c := range []struct {
		text string
		want bool
	}{
		{"a=(1); echo ${a[0#4]}", true},
		{"a[1/0]=1", true},
		{"echo $((a[2#44]))", true},
		{"declare -i i", true},
		{"a=( [$'x\\001']=foo )", true},
		{"a+=(\n [1/0]=x\n)", true},
		{"typeset -ai a=(0#4)", true},
		{"f() { local -r -i n; }", true},
		{"declare -gi x; echo", true},
		{"declare -a a", false},
		{"declare -- i=1; echo -i", false},
		{"echo declare -i", true}, // a byte scan: too many only costs batching
		{"[ -n x ] && [[ y ]]", false},
		{"i=0#4", false},
		{"echo $((1/0))", false},
		{"mydeclare -i", false},
	} {
		if got := mayDiscard(c.text); got != c.want {
			t.Errorf("mayDiscard(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}
