package capability

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compiled is a schema compiled once per process, by the hash of its bytes.
type compiled struct {
	sch *jsonschema.Schema
	err error
}

// noLoader refuses every external reference: a $ref to a file or a URL fails the schema
// and is never fetched (SPEC 5).
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external reference %q is not loaded", url)
}

// schemaURL is where a schema is placed; relative references resolve under it and so
// reach the loader, which refuses them.
const schemaURL = "urn:spear-shell:schema"

func (e *turnEnv) schema(raw json.RawMessage) (*jsonschema.Schema, error) {
	sum := sha256.Sum256(raw)
	key := string(sum[:])
	if c, ok := e.schemas[key]; ok {
		return c.sch, c.err
	}
	c := &compiled{}
	c.sch, c.err = compileSchema(raw)
	e.schemas[key] = c
	return c.sch, c.err
}

func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	comp := jsonschema.NewCompiler()
	comp.UseLoader(noLoader{})
	comp.DefaultDraft(jsonschema.Draft2020)
	if err := comp.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	sch, err := comp.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return sch, nil
}

// declaredNames are the keys of the input schema's top-level "properties".
func declaredNames(input json.RawMessage) map[string]bool {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	names := map[string]bool{}
	if json.Unmarshal(input, &s) == nil {
		for k := range s.Properties {
			names[k] = true
		}
	}
	return names
}

// checkArguments decodes the arguments with exact numbers, checks the top-level names
// against inputSchema.properties, validates them, and re-encodes the validated value.
// reason is empty on success and otherwise says what to fix, with JSON pointers.
func (e *turnEnv) checkArguments(tl *tool, text string) (forward json.RawMessage, reason string) {
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return nil, "the arguments are not JSON: " + err.Error()
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, "the arguments must be one JSON object"
	}
	declared := declaredNames(tl.input)
	var undeclared []string
	for k := range obj {
		if !declared[k] {
			undeclared = append(undeclared, k)
		}
	}
	if len(undeclared) > 0 {
		sort.Strings(undeclared)
		names := make([]string, 0, len(declared))
		for k := range declared {
			names = append(names, k)
		}
		sort.Strings(names)
		q := make([]string, len(undeclared))
		for i, k := range undeclared {
			q[i] = quote(k)
		}
		dq := make([]string, len(names))
		for i, k := range names {
			dq[i] = quote(k)
		}
		allowed := "none"
		if len(dq) > 0 {
			allowed = strings.Join(dq, ", ")
		}
		return nil, fmt.Sprintf("argument %s is not declared in the tool's inputSchema properties (declared: %s)",
			strings.Join(q, ", "), allowed)
	}
	sch, err := e.schema(tl.input)
	if err != nil {
		return nil, "the tool's schema cannot be used: " + clean(err.Error())
	}
	if err := sch.Validate(v); err != nil {
		return nil, validationReason(err)
	}
	return encodeExact(v), ""
}

// encodeExact re-encodes a value decoded with json.Number: numbers keep their text.
func encodeExact(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// validationReason lists the leaf errors, each with the JSON pointer of the value.
func validationReason(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return "the arguments do not match the tool's inputSchema: " + clean(err.Error())
	}
	var leaves []string
	var walk func(*jsonschema.ValidationError)
	walk = func(v *jsonschema.ValidationError) {
		if len(v.Causes) == 0 {
			leaves = append(leaves, leafMessage(v))
			return
		}
		for _, c := range v.Causes {
			walk(c)
		}
	}
	walk(ve)
	const max = 5
	more := ""
	if len(leaves) > max {
		more = fmt.Sprintf(" (and %d more)", len(leaves)-max)
		leaves = leaves[:max]
	}
	return "the arguments do not match the tool's inputSchema: " + strings.Join(leaves, "; ") + more
}

func leafMessage(v *jsonschema.ValidationError) string {
	// The library formats a lone error as "at '<ptr>': <message>"; keep the message, say the pointer our way.
	msg := (&jsonschema.ValidationError{ErrorKind: v.ErrorKind}).Error()
	msg = strings.TrimPrefix(msg, "at '': ")
	ptr := ""
	for _, tok := range v.InstanceLocation {
		ptr += "/" + strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
	}
	if ptr == "" {
		return "at the top level: " + clean(msg)
	}
	return "at " + clean(ptr) + ": " + clean(msg)
}
