package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The native validator covers the JSON Schema 2020-12 subset that MCP tools use, so that the
// schema library (whose package initialisation compiles its meta-schemas) is not linked into
// spear-shell. It accepts a schema only when it understands every keyword and every
// keyword value the way jsonschema/v6 does, including the meta-schema's checks; anything else is
// "not mine" and goes to the spear-shell-schema helper, which gives the library's verdict.

// draft2020 is the only $schema value the native validator accepts (at the top level only).
const draft2020 = "https://json-schema.org/draft/2020-12/schema"

// notMine says why a schema is outside the native subset.
type notMine struct{ why string }

func (e *notMine) Error() string { return "outside the native subset: " + e.why }

func outside(format string, a ...any) error { return &notMine{fmt.Sprintf(format, a...)} }

// JSON types as a bit set, in the order the library names them.
const (
	tNull = 1 << iota
	tBoolean
	tNumber
	tInteger
	tString
	tArray
	tObject
)

var typeNames = []struct {
	bit  uint8
	name string
}{{tNull, "null"}, {tBoolean, "boolean"}, {tNumber, "number"}, {tInteger, "integer"},
	{tString, "string"}, {tArray, "array"}, {tObject, "object"}}

func typeBit(name string) uint8 {
	for _, t := range typeNames {
		if t.name == name {
			return t.bit
		}
	}
	return 0
}

// schemaNode is one compiled schema (a subschema is a node too). Integer limits are -1 when absent.
type schemaNode struct {
	ptr     string // JSON pointer of the schema in its document: its identity for $ref and cycles
	isBool  bool
	boolVal bool

	types    uint8
	hasConst bool
	constVal any
	hasEnum  bool
	enum     []any

	minimum, maximum, exclMin, exclMax, multipleOf *big.Rat

	minLength, maxLength int
	pattern              *regexp.Regexp

	prefixItems              []*schemaNode
	items                    *schemaNode
	minItems, maxItems       int
	uniqueItems              bool
	contains                 *schemaNode
	minContains, maxContains int

	properties    map[string]*schemaNode
	required      []string
	additional    *schemaNode
	patternProps  []patternProp
	propertyNames *schemaNode
	minProps      int
	maxProps      int
	depRequired   []depRequired
	depSchemas    []depSchema

	allOf, anyOf, oneOf []*schemaNode
	not                 *schemaNode
	ifS, thenS, elseS   *schemaNode

	refPtr string // "" = no $ref; otherwise the canonical pointer of its target
	ref    *schemaNode
}

type patternProp struct {
	re  *regexp.Regexp
	sch *schemaNode
}

type depRequired struct {
	prop  string
	names []string
}

type depSchema struct {
	prop string
	sch  *schemaNode
}

// Decode decodes one JSON value with exact numbers (json.Number), as the schema library does:
// the values Check takes, Encode writes and Equal compares.
func Decode(r io.Reader) (any, error) {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid character after top-level value")
	}
	return v, nil
}

// compileNative compiles a schema document; a *notMine error means the helper must judge it.
func compileNative(raw []byte) (*schemaNode, error) {
	doc, err := Decode(strings.NewReader(string(raw)))
	if err != nil {
		return nil, outside("not JSON: %v", err)
	}
	c := &nativeCompiler{nodes: map[string]*schemaNode{}}
	root, err := c.compile(doc, "", true)
	if err != nil {
		return nil, err
	}
	for _, n := range c.withRef {
		t, ok := c.nodes[n.refPtr]
		if !ok {
			return nil, outside("$ref %q is not a schema of this document", "#"+n.refPtr)
		}
		n.ref = t
	}
	return root, nil
}

type nativeCompiler struct {
	nodes   map[string]*schemaNode // every schema position, by pointer
	withRef []*schemaNode
}

// Keywords that change validation in ways the native validator does not implement.
var foreignKeywords = map[string]bool{
	"$id": true, "$anchor": true, "$dynamicRef": true, "$dynamicAnchor": true, "$vocabulary": true,
	"$recursiveRef": true, "$recursiveAnchor": true, "dependencies": true, "additionalItems": true,
	"unevaluatedItems": true, "unevaluatedProperties": true,
}

