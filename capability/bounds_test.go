package capability

import (
	"strings"
	"testing"
)

// A provider cannot flood the turn through its definitions or its schema errors: describe bounds
// each part, and a failure quoting a huge enum is bounded too (SPEC 5: cleaned and bounded).
func TestDefinitionsBounded(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("word ", 40000) // 200 KB
	values := make([]string, 5000)
	for i := range values {
		values[i] = strings.Repeat("e", 40) + "\x1b[31m"
	}
	f := newFixture(t, nil, provSpec{id: "p", entry: obj("read", []string{"big"}),
		fake: obj("tools", []any{obj("name", "big", "description", huge,
			"inputSchema", obj("type", "object", "properties", obj("v", obj("enum", values), "pad", obj("description", huge))),
			"behavior", obj("echo", true))})})
	tr := f.turn()
	r := ask(tr, "describe", "p/big")
	if r.code != 0 {
		t.Fatalf("describe: %+v", r)
	}
	if len(r.stdout) > 3*describeMax || strings.Count(r.stdout, "…") != 2 {
		t.Errorf("describe printed %d bytes, with %d cuts; want at most %d, two cuts", len(r.stdout), strings.Count(r.stdout, "…"), 3*describeMax)
	}
	r = ask(tr, "invoke", "p/big", `{"v":"x"}`)
	if r.code != 3 || len(r.stderr) > schemaMax+500 || strings.Contains(r.stderr, "\x1b") {
		t.Errorf("invoke: exit %d, stderr of %d bytes: %.300q", r.code, len(r.stderr), r.stderr)
	}
}
