// Package interp is the shell layer: it recognises spear-capability invocations in
// command lines, splits input into what is answered and what is forwarded, and drives
// the real shell (package interp/realshell, which the front binary uses alone). It knows
// nothing of capabilities.
//
// Recognition is Analyze (recognize*.go): it parses an input with mvdan.cc/sh/v3/syntax,
// corrected where mvdan and bash disagree, and returns a Verdict with the Segments to
// answer and to forward. UnitReader (units.go) cuts a session's stdin into the units bash
// would read, and RemoveQuotes (quote.go) is the quote removal both rely on.
// MatchEnvelope (envelope*.go) finds an agent terminal's envelope around the model's
// command, from the templates in envelopes/*.txtar, and Match.Run runs it.
// docs/recognition.md states the rules.
package interp