func (c *nativeCompiler) compile(v any, ptr string, top bool) (*schemaNode, error) {
	n := &schemaNode{ptr: ptr, minLength: -1, maxLength: -1, minItems: -1, maxItems: -1,
		minContains: -1, maxContains: -1, minProps: -1, maxProps: -1}
	c.nodes[ptr] = n
	switch s := v.(type) {
	case bool:
		n.isBool, n.boolVal = true, s
		return n, nil
	case map[string]any:
		keys := make([]string, 0, len(s))
		for k := range s {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if err := c.keyword(n, k, s[k], ptr, top); err != nil {
				return nil, err
			}
		}
		return n, nil
	default:
		return nil, outside("the schema at %q is not an object or a boolean", "#"+ptr)
	}
}

func (c *nativeCompiler) sub(v any, ptr string, toks ...string) (*schemaNode, error) {
	for _, t := range toks {
		ptr += "/" + escapeToken(t)
	}
	return c.compile(v, ptr, false)
}

func (c *nativeCompiler) keyword(n *schemaNode, k string, v any, ptr string, top bool) error {
	bad := func(want string) error { return outside("%q at %q is not %s", k, "#"+ptr, want) }
	var err error
	switch k {
	case "title", "description", "$comment", "format", "contentMediaType", "contentEncoding":
		if _, ok := v.(string); !ok {
			return bad("a string")
		}
	case "default":
	case "examples":
		if _, ok := v.([]any); !ok {
			return bad("an array")
		}
	case "deprecated", "readOnly", "writeOnly":
		if _, ok := v.(bool); !ok {
			return bad("a boolean")
		}
	case "contentSchema":
		// An annotation, yet still a schema position the library checks and $ref can reach.
		_, err = c.sub(v, ptr, k)
	case "$schema":
		if s, ok := v.(string); !ok || !top || s != draft2020 {
			return outside("$schema at %q is not the 2020-12 URL at the top level", "#"+ptr)
		}
	case "$defs", "definitions":
		err = c.schemaMap(v, ptr, k, bad, nil)
	case "$ref":
		s, ok := v.(string)
		if !ok {
			return bad("a string")
		}
		if n.refPtr, err = localPointer(s); err != nil {
			return err
		}
		c.withRef = append(c.withRef, n)
	case "type":
		n.types, err = typeSet(v)
		if err != nil {
			return err
		}
	case "const":
		n.hasConst, n.constVal = true, v
	case "enum":
		arr, ok := v.([]any)
		if !ok {
			return bad("an array")
		}
		n.hasEnum, n.enum = true, arr
	case "multipleOf":
		r, ok := number(v)
		if !ok || r.Sign() <= 0 {
			return bad("a number above 0")
		}
		n.multipleOf = r
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		r, ok := number(v)
		if !ok {
			return bad("a number")
		}
		switch k {
		case "minimum":
			n.minimum = r
		case "maximum":
			n.maximum = r
		case "exclusiveMinimum":
			n.exclMin = r
		default:
			n.exclMax = r
		}
	case "minLength", "maxLength", "minItems", "maxItems", "minContains", "maxContains", "minProperties", "maxProperties":
		i, ok := count(v)
		if !ok {
			return bad("a non-negative integer")
		}
		*n.countField(k) = i
	case "pattern":
		s, ok := v.(string)
		if !ok {
			return bad("a string")
		}
		if n.pattern, err = regexp.Compile(s); err != nil {
			return bad("a regular expression")
		}
	case "uniqueItems":
		b, ok := v.(bool)
		if !ok {
			return bad("a boolean")
		}
		n.uniqueItems = b
	case "items":
		n.items, err = c.sub(v, ptr, k)
	case "contains":
		n.contains, err = c.sub(v, ptr, k)
	case "additionalProperties":
		n.additional, err = c.sub(v, ptr, k)
	case "propertyNames":
		n.propertyNames, err = c.sub(v, ptr, k)
	case "not":
		n.not, err = c.sub(v, ptr, k)
	case "if":
		n.ifS, err = c.sub(v, ptr, k)
	case "then":
		n.thenS, err = c.sub(v, ptr, k)
	case "else":
		n.elseS, err = c.sub(v, ptr, k)
	case "prefixItems", "allOf", "anyOf", "oneOf":
		arr, ok := v.([]any)
		if !ok || len(arr) == 0 {
			return bad("a non-empty array")
		}
		list := make([]*schemaNode, len(arr))
		for i, s := range arr {
			if list[i], err = c.sub(s, ptr, k, strconv.Itoa(i)); err != nil {
				return err
			}
		}
		switch k {
		case "prefixItems":
			n.prefixItems = list
		case "allOf":
			n.allOf = list
		case "anyOf":
			n.anyOf = list
		default:
			n.oneOf = list
		}
	case "properties":
		n.properties = map[string]*schemaNode{}
		err = c.schemaMap(v, ptr, k, bad, func(name string, s *schemaNode) error {
			n.properties[name] = s
			return nil
		})
	case "patternProperties":
		err = c.schemaMap(v, ptr, k, bad, func(name string, s *schemaNode) error {
			re, err := regexp.Compile(name)
			if err != nil {
				return outside("patternProperties key %q at %q is not a regular expression", name, "#"+ptr)
			}
			n.patternProps = append(n.patternProps, patternProp{re, s})
			return nil
		})
	case "dependentSchemas":
		err = c.schemaMap(v, ptr, k, bad, func(name string, s *schemaNode) error {
			n.depSchemas = append(n.depSchemas, depSchema{name, s})
			return nil
		})
	case "required":
		if n.required, err = stringSet(v); err != nil {
			return bad("an array of distinct strings")
		}
	case "dependentRequired":
		m, ok := v.(map[string]any)
		if !ok {
			return bad("an object")
		}
		for _, name := range sortedKeys(m) {
			names, err := stringSet(m[name])
			if err != nil {
				return bad("an object of arrays of distinct strings")
			}
			n.depRequired = append(n.depRequired, depRequired{name, names})
		}
	default:
		if foreignKeywords[k] || strings.HasPrefix(k, "$") {
			return outside("keyword %q at %q is not implemented natively", k, "#"+ptr)
		}
		// Unknown keywords are ignored, as the library ignores them.
	}
	return err
}

