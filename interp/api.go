// Package interp is the shell layer: it recognises spear-capability invocations in
// command lines, splits input into what is answered and what is forwarded, and drives
// the real shell. It knows nothing of capabilities.
package interp

// CONTRACT (agreed between parts; the implementer may add, not change):
//
//	const Name = "spear-capability"
//
//	type Verdict int
//	const (
//		Forward Verdict = iota // no recognised invocation: the input goes to the real shell unchanged
//		Answer                 // one or more answerable invocations; Segments says what runs where
//		Refuse                 // a recognised invocation that is not alone, or malformed: nothing runs
//	)
//	type Invocation struct {
//		Verb      string   // "list", "describe" or "invoke"
//		Targets   []string // describe: one or more "<id>/<tool>"; invoke: exactly one
//		Arguments string   // invoke: the JSON object text after quote removal (validated: one object,
//		                   // no duplicate keys, no trailing data); the caller decodes it with UseNumber
//		Source    string   // the invocation's source text
//	}
//	type Segment struct {
//		Forward    string      // exact source text for the real shell (when Invocation == nil)
//		Invocation *Invocation // an answered invocation
//	}
//	type Analysis struct {
//		Verdict  Verdict
//		Code     string    // Refuse: "not-alone" or "malformed"
//		Reason   string    // Refuse: one line a model can act on
//		Segments []Segment // Answer: in source order; Forward segments are whole top-level commands
//	}
//	// Analyze decides one input: a whole -c string, or one unit of a session.
//	func Analyze(src string) Analysis
//
//	// UnitReader cuts a session's stdin into units: one line plus the continuation lines
//	// needed to complete a command (open quotes, heredocs, compound commands, trailing \, |, &&).
//	func NewUnitReader(r io.Reader) *UnitReader
//	func (u *UnitReader) Next() (string, error) // unit text with its newline(s); io.EOF at the end
//
//	// RemoveQuotes performs bash quote removal on a word without expanding anything.
//	// dynamic reports parts whose value is only known at run time ($x, $(..), `..`, $((..)), globs
//	// are not dynamic for this purpose - they are kept as text); the text of those parts is kept as written.
//	func RemoveQuotes(w *syntax.Word) (text string, dynamic bool)
