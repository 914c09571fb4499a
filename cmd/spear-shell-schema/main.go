// Command spear-shell-schema validates JSON values against JSON Schemas that spear-shell's
// native validator leaves to the schema library; spear-shell starts it from beside itself.
//
// It reads one request per line on stdin, {"schema": ..., "instance": ...}, and writes one
// answer per line on stdout, {"ok": bool, "unusable": "...", "errors": ["at /x: ..."]}, until
// stdin ends. Schemas compile as JSON Schema 2020-12 by default, with no loader: a $ref to a file
// or a URL makes the schema unusable and is never fetched. "format" is an annotation in every
// draft (annotate.go). Compiled schemas are kept by hash.
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/spear-shell/spear-shell/capability/schemaformat"
)

func main() {
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, "spear-shell-schema: takes no arguments; spear-shell starts it")
		os.Exit(2)
	}
	if err := serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "spear-shell-schema: %v\n", err)
		os.Exit(1)
	}
}

type request struct {
	Schema   json.RawMessage `json:"schema"`
	Instance json.RawMessage `json:"instance"`
}

type answer struct {
	OK       bool     `json:"ok"`
	Unusable string   `json:"unusable,omitempty"`
	Errors   []string `json:"errors,omitempty"`
}

// maxCached bounds the compiled schemas kept; past it the cache starts again.
const maxCached = 1024

type compiled struct {
	sch *jsonschema.Schema
	err error
}

func serve(in io.Reader, out io.Writer) error {
	r := bufio.NewReader(in)
	w := bufio.NewWriter(out)
	cache := map[[32]byte]*compiled{}
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			a := handle(line, cache)
			b, merr := json.Marshal(a)
			if merr != nil {
				return fmt.Errorf("encode answer: %w", merr)
			}
			w.Write(append(b, '\n'))
			if ferr := w.Flush(); ferr != nil {
				return fmt.Errorf("write answer: %w", ferr)
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read request: %w", err)
		}
	}
}

func handle(line []byte, cache map[[32]byte]*compiled) answer {
	var req request
	if err := json.Unmarshal(line, &req); err != nil || req.Schema == nil || req.Instance == nil {
		return answer{Unusable: "the request is not {\"schema\": ..., \"instance\": ...}"}
	}
	key := sha256.Sum256(req.Schema)
	c, ok := cache[key]
	if !ok {
		if len(cache) >= maxCached {
			clear(cache)
		}
		c = &compiled{}
		c.sch, c.err = compile(req.Schema)
		cache[key] = c
	}
	if c.err != nil {
		return answer{Unusable: c.err.Error()}
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(req.Instance))
	if err != nil {
		return answer{Errors: []string{"at the top level: the value is not JSON: " + err.Error()}}
	}
	if err := c.sch.Validate(v); err != nil {
		return answer{Errors: leaves(err)}
	}
	return answer{OK: true}
}

// noLoader refuses every external reference.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external reference %q is not loaded", url)
}

// schemaURL is where a schema is placed: a hierarchical URL, so that a relative reference
// ("other.json") resolves to another document, which the loader refuses. Under an opaque URN
// base the library resolved it to the schema itself, and checked the value against that.
const schemaURL = "https://spear-shell.invalid/schema.json"

func compile(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	comp := jsonschema.NewCompiler()
	comp.UseLoader(noLoader{})
	comp.DefaultDraft(jsonschema.Draft2020)
	engine := schemaformat.AsAnnotations(comp)
	if err := comp.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	sch, err := comp.Compile(schemaURL)
	engine.Compiled()
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return sch, nil
}

// leaves lists the leaf failures, each with the JSON pointer of the value.
func leaves(err error) []string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []string{"at the top level: " + err.Error()}
	}
	var out []string
	var walk func(*jsonschema.ValidationError)
	walk = func(v *jsonschema.ValidationError) {
		if len(v.Causes) == 0 {
			out = append(out, leaf(v))
			return
		}
		for _, c := range v.Causes {
			walk(c)
		}
	}
	walk(ve)
	return out
}

func leaf(v *jsonschema.ValidationError) string {
	// The library formats a lone error as "at '<ptr>': <message>"; keep the message, say the pointer our way.
	msg := (&jsonschema.ValidationError{ErrorKind: v.ErrorKind}).Error()
	msg = strings.TrimPrefix(msg, "at '': ")
	if len(v.InstanceLocation) == 0 {
		return "at the top level: " + msg
	}
	ptr := ""
	for _, tok := range v.InstanceLocation {
		ptr += "/" + strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
	}
	return "at " + ptr + ": " + msg
}