// countField is where a count keyword is kept.
func (n *schemaNode) countField(k string) *int {
	switch k {
	case "minLength":
		return &n.minLength
	case "maxLength":
		return &n.maxLength
	case "minItems":
		return &n.minItems
	case "maxItems":
		return &n.maxItems
	case "minContains":
		return &n.minContains
	case "maxContains":
		return &n.maxContains
	case "minProperties":
		return &n.minProps
	}
	return &n.maxProps
}

// schemaMap compiles an object whose values are schemas, in key order.
func (c *nativeCompiler) schemaMap(v any, ptr, k string, bad func(string) error, each func(string, *schemaNode) error) error {
	m, ok := v.(map[string]any)
	if !ok {
		return bad("an object")
	}
	for _, name := range sortedKeys(m) {
		s, err := c.sub(m[name], ptr, k, name)
		if err != nil {
			return err
		}
		if each != nil {
			if err := each(name, s); err != nil {
				return err
			}
		}
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func typeSet(v any) (uint8, error) {
	var names []any
	switch t := v.(type) {
	case string:
		names = []any{t}
	case []any:
		if len(t) == 0 {
			return 0, outside("type is an empty array")
		}
		names = t
	default:
		return 0, outside("type is not a string or an array")
	}
	var set uint8
	for _, x := range names {
		s, _ := x.(string)
		b := typeBit(s)
		if b == 0 {
			return 0, outside("type %v is not a JSON type name", x)
		}
		if set&b != 0 {
			return 0, outside("type %q is named twice", s)
		}
		set |= b
	}
	return set, nil
}

func stringSet(v any) ([]string, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, errors.New("not an array")
	}
	out := make([]string, 0, len(arr))
	seen := map[string]bool{}
	for _, x := range arr {
		s, ok := x.(string)
		if !ok || seen[s] {
			return nil, errors.New("not distinct strings")
		}
		seen[s] = true
		out = append(out, s)
	}
	return out, nil
}

// maxExponent bounds the exponent of a number in a schema: a larger one is left to the library
// rather than expanded here.
const maxExponent = 400

// maxValueExponent bounds the exponent of a number in a value: expanding 1e999999999 exactly
// would take minutes and gigabytes, so such a number fails any check that compares it.
const maxValueExponent = 10000

// number reads a JSON number in a schema exactly.
func number(v any) (*big.Rat, bool) {
	s, ok := v.(json.Number)
	if !ok {
		return nil, false
	}
	return exact(s, maxExponent)
}

func exact(s json.Number, limit int) (*big.Rat, bool) {
	if i := strings.IndexAny(string(s), "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(string(s[i+1:]), "+"))
		if err != nil || e > limit || e < -limit {
			return nil, false
		}
	}
	return new(big.Rat).SetString(string(s))
}

// count reads a non-negative integer keyword (1.0 counts, as in the library).
func count(v any) (int, bool) {
	r, ok := number(v)
	if !ok || !r.IsInt() || r.Sign() < 0 || r.Num().BitLen() > 31 {
		return 0, false
	}
	return int(r.Num().Int64()), true
}

// localPointer accepts "#" and "#/a/b" with plain characters; anything else (a URL, a file, an
// anchor, percent-encoding) is not mine.
func localPointer(ref string) (string, error) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok || (frag != "" && frag[0] != '/') {
		return "", outside("$ref %q is not a local JSON pointer", ref)
	}
	for _, r := range frag {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~$/", r)) {
			return "", outside("$ref %q has characters the native validator does not resolve", ref)
		}
	}
	if frag == "" {
		return "", nil
	}
	var b strings.Builder
	for _, tok := range strings.Split(frag[1:], "/") {
		t, err := unescapeToken(tok)
		if err != nil {
			return "", outside("$ref %q: %v", ref, err)
		}
		b.WriteString("/" + escapeToken(t))
	}
	return b.String(), nil
}

