package interp

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// firstWord parses src as a command line and returns its first word.
func firstWord(t testing.TB, src string) *syntax.Word {
	t.Helper()
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		t.Fatalf("parse %q: %v", src, err)
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 {
		t.Fatalf("parse %q: not a simple command", src)
	}
	return call.Args[0]
}

var quoteTests = []struct {
	in      string
	text    string
	dynamic bool
	dollarQ bool
}{
	{in: `spear-capability`, text: "spear-capability"},
	{in: `"spear-capability"`, text: "spear-capability"},
	{in: `'spear-capability'`, text: "spear-capability"},
	{in: `spear\-capability`, text: "spear-capability"},
	{in: `\spear\-\c\a\p\ability`, text: "spear-capability"},
	{in: `'spear'"-capability"`, text: "spear-capability"},
	{in: `sp"ear"'-'capa"bility"`, text: "spear-capability"},
	{in: `""spear-capability''`, text: "spear-capability"},
	{in: "spear-\\\ncapability", text: "spear-capability"},
	{in: "\"spear-\\\ncapability\"", text: "spear-capability"},
	{in: `$'spear-capability'`, text: "spear-capability", dollarQ: true},
	{in: `$'spear\x2dcapability'`, text: "spear-capability", dollarQ: true},
	{in: `$'\163pear-capability'`, text: "spear-capability", dollarQ: true},
	{in: `$'\u0073pear-capability'`, text: "spear-capability", dollarQ: true},
	{in: `$'\U00000073pear-capability'`, text: "spear-capability", dollarQ: true},
	{in: `$"spear-capability"`, text: "spear-capability", dollarQ: true},
	{in: `spear$'-'capability`, text: "spear-capability", dollarQ: true},
	{in: `$'a\nb\tc\\d\'e\"f\?g'`, text: "a\nb\tc\\d'e\"f?g", dollarQ: true},
	{in: `$'\a\b\e\E\f\r\v'`, text: "\a\b\x1b\x1b\f\r\v", dollarQ: true},
	{in: `$'\cA\x41\x4g\q'`, text: "\x01A\x04g\\q", dollarQ: true},
	{in: `$'\xZ'`, text: `\xZ`, dollarQ: true},
	{in: `$'\uZ'`, text: `\uZ`, dollarQ: true},
	{in: `$'\u00e9'`, text: "é", dollarQ: true},
	{in: `"a\"b\$c\\d\e\` + "`" + `f"`, text: "a\"b$c\\d\\e`f"},
	{in: `'a\"b\$c'`, text: `a\"b\$c`},
	{in: `a\ b`, text: "a b"},
	{in: `a\\b`, text: `a\b`},
	{in: `a\'b`, text: `a'b`},
	{in: `\"`, text: `"`},
	{in: `$HOME`, text: "$HOME", dynamic: true},
	{in: `"$HOME"`, text: "$HOME", dynamic: true},
	{in: `${HOME}/x`, text: "${HOME}/x", dynamic: true},
	{in: `$(echo spear-capability)`, text: "$(echo spear-capability)", dynamic: true},
	{in: "`echo x`", text: "$(echo x)", dynamic: true}, // printed: no source given
	{in: `$((1+2))`, text: "$((1 + 2))", dynamic: true},
	{in: `<(true)`, text: "<(true)", dynamic: true},
	{in: `"a$(b)c"`, text: "a$(b)c", dynamic: true},
	{in: `~/x`, text: "~/x"},
	{in: `*.go`, text: "*.go"},
	{in: `spear-capabilit?`, text: "spear-capabilit?"},
	{in: `spear-capabilit[y]`, text: "spear-capabilit[y]"},
	{in: `{spear-capability,x}`, text: "{spear-capability,x}"},
	{in: `spear-capabilit{y,}`, text: "spear-capabilit{y,}"},
	{in: `@(a|b)`, text: "@(a|b)"},
	{in: `spear‐capability`, text: "spear‐capability"}, // U+2010 hyphen
	{in: `ѕpear-capability`, text: "ѕpear-capability"}, // Cyrillic dze
	{in: `spear-capabilitу`, text: "spear-capabilitу"}, // Cyrillic u
	{in: `ｓpear-capability`, text: "ｓpear-capability"}, // fullwidth s
	{in: `'{"a": "b c"}'`, text: `{"a": "b c"}`},
	{in: `"{\"a\": 1}"`, text: `{"a": 1}`},
	{in: `'it'\''s'`, text: "it's"},
}

func TestRemoveQuotes(t *testing.T) {
	t.Parallel()
	for _, tc := range quoteTests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			w := firstWord(t, tc.in)
			text, dynamic := RemoveQuotes(w)
			if text != tc.text || dynamic != tc.dynamic {
				t.Errorf("RemoveQuotes(%s) = %q, %v; want %q, %v", tc.in, text, dynamic, tc.text, tc.dynamic)
			}
			// With the source, dynamic parts are copied byte for byte.
			u := unquote(w, tc.in)
			if u.dollarQ != tc.dollarQ {
				t.Errorf("unquote(%s).dollarQ = %v; want %v", tc.in, u.dollarQ, tc.dollarQ)
			}
			if !tc.dynamic && u.text != tc.text {
				t.Errorf("unquote(%s) = %q; want %q", tc.in, u.text, tc.text)
			}
		})
	}
}

func TestUnquoteKeepsSource(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, text string }{
		{`$((1+2))`, `$((1+2))`},
		{`"x$(  echo   y )z"`, `x$(  echo   y )z`},
		{`${a:-b}`, `${a:-b}`},
		{"`echo x`", "`echo x`"},
	} {
		u := unquote(firstWord(t, tc.in), tc.in)
		if u.text != tc.text || !u.dynamic {
			t.Errorf("unquote(%s) = %q, %v; want %q, true", tc.in, u.text, u.dynamic, tc.text)
		}
	}
}
