package capability

// Explanation says what an answer code means and what to do next (spear_explain, SPEC 13).
// It is kept beside the codes so that a new code cannot go without one (TestEveryCodeExplained).
type Explanation struct {
	Code    string `json:"code"`
	Meaning string `json:"meaning"`
	Next    string `json:"next"`
}

var explanations = map[string]Explanation{
	CodeNotAlone: {CodeNotAlone, "The invocation shared its command line with another command, a pipe, a redirection or an assignment.",
		"Run spear-capability alone on its own line; run the other commands before or after it."},
	CodeMalformed: {CodeMalformed, "The request could not be read: a wrong verb, a missing or extra argument, arguments that are not one JSON object, or a bad limit or cursor.",
		"Fix the request as the message says: invoke takes an id and one JSON object; search takes words, --limit 1-50 and a cursor exactly as a page printed it."},
	CodeNoCapabilities: {CodeNoCapabilities, "No external capabilities are offered to this turn (or the turn has ended).",
		"Do the work without external capabilities; do not retry."},
	CodeAuditUnavailable: {CodeAuditUnavailable, "The audit trail could not be written, so nothing was done.",
		"Do not retry; tell the operator."},
	CodeUnknown: {CodeUnknown, "No capability with that id is offered to this turn.",
		"Search or list the family and use an id exactly as shown."},
	CodeUnavailable: {CodeUnavailable, "The capability's provider could not be used (it failed to start, timed out or broke the protocol); a turn's own provider stays out for the rest of the turn, a shared one only until its broker has it running again.",
		"Use another capability or go on without it; retry a shared provider's capability later only if the reason says it restarts."},
	CodeNotDescribed: {CodeNotDescribed, "The family is shown as an index, and this capability has not been described in this turn.",
		"Describe it first, read its arguments, then invoke it."},
	CodeInvalidArguments: {CodeInvalidArguments, "The arguments do not match the capability's input schema.",
		"Read the reason and the schema (describe), correct the arguments and invoke again."},
	CodeWriteRefused: {CodeWriteRefused, "The capability writes, and the write policy or the turn's permission mode refuses writes.",
		"Do not retry; use a READ capability or ask the user to do the change."},
	CodeDefinitionChanged: {CodeDefinitionChanged, "The provider changed the capability's definition since the turn pinned it, or since the operator locked it.",
		"Do not retry in this turn; the operator must review the change."},
	CodeNotConfirmed: {CodeNotConfirmed, "The capability needs confirmation, and the approver denied it, did not answer in time, or there is none.",
		"Do not retry the same call; ask the user whether it should be done."},
	CodeToolError: {CodeToolError, "The provider ran the call and reported an error of its own.",
		"Read the provider's message; correct the arguments or the situation, then retry if it makes sense."},
	CodeInvalidOutput: {CodeInvalidOutput, "The provider's result does not match the capability's declared output schema, so it was not passed on.",
		"Do not rely on this capability in this turn; tell the operator."},
	CodeTimeout: {CodeTimeout, "The provider did not answer within its time limit; the call was cancelled.",
		"Retry once with a smaller request, or go on without it."},
	CodeNotRecognised: {CodeNotRecognised, "spear-capability was reached inside the real shell (through eval, a script, a variable, xargs...), where it carries no authority.",
		"Type the invocation as a command of its own, with literal words."},
	CodeInterrupted: {CodeInterrupted, "The call was interrupted (Ctrl-C, or the client cancelled it); the provider was told to stop.",
		"Retry if it is still wanted."},
}

// Explain returns what code means; ok is false for a code that is not one of the answer codes.
func Explain(code string) (Explanation, bool) {
	e, ok := explanations[code]
	return e, ok
}