func escapeToken(t string) string {
	return strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
}

func unescapeToken(t string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		if t[i] != '~' {
			b.WriteByte(t[i])
			continue
		}
		if i+1 >= len(t) || (t[i+1] != '0' && t[i+1] != '1') {
			return "", errors.New("bad ~ escape")
		}
		b.WriteByte("~/"[t[i+1]-'0'])
		i++
	}
	return b.String(), nil
}

// validation

// checker evaluates one instance; leaves is nil when only the verdict is wanted.
type checker struct {
	leaves *[]string
}

func (n *schemaNode) validate(v any) []string {
	var leaves []string
	if !(checker{&leaves}).check(n, v, nil, nil) && len(leaves) == 0 {
		leaves = []string{"at the top level: validation failed"}
	}
	return leaves
}

func (c checker) fail(at []string, format string, a ...any) bool {
	if c.leaves != nil {
		*c.leaves = append(*c.leaves, where(at)+": "+fmt.Sprintf(format, a...))
	}
	return false
}

func where(at []string) string {
	if len(at) == 0 {
		return "at the top level"
	}
	var b strings.Builder
	b.WriteString("at ")
	for _, t := range at {
		b.WriteString("/" + escapeToken(t))
	}
	return b.String()
}

func child(at []string, tok string) []string {
	return append(at[:len(at):len(at)], tok)
}

