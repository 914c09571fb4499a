package interp

import (
	"reflect"
	"testing"

	"github.com/spear-shell/spear-shell/interp/invocation"
)

var plainCases = []string{
	"spear-capability list",
	"spear-capability list\n",
	"  spear-capability\tlist  \n",
	"spear-capability describe a/b c/d",
	"spear-capability invoke a/b '{\"x\": 1, \"y\": [true, null, \"$(no)\"]}'",
	"spear-capability invoke a/b '{\"x\": 1}' extra",
	"spear-capability invoke a/b '[1]'",
	"spear-capability invoke a/b '{\"x\":1,\"x\":2}'",
	"spear-capability frob",
	"spear-capability describe nope",
	"spear-capability list x",
	"spear-capability invoke a/b '{\"a\":\"b\r\"}'",
	"spear-capability invoke 'a'/'b' ''{}",
	"spear-capability describe a/b # comment",
	"spear-capability list; echo",
	"spear-capabilityx list",
	"spear-capability invoke a/b '{}' '",
}

func TestPlainInvocation(t *testing.T) {
	t.Parallel()
	for _, src := range plainCases {
		checkPlainAgrees(t, src)
	}
	if _, _, ok := invocation.PlainWords("spear-capability invoke a/b '{}'"); !ok {
		t.Error("the usual invoke line is not read as plain")
	}
}

// checkPlainAgrees: where the plain reading applies, it gives what the parse gives.
func checkPlainAgrees(t *testing.T, src string) {
	t.Helper()
	if _, _, ok := invocation.PlainWords(src); !ok {
		return
	}
	fast, slow := Analyze(src), analyzeParsed(src)
	if !reflect.DeepEqual(fast, slow) {
		t.Errorf("%q:\n plain  %+v\n parsed %+v", src, fast, slow)
		for i := range fast.Segments {
			if fast.Segments[i].Invocation != nil && i < len(slow.Segments) && slow.Segments[i].Invocation != nil {
				t.Errorf("  invocation %+v vs %+v", *fast.Segments[i].Invocation, *slow.Segments[i].Invocation)
			}
		}
	}
}

func FuzzPlainInvocation(f *testing.F) {
	for _, c := range plainCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkPlainAgrees(t, src)
	})
}
