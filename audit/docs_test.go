package audit

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// Every event this package names is in docs/audit.md's Records, where an operator reads what
// each record means and which fields it carries: a new event cannot go undocumented.
func TestEveryEventDocumented(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "api.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../docs/audit.md")
	if err != nil {
		t.Fatal(err)
	}
	records := string(doc)
	if i := strings.Index(records, "## Records"); i >= 0 {
		records = records[i:]
	}
	if i := strings.Index(records[1:], "\n## "); i >= 0 {
		records = records[:i+1]
	}
	n := 0
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if !strings.HasPrefix(name.Name, "Event") || i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok {
					continue
				}
				ev, _ := strconv.Unquote(lit.Value)
				n++
				if !strings.Contains(records, "`"+ev+"`") {
					t.Errorf("%s (%s) is not in docs/audit.md's Records", ev, name.Name)
				}
			}
		}
	}
	if n < 20 {
		t.Fatalf("found %d event names in api.go", n)
	}
}