// check reports whether v is valid; stack holds the schemas already applied to this same value
// on the way here, so that a reference cycle that consumes no input fails (as in the library)
// instead of recursing forever.
func (c checker) check(n *schemaNode, v any, at []string, stack []*schemaNode) bool {
	if n.isBool {
		if !n.boolVal {
			return c.fail(at, "false schema")
		}
		return true
	}
	for _, s := range stack {
		if s == n {
			return c.fail(at, "reference cycle at '#%s'", n.ptr)
		}
	}
	stack = append(stack[:len(stack):len(stack)], n)

	if n.types != 0 && !typeMatches(n.types, v) {
		var want []string
		for _, t := range typeNames {
			if n.types&t.bit != 0 {
				want = append(want, t.name)
			}
		}
		return c.fail(at, "got %s, want %s", typeName(v), strings.Join(want, " or "))
	}
	if n.hasConst && !Equal(v, n.constVal) {
		return c.fail(at, "value must be %s", display(n.constVal))
	}
	if n.hasEnum && !inEnum(v, n.enum) {
		return c.fail(at, "value must be %s", enumText(n.enum))
	}
	quick := c.leaves == nil
	ok := true
	note := func(good bool) {
		if !good {
			ok = false
		}
	}
	if n.ref != nil {
		note(c.check(n.ref, v, at, stack))
		if quick && !ok {
			return false
		}
	}
	switch x := v.(type) {
	case map[string]any:
		note(c.object(n, x, at, stack))
	case []any:
		note(c.array(n, x, at))
	case string:
		note(c.str(n, x, at))
	case json.Number:
		note(c.num(n, x, at))
	}
	if quick && !ok {
		return false
	}
	note(c.combine(n, v, at, stack))
	return ok
}

func (c checker) object(n *schemaNode, obj map[string]any, at []string, stack []*schemaNode) bool {
	ok := true
	quick := c.leaves == nil
	if n.minProps >= 0 && len(obj) < n.minProps {
		ok = c.fail(at, "minProperties: got %d, want %d", len(obj), n.minProps)
	}
	if n.maxProps >= 0 && len(obj) > n.maxProps {
		ok = c.fail(at, "maxProperties: got %d, want %d", len(obj), n.maxProps)
	}
	if missing := missingNames(obj, n.required); len(missing) > 0 {
		ok = c.fail(at, "%s", missingText(missing))
	}
	if quick && !ok {
		return false
	}
	var extra []string
	for _, name := range sortedKeys(obj) {
		val := obj[name]
		evaluated := false
		if s, found := n.properties[name]; found {
			evaluated = true
			if !c.check(s, val, child(at, name), nil) {
				ok = false
			}
		}
		for _, pp := range n.patternProps {
			if pp.re.MatchString(name) {
				evaluated = true
				if !c.check(pp.sch, val, child(at, name), nil) {
					ok = false
				}
			}
		}
		if !evaluated && n.additional != nil {
			if n.additional.isBool && !n.additional.boolVal {
				extra = append(extra, name)
			} else if !c.check(n.additional, val, child(at, name), nil) {
				ok = false
			}
		}
		if quick && !ok {
			return false
		}
	}
	if len(extra) > 0 {
		ok = c.fail(at, "additional properties %s not allowed", joinQuoted(extra))
	}
	if n.propertyNames != nil {
		for _, name := range sortedKeys(obj) {
			if !(checker{}).check(n.propertyNames, name, nil, nil) {
				ok = c.fail(at, "invalid propertyName %s", quoteValue(name))
			}
		}
	}
	for _, d := range n.depSchemas {
		if _, found := obj[d.prop]; found && !c.check(d.sch, obj, at, stack) {
			ok = false
		}
	}
	for _, d := range n.depRequired {
		if _, found := obj[d.prop]; found {
			if missing := missingNames(obj, d.names); len(missing) > 0 {
				ok = c.fail(at, "properties %s required, if %s exists", joinQuoted(missing), quoteValue(d.prop))
			}
		}
	}
	return ok
}

func missingNames(obj map[string]any, names []string) []string {
	var missing []string
	for _, name := range names {
		if _, ok := obj[name]; !ok {
			missing = append(missing, name)
		}
	}
	return missing
}

func missingText(missing []string) string {
	if len(missing) == 1 {
		return "missing property " + quoteValue(missing[0])
	}
	return "missing properties " + joinQuoted(missing)
}

