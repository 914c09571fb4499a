package lock

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// attack (SPEC 15): a provider changes a locked tool's schema in a way canonicalisation might
// erase. Every change that a reader of the schema could tell apart (a number's form, a
// negative zero, a huge exponent, an escape that decodes to another string, a line or
// paragraph separator, a NUL) gives another canonical text, so the tool is definition-changed;
// a repeated member name (which decoders resolve differently) is an error, never a match.
// What canonicalisation does erase (member order, spacing, escapes of the same string,
// invalid UTF-8 and lone surrogates, which every reader in spear-shell reads as U+FFFD)
// decodes to the same value.
func TestAttackCanonicalErasure(t *testing.T) {
	t.Parallel()
	differ := [][2]string{
		{`{"maximum":1}`, `{"maximum":1.0}`},
		{`{"maximum":0}`, `{"maximum":-0}`},
		{`{"maximum":1e2}`, `{"maximum":100}`},
		{`{"maximum":1e400}`, `{"maximum":1e401}`},
		{`{"maximum":1E2}`, `{"maximum":1e2}`},
		{`{"maximum":10000000000000000000001}`, `{"maximum":10000000000000000000000}`},
		{`{"pattern":"a\u2028"}`, `{"pattern":"a\n"}`},
		{`{"pattern":"a\u2029"}`, `{"pattern":"a\u2028"}`},
		{`{"pattern":"a"}`, `{"pattern":"a\u0000"}`},
		{`{"pattern":"A"}`, `{"pattern":"\u0061"}`},
		{`{"Type":"string"}`, `{"type":"string"}`},
		{`{"enum":[1,2]}`, `{"enum":[2,1]}`},
		{`{"a":{"b":1}}`, `{"a":{"b":1,"c":null}}`},
		{`{"k":"\ud83d\ude00"}`, `{"k":"\ufffd\ufffd"}`},
	}
	for _, d := range differ {
		a, errA := Canonical([]byte(d[0]))
		b, errB := Canonical([]byte(d[1]))
		if errA != nil || errB != nil {
			t.Errorf("%s / %s: %v %v", d[0], d[1], errA, errB)
			continue
		}
		if a == b {
			t.Errorf("%s and %s share the canonical text %s: a changed schema would match its lock", d[0], d[1], a)
		}
	}
	for _, dup := range []string{`{"type":"string","type":"number"}`, `{"a":{"x":1,"\u0078":2}}`, `{"p":[{"q":1,"q":1}]}`} {
		if c, err := Canonical([]byte(dup)); err == nil {
			t.Errorf("%s: repeated member accepted as %s", dup, c)
		}
	}
	same := [][2]string{
		{`{"b":1,"a":[1, 2]}`, ` { "a" : [1,2] , "b" : 1 } `},
		{`{"p":"A/"}`, `{"p":"\u0041\/"}`},
		{`{"p":"\ud800"}`, `{"p":"\ufffd"}`},
		{"{\"p\":\"\xff\"}", `{"p":"\ufffd"}`},
	}
	decode := func(s string) any {
		d := json.NewDecoder(bytes.NewReader([]byte(s)))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		return v
	}
	for _, s := range same {
		a, errA := Canonical([]byte(s[0]))
		b, errB := Canonical([]byte(s[1]))
		if errA != nil || errB != nil || a != b {
			t.Errorf("%q / %q: %q %q %v %v", s[0], s[1], a, b, errA, errB)
		}
		if !reflect.DeepEqual(decode(s[0]), decode(s[1])) {
			t.Errorf("%q and %q share a canonical text but decode apart", s[0], s[1])
		}
	}
	// The same through a whole definition, as the turn judges it.
	def := func(in string) string {
		c, err := Definition(Def{Name: "t", Description: "d", InputSchema: json.RawMessage(in)})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if def(`{"type":"object","maximum":1}`) == def(`{"type":"object","maximum":1.0}`) {
		t.Error("a definition's number form is erased")
	}
}

// attack (SPEC 15): a lock whose hash is written in upper case, or whose members are given
// twice or in another case (encoding/json would take the last, case-insensitively), approves
// nothing unless every definition still hashes to its lower-case sha256.
func TestAttackLockFileForms(t *testing.T) {
	t.Parallel()
	def, err := Definition(Def{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)})
	if err != nil {
		t.Fatal(err)
	}
	f := &File{Version: Version}
	f.Put(Provider{ID: "p", Command: []string{"/bin/p"}, Tools: []Tool{{Name: "t", Definition: def, SHA256: Sum([]byte(def))}}})
	good := string(f.Marshal())
	if _, err := Parse([]byte(good)); err != nil {
		t.Fatal(err)
	}
	sum := Sum([]byte(def))
	evil, _ := json.Marshal(strings.Replace(def, `"name":"t"`, `"description":"evil","name":"t"`, 1))
	for name, text := range map[string]string{
		"upper-case hash":            strings.Replace(good, sum, strings.ToUpper(sum), 1),
		"definition given twice":     strings.Replace(good, `"definition": `, `"definition": `+string(evil)+`, "definition": `, 1) + "",
		"a case variant after":       strings.Replace(good, `"sha256": "`+sum+`"`, `"sha256": "`+sum+`", "Definition": `+string(evil), 1),
		"hash given twice, bad last": strings.Replace(good, `"sha256": "`+sum+`"`, `"sha256": "`+sum+`", "SHA256": "`+Sum(evil)+`"`, 1),
	} {
		lf, err := Parse([]byte(text))
		if err == nil && lf.Providers[0].Tools[0].Definition != def {
			t.Errorf("%s: a lock approving another definition was accepted: %q", name, lf.Providers[0].Tools[0].Definition)
		}
		if name == "upper-case hash" && err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
