// Package schemaformat makes jsonschema/v6 treat "format" as an annotation, for the schema
// helper and for the tests that use the library as the oracle of the native validator.
// Layer 0 (docs/layout.md): it imports no package of ours; only cmd/spear-shell-schema and tests
// import it, so that the schema library never initialises in spear-shell.
package schemaformat

import (
	"regexp"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// "format" is an annotation in every draft (SPEC 5): a value is never refused for its format.
// jsonschema/v6 asserts format for drafts before 2019-09 and offers no switch to turn that off;
// its maintainer's advice is to register, over each built-in format, one that accepts
// everything. "regex" cannot be registered over: its check compiles the value with the
// compiler's regexp engine, so the engine used here checks patterns while the schema compiles
// (an invalid "pattern" still makes the schema unusable) and accepts every value afterwards,
// when only a "format": "regex" asks it anything.

// Builtin are the formats jsonschema/v6 (v6.0.3, format.go) knows besides "regex".
var Builtin = []string{
	"json-pointer", "relative-json-pointer", "uuid", "duration", "period", "ipv4", "ipv6",
	"hostname", "email", "date", "time", "date-time", "uri", "iri", "uri-reference",
	"iri-reference", "uri-template", "semver",
	// Names the library may learn later (JSON Schema's own list): harmless until then.
	"idn-email", "idn-hostname",
}

// Engine is a regexp engine that checks only until the schema is compiled.
type Engine struct{ compiled bool }

func (e *Engine) compile(s string) (jsonschema.Regexp, error) {
	if e.compiled {
		return acceptAll{}, nil // a "format": "regex" value: an annotation
	}
	return regexp.Compile(s)
}

type acceptAll struct{}

func (acceptAll) MatchString(string) bool { return true }
func (acceptAll) String() string          { return "" }

func accept(any) error { return nil }

// Compiled says comp has compiled its schema: patterns are checked no more.
func (e *Engine) Compiled() { e.compiled = true }

// AsAnnotations makes comp treat every format as an annotation. The caller calls the
// returned engine's Compiled once comp has compiled the schema.
func AsAnnotations(comp *jsonschema.Compiler) *Engine {
	for _, name := range Builtin {
		comp.RegisterFormat(&jsonschema.Format{Name: name, Validate: accept})
	}
	e := &Engine{}
	comp.UseRegexpEngine(e.compile)
	return e
}
