package main

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

// builtinFormats are the formats jsonschema/v6 (v6.0.3, format.go) knows besides "regex".
var builtinFormats = []string{
	"json-pointer", "relative-json-pointer", "uuid", "duration", "period", "ipv4", "ipv6",
	"hostname", "email", "date", "time", "date-time", "uri", "iri", "uri-reference",
	"iri-reference", "uri-template", "semver",
	// Names the library may learn later (JSON Schema's own list): harmless until then.
	"idn-email", "idn-hostname",
}

// annotatingEngine is a regexp engine that checks only until the schema is compiled.
type annotatingEngine struct{ compiled bool }

func (e *annotatingEngine) compile(s string) (jsonschema.Regexp, error) {
	if e.compiled {
		return acceptAll{}, nil // a "format": "regex" value: an annotation
	}
	return regexp.Compile(s)
}

type acceptAll struct{}

func (acceptAll) MatchString(string) bool { return true }
func (acceptAll) String() string          { return "" }

func accept(any) error { return nil }

// formatsAsAnnotations makes comp treat every format as an annotation. The caller sets the
// returned engine's compiled once comp has compiled the schema.
func formatsAsAnnotations(comp *jsonschema.Compiler) *annotatingEngine {
	for _, name := range builtinFormats {
		comp.RegisterFormat(&jsonschema.Format{Name: name, Validate: accept})
	}
	e := &annotatingEngine{}
	comp.UseRegexpEngine(e.compile)
	return e
}
