// Package audit appends the turn's decisions to a JSON-lines audit file, one whole
// record per event, safely across processes, with secrets redacted.
package audit

// CONTRACT (agreed between packages; the implementer may add, not change):
//
//	const ( FieldTime = "time"; FieldEvent = "event"; FieldTurn = "turn"; FieldSession = "session";
//	        FieldProvider = "provider"; FieldCapability = "capability"; FieldClass = "class"; FieldMode = "mode";
//	        FieldCode = "code"; FieldReason = "reason"; FieldAuditID = "audit_id"; FieldDurationMS = "duration_ms";
//	        FieldStage = "stage"; FieldStderrTail = "stderr_tail"; FieldArgsSHA256 = "args_sha256"; FieldArgs = "args";
//	        FieldResult = "result"; FieldResultBytes = "result_bytes" )
//	const ( EventTurnStarted = "turn_started"; EventProviderRegistered = "provider_registered";
//	        EventProviderRejected = "provider_rejected"; EventFamilySelected = "capability_family_selected";
//	        EventIndexExposed = "capability_index_exposed"; EventDescribed = "capability_described";
//	        EventInvoked = "capability_invoked"; EventRefused = "capability_refused"; EventProviderFailed = "provider_failed";
//	        EventToolRejected = "tool_rejected"; EventRuntimeWithoutGateway = "runtime_without_gateway";
//	        EventInterrupted = "interrupted"; EventTurnEnded = "turn_ended" )
//
//	// Redactor replaces every secret (values of 6 bytes or more) with "[REDACTED]".
//	type Redactor struct{ /* unexported */ }
//	func NewRedactor(secrets []string) *Redactor
//	func (r *Redactor) String(s string) string
//	func (r *Redactor) Bytes(b []byte) []byte
//	func (r *Redactor) Writer(w io.Writer) io.Writer // redacts what passes through (secrets split across writes too)
//
//	type Event struct {
//		Name string
//		Provider, Capability, Class, Mode, Code, Reason, AuditID, Stage, StderrTail string
//		Duration    time.Duration   // written as duration_ms (float) when non-zero
//		Args        json.RawMessage // written bounded + redacted as "args", with "args_sha256" of the original
//		Result      string          // bounded + redacted
//		ResultBytes int             // written when Result != "" or > 0
//		Fields      map[string]any  // event-specific extras (e.g. "providers", "family", "isolated")
//	}
//	type Logger struct{ /* unexported */ }
//	// Open checks that path can be appended to (creating it 0600) and returns a logger whose
//	// records carry turn and session. Open does not keep the file open between records.
//	func Open(path, turn, session string, red *Redactor) (*Logger, error)
//	// Log writes one whole line (flock + O_APPEND + one write) before returning; an error means
//	// the record was not written and the caller must refuse with audit-unavailable.
//	func (l *Logger) Log(e Event) error
//	func NewAuditID() string // random, URL-safe, unique per answer