func (c checker) array(n *schemaNode, arr []any, at []string) bool {
	ok := true
	if n.minItems >= 0 && len(arr) < n.minItems {
		ok = c.fail(at, "minItems: got %d, want %d", len(arr), n.minItems)
	}
	if n.maxItems >= 0 && len(arr) > n.maxItems {
		ok = c.fail(at, "maxItems: got %d, want %d", len(arr), n.maxItems)
	}
	if n.uniqueItems {
		if i, j := duplicate(arr); i >= 0 {
			ok = c.fail(at, "items at %d and %d are equal", i, j)
		}
	}
	if c.leaves == nil && !ok {
		return false
	}
	for i, item := range arr {
		s := n.items
		if i < len(n.prefixItems) {
			s = n.prefixItems[i]
		}
		if s != nil && !c.check(s, item, child(at, strconv.Itoa(i)), nil) {
			ok = false
			if c.leaves == nil {
				return false
			}
		}
	}
	if n.contains != nil {
		matched := 0
		for _, item := range arr {
			if (checker{}).check(n.contains, item, nil, nil) {
				matched++
			}
		}
		switch {
		case n.minContains >= 0 && matched < n.minContains:
			ok = c.fail(at, "min %d items required to match contains schema, but %d matched", n.minContains, matched)
		case n.minContains < 0 && matched == 0:
			ok = c.fail(at, "no items match contains schema")
		}
		if n.maxContains >= 0 && matched > n.maxContains {
			ok = c.fail(at, "max %d items required to match contains schema, but %d matched", n.maxContains, matched)
		}
	}
	return ok
}

func duplicate(arr []any) (int, int) {
	for j := 1; j < len(arr); j++ {
		for i := 0; i < j; i++ {
			if Equal(arr[i], arr[j]) {
				return i, j
			}
		}
	}
	return -1, -1
}

