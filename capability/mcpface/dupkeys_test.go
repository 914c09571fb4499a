package mcpface

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"
)

// keysByTokens is noDuplicateKeys as encoding/json's tokens read it: the oracle of the byte scan.
// (Tokens end quietly at a cut-off document: json.Valid says first that it is not JSON.)
func keysByTokens(raw []byte) error {
	if !json.Valid(raw) {
		return errors.New("the arguments are not valid JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // a number too large for a float64 is still valid JSON
	type frame struct {
		object bool
		keys   map[string]bool
		key    bool // the next string token is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return errors.New("the arguments are not valid JSON")
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, &frame{object: true, keys: map[string]bool{}, key: true})
				continue
			case '[':
				stack = append(stack, &frame{})
				continue
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if top != nil && top.object && top.key {
				if top.keys[v] {
					return fmt.Errorf("key %q is given twice", v)
				}
				top.keys[v] = true
				top.key = false
				continue
			}
		}
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].key = true
		}
	}
}

var dupSeeds = []string{
	`{}`, `{"a":1,"b":2}`, `{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{"a\"b":1,"a\"b":2}`,
	`{"x":{"a":1},"y":{"a":1}}`, `{"x":{"a":1,"a":1}}`, `[{"a":1,"a":2}]`, `{"a":["a","a"]}`,
	`{"a":"a","b":"a"}`, `{"a":{"b":[{"c":1},{"c":2,"c":3}]}}`, `{"\\":1,"\\\\":2,"\\":3}`,
	`{"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k18":18,"k1":0}`,
	`{"a":1,}`, `{"a" 1}`, `{"a":1`, ` {"a": 1 , "b" : [ "x" , {"a":2} ] } `, `"a"`, `[1,2]`, `{"é":1,"\u00e9":2}`,
}

func TestNoDuplicateKeys(t *testing.T) {
	for _, s := range dupSeeds {
		got, want := noDuplicateKeys(json.RawMessage(s)), keysByTokens([]byte(s))
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: %v, want %v", s, got, want)
		}
	}
}

// FuzzNoDuplicateKeys: the byte scan and encoding/json's tokens agree on every input, the
// error included.
func FuzzNoDuplicateKeys(f *testing.F) {
	for _, s := range dupSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, want := noDuplicateKeys(json.RawMessage(s)), keysByTokens([]byte(s))
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%q: %v, want %v", s, got, want)
		}
	})
}

func BenchmarkNoDuplicateKeys(b *testing.B) {
	raw := json.RawMessage(`{"id":"bench/echo","arguments":{"message":"found","count":3,"tags":["a","b"]}}`)
	for b.Loop() {
		if err := noDuplicateKeys(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkArgs(b *testing.B) {
	raw := json.RawMessage(`{"id":"bench/echo","arguments":{"message":"found"}}`)
	for b.Loop() {
		var id string
		arguments := json.RawMessage(`{}`)
		if err := args(raw, map[string]any{"id": &id, "arguments": &arguments}); err != nil {
			b.Fatal(err)
		}
	}
}
