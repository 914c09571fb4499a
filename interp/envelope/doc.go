// Package envelope is the agent terminals' envelopes (SPEC 3, 11) as data: the templates in
// envelopes/*.txtar, matching an input against them (MatchEnvelope), and the plan of what a
// match runs, in order (Match.Steps). It runs nothing itself: package interp/session runs the
// steps. Layer 2 (docs/layout.md): it imports only interp (recognition) of ours, never the real
// shell, the boundary, the line editor, the loops, or anything under capability/.
// docs/recognition.md states the rules.
package envelope