func (c checker) str(n *schemaNode, s string, at []string) bool {
	ok := true
	if n.minLength >= 0 || n.maxLength >= 0 {
		l := utf8.RuneCountInString(s)
		if n.minLength >= 0 && l < n.minLength {
			ok = c.fail(at, "minLength: got %d, want %d", l, n.minLength)
		}
		if n.maxLength >= 0 && l > n.maxLength {
			ok = c.fail(at, "maxLength: got %d, want %d", l, n.maxLength)
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(s) {
		ok = c.fail(at, "%s does not match pattern %s", quoteValue(s), quoteValue(n.pattern.String()))
	}
	return ok
}

func (c checker) num(n *schemaNode, x json.Number, at []string) bool {
	if n.minimum == nil && n.maximum == nil && n.exclMin == nil && n.exclMax == nil && n.multipleOf == nil {
		return true
	}
	r, good := exact(x, maxValueExponent)
	if !good {
		return c.fail(at, "%s is too large to compare exactly", x)
	}
	ok := true
	if n.minimum != nil && r.Cmp(n.minimum) < 0 {
		ok = c.fail(at, "minimum: got %s, want %s", x, ratText(n.minimum))
	}
	if n.maximum != nil && r.Cmp(n.maximum) > 0 {
		ok = c.fail(at, "maximum: got %s, want %s", x, ratText(n.maximum))
	}
	if n.exclMin != nil && r.Cmp(n.exclMin) <= 0 {
		ok = c.fail(at, "exclusiveMinimum: got %s, want %s", x, ratText(n.exclMin))
	}
	if n.exclMax != nil && r.Cmp(n.exclMax) >= 0 {
		ok = c.fail(at, "exclusiveMaximum: got %s, want %s", x, ratText(n.exclMax))
	}
	if n.multipleOf != nil && !new(big.Rat).Quo(r, n.multipleOf).IsInt() {
		ok = c.fail(at, "multipleOf: got %s, want %s", x, ratText(n.multipleOf))
	}
	return ok
}

// ratText prints a limit exactly: as an integer or a finite decimal when it is one.
func ratText(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	if p, exact := r.FloatPrec(); exact {
		return r.FloatString(p)
	}
	return r.RatString()
}

func (c checker) combine(n *schemaNode, v any, at []string, stack []*schemaNode) bool {
	ok := true
	quick := c.leaves == nil
	if n.not != nil && (checker{}).check(n.not, v, at, stack) {
		ok = c.fail(at, "'not' failed")
	}
	for _, s := range n.allOf {
		if !c.check(s, v, at, stack) {
			ok = false
			if quick {
				return false
			}
		}
	}
	if len(n.anyOf) > 0 {
		var tried []string
		matched := false
		for _, s := range n.anyOf {
			if c.sub(s, v, at, stack, &tried) {
				matched = true
				break
			}
		}
		if !matched {
			ok = c.failWith(at, tried, "'anyOf' failed")
		}
	}
	if len(n.oneOf) > 0 {
		var tried []string
		first := -1
		for i, s := range n.oneOf {
			if first >= 0 {
				if (checker{}).check(s, v, at, stack) {
					ok = c.fail(at, "'oneOf' failed, subschemas %d, %d matched", first, i)
					break
				}
				continue
			}
			if c.sub(s, v, at, stack, &tried) {
				first = i
			}
		}
		if first < 0 {
			ok = c.failWith(at, tried, "'oneOf' failed, none matched")
		}
	}
	if n.ifS != nil {
		if (checker{}).check(n.ifS, v, at, stack) {
			if n.thenS != nil && !c.check(n.thenS, v, at, stack) {
				ok = false
			}
		} else if n.elseS != nil && !c.check(n.elseS, v, at, stack) {
			ok = false
		}
	}
	return ok
}

// sub checks one alternative, keeping its failures aside in case no alternative matches.
func (c checker) sub(n *schemaNode, v any, at []string, stack []*schemaNode, tried *[]string) bool {
	if c.leaves == nil {
		return c.check(n, v, at, stack)
	}
	var leaves []string
	good := checker{&leaves}.check(n, v, at, stack)
	if !good {
		*tried = append(*tried, leaves...)
	}
	return good
}

// failWith reports the alternatives' own failures, or the summary when they named none.
func (c checker) failWith(at, tried []string, summary string) bool {
	if c.leaves == nil {
		return false
	}
	if len(tried) == 0 {
		return c.fail(at, "%s", summary)
	}
	*c.leaves = append(*c.leaves, tried...)
	return false
}

// JSON values

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func typeMatches(set uint8, v any) bool {
	b := typeBit(typeName(v))
	if set&b != 0 {
		return true
	}
	if b == tNumber && set&tInteger != 0 {
		r, ok := exact(v.(json.Number), maxValueExponent)
		return ok && r.IsInt()
	}
	return false
}

// Equal is JSON equality of two values as Decode returns them: numbers compare mathematically
// and exactly.
func Equal(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, found := y[k]
			if !found || !Equal(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		if x == y {
			return true
		}
		rx, ok1 := exact(x, maxValueExponent)
		ry, ok2 := exact(y, maxValueExponent)
		return ok1 && ok2 && rx.Cmp(ry) == 0
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	}
	return false
}

func inEnum(v any, enum []any) bool {
	for _, e := range enum {
		if Equal(v, e) {
			return true
		}
	}
	return false
}

func enumText(enum []any) string {
	var want []string
	for _, e := range enum {
		switch e.(type) {
		case []any, map[string]any:
			return "one of the enum's values"
		}
		want = append(want, display(e))
	}
	switch len(want) {
	case 0:
		return "one of an empty enum"
	case 1:
		return want[0]
	}
	return "one of " + strings.Join(want, ", ")
}

func display(v any) string {
	switch x := v.(type) {
	case string:
		return quoteValue(x)
	case nil:
		return "null"
	case []any, map[string]any:
		return "the schema's const value"
	}
	return fmt.Sprint(v)
}

// quoteValue single-quotes a string the way the library's messages do.
func quoteValue(s string) string {
	q := strconv.Quote(s)
	q = strings.ReplaceAll(q, `\"`, `"`)
	q = strings.ReplaceAll(q, `'`, `\'`)
	return "'" + q[1:len(q)-1] + "'"
}

func joinQuoted(names []string) string {
	q := make([]string, len(names))
	for i, s := range names {
		q[i] = quoteValue(s)
	}
	return strings.Join(q, ", ")
}
