package realshell

import "testing"

func TestMayDiscard(t *testing.T) {
	for _, c := range []struct {
		text          string
		ends, defines bool
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
		{"f() { :; }", false, true},
		{"a=(); b=$(date)", true, false}, // a compound assignment, no function
		{"f=i; declare -$f n", true, false},
		{"local \"$@\"", true, false},
		{"local x=\"$1\" y", false, false}, // an assignment word is never an option
		{"declare -n r=x", true, false},
		{"echo ${!ref}", true, false},
		{"suspend x", true, false},
		{". ./lib.sh", true, false},
		{"source lib.sh", true, false},
		{"cd ..; ./run.sh", false, false},
		{"trap 'x=1' EXIT", false, true},
		{"echo ${a[@]} ${#b[*]} ${PIPESTATUS[@]}", false, false},
		{"# Bash-2.01[.1] fails this\n  # declare -i x", false, false},
	} {
		ends, defines, _ := mayDiscard(c.text)
		if ends != c.ends || defines != c.defines {
			t.Errorf("mayDiscard(%q) = %v, %v, want %v, %v", c.text, ends, defines, c.ends, c.defines)
		}
	}
}

func TestMayEvaluate(t *testing.T) {
	for _, c := range []struct {
		text string
		want bool
	}{
		{"x=1", true},
		{"[[ x -eq 1 ]]", true},
		{"echo ${s:x}", true},
		{"echo ${s:-x}", true}, // a byte scan: too many only costs batching
		{"wait -p v -n", true},
		{"exec {fd}>/dev/null", true},
		{"echo ${s} ${#a[@]}", false},
		{"cd /tmp; ls -l | head", false},
	} {
		if got := mayEvaluate(c.text); got != c.want {
			t.Errorf("mayEvaluate(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}
