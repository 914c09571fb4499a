package mcpstdio

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

var scanCases = []string{
	``, ` `, `null`, `true`, `false`, `nul`, `nulll`, `truex`, `t`, `0`, `-0`, `-`, `01`, `-01`, `1.`, `1.5`,
	`.5`, `1e5`, `1E+5`, `1e-05`, `1e`, `1e+`, `1.5e3x`, `123456789012345678901234567890`, `0.0e0`,
	`""`, `"a"`, `"\"\\\/\b\f\n\r\t"`, `"\u00e9\uD83D\uDE00"`, `"\u00g0"`, `"\u00e"`, `"\x"`, `"\`, `"abc`,
	"\"\x01\"", "\"\x7f\"", "\"\xff\xfe\"", "\"é\"", "\"\t\"",
	`{}`, `[]`, `{ }`, `[ ]`, `{"a":1}`, `{"a" : [1, 2, {"b": null}] }`, `{"a":1,}`, `[1,]`, `[,1]`, `{,}`,
	`{"a"}`, `{"a":}`, `{1:2}`, `{"a":1 "b":2}`, `[1 2]`, `[1,,2]`, `{"a":1}}`, `[[]]]`, `[`, `{`, `{"a":`,
	`[}`, `{]`, `[{]}`, `{"a":[}`, " \t\r\n[1]\n ", "\v1", "1\f", `[1]x`, `"a""b"`, `{"a":1}{}`,
	`{"a":"b","a":"c"}`, `[true,false,null,-1.5e-3,"x",{},[]]`,
}

func TestScanValueAsEncodingJSON(t *testing.T) {
	for _, c := range scanCases {
		if got, want := validJSON([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("validJSON(%q) = %v, json.Valid says %v", c, got, want)
		}
	}
}

func TestScanDepth(t *testing.T) {
	for _, n := range []int{63, 64, 65, 200, maxDepth - 1, maxDepth, maxDepth + 1} {
		for _, inner := range []string{"", "1", "{}", `{"a":[]}`} {
			arr := strings.Repeat("[", n) + inner + strings.Repeat("]", n)
			obj := strings.Repeat(`{"k":`, n) + inner + strings.Repeat("}", n)
			if inner == "" {
				obj = strings.Repeat(`{"k":`, n-1) + "{}" + strings.Repeat("}", n-1)
			}
			mixed := strings.Repeat(`[{"k":`, n/2) + inner + strings.Repeat(`}]`, n/2)
			for _, s := range []string{arr, obj, mixed} {
				if got, want := validJSON([]byte(s)), json.Valid([]byte(s)); got != want {
					t.Errorf("depth %d inner %q: validJSON %v, json.Valid %v", n, inner, got, want)
				}
			}
		}
	}
}

// FuzzScanValue holds the hand-written validator to encoding/json's verdict on any input.
func FuzzScanValue(f *testing.F) {
	for _, c := range scanCases {
		f.Add([]byte(c))
	}
	for _, c := range pageCases {
		f.Add([]byte(c))
	}
	for _, c := range dispatchSeeds {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid says %v", b, got, want)
		}
		// Every prefix of a valid value, and the value with a byte changed, too.
		if json.Valid(b) && len(b) > 1 {
			cut := b[:len(b)/2]
			if got, want := validJSON(cut), json.Valid(cut); got != want {
				t.Fatalf("validJSON(%q) = %v, json.Valid says %v", cut, got, want)
			}
		}
	})
}

// bigPage is a tools/list answer like the benchmark's: 500 tools, about 250 KB.
func bigPage() []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":2,"result":{"tools":[`)
	for i := range 500 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"description":"Tool number 12 of the benchmark family: looks up a record by key in the project's store and returns it with its history.\nSecond line of the description.","inputSchema":{"properties":{"history":{"description":"include the history","type":"boolean"},"key":{"description":"record key","minLength":1,"type":"string"},"limit":{"maximum":100,"minimum":1,"type":"integer"}},"required":["key"],"type":"object"},"name":"t`)
		b.WriteString(strings.Repeat("0", 4))
		b.WriteString(`"}`)
	}
	b.WriteString(`]}}`)
	return b.Bytes()
}

func BenchmarkValid(b *testing.B) {
	page := bigPage()
	b.Run("scan", func(b *testing.B) {
		b.SetBytes(int64(len(page)))
		for b.Loop() {
			if !validJSON(page) {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(page)))
		for b.Loop() {
			if !json.Valid(page) {
				b.Fatal("invalid")
			}
		}
	})
}

// BenchmarkDispatchPage is what the reader and ListTools do with one 500-tool answer.
func BenchmarkDispatchPage(b *testing.B) {
	page := bigPage()
	b.SetBytes(int64(len(page)))
	c := &Client{opts: Options{MaxTools: DefaultMaxTools}, pending: map[int64]waiter{}}
	for b.Loop() {
		ch := make(chan response, 1)
		c.pending[2] = waiter{ch: ch, method: "tools/list"}
		if err := c.dispatch(page, true); err != nil {
			b.Fatal(err)
		}
		var tools []Tool
		if _, err := c.decodePage((<-ch).result, &tools); err != nil || len(tools) != 500 {
			b.Fatal(err, len(tools))
		}
	}
}
