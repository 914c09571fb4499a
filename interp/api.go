// Package interp is recognition, layer 1 of the shell side (docs/layout.md): what a command
// line holds, where spear-capability stands in it, the units a session's stdin falls into,
// and the input bounds. It imports only interp/invocation of ours (never the real shell, the
// boundary, envelopes, the line editor, the loops or anything under capability/), and knows
// nothing of capabilities.
//
// Recognition is Analyze (recognize*.go): it parses an input with mvdan.cc/sh/v3/syntax,
// corrected where mvdan and bash disagree, and returns a Verdict with the Segments to
// answer and to forward. UnitReader and Unit (units.go) cut a session's stdin into the units
// bash would read, and RemoveQuotes (quote.go) is the quote removal both rely on. Parse,
// ParsesAsBash and RemoveQuotesIn are what package interp/envelope builds on.
// docs/recognition.md states the rules.
package interp
