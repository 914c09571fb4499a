// Package audit appends the turn's decisions to a JSON-lines audit file, one whole
// record per event, safely across processes, with secrets redacted. A shared leaf, layer 0
// (docs/layout.md): it imports no package of ours, so that both sides and the report may use it.
package audit

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Field names of a record. Every record has time (RFC 3339, UTC, nanoseconds),
// event, turn and session; the others appear when the event sets them.
const (
	FieldTime        = "time"
	FieldEvent       = "event"
	FieldTurn        = "turn"
	FieldSession     = "session"
	FieldFace        = "face" // "mcp" on the MCP face's records; absent on the shell's
	FieldProvider    = "provider"
	FieldCapability  = "capability"
	FieldClass       = "class"
	FieldMode        = "mode"
	FieldCode        = "code"
	FieldReason      = "reason"
	FieldAuditID     = "audit_id"
	FieldDurationMS  = "duration_ms"
	FieldStage       = "stage"
	FieldStderrTail  = "stderr_tail"
	FieldArgsSHA256  = "args_sha256"
	FieldArgs        = "args"
	FieldResult      = "result"
	FieldResultBytes = "result_bytes"
	// The broker's own records (SPEC 14) carry these in place of turn and session.
	FieldBroker   = "broker"
	FieldShareKey = "share_key"

	// Written as true when the value was cut to MaxValueBytes.
	FieldArgsTruncated   = "args_truncated"
	FieldResultTruncated = "result_truncated"
	FieldStderrTruncated = "stderr_truncated"
)

// Event names (SPEC section 7).
const (
	EventTurnStarted           = "turn_started"
	EventProviderRegistered    = "provider_registered"
	EventProviderRejected      = "provider_rejected"
	EventFamilySelected        = "capability_family_selected"
	EventIndexExposed          = "capability_index_exposed"
	EventDescribed             = "capability_described"
	EventInvoked               = "capability_invoked"
	EventRefused               = "capability_refused"
	EventProviderFailed        = "provider_failed"
	EventToolRejected          = "tool_rejected"
	EventRuntimeWithoutGateway = "runtime_without_gateway"
	EventInterrupted           = "interrupted"
	EventTurnEnded             = "turn_ended"
	EventEnvelopeUnmatched     = "envelope_unmatched"
	EventKeeperStarted         = "keeper_started"
	EventKeeperEnded           = "keeper_ended"
	EventKeeperUnavailable     = "keeper_unavailable"
	EventSearched              = "capability_searched"
	EventPreflighted           = "capability_preflighted"
	EventPromptSkipped         = "prompt_skipped"
	EventBrokerUnavailable     = "broker_unavailable"

	// The broker's own records (SPEC 14), in broker.audit.
	EventBrokerStarted     = "broker_started"
	EventBrokerEnded       = "broker_ended"
	EventProviderStarted   = "provider_started"
	EventProviderRestarted = "provider_restarted"
	EventProviderFlapping  = "provider_flapping"
)

// MaxValueBytes bounds each string written: args, result, the stderr tail,
// every other field and every string inside Fields. Values are redacted
// before they are cut, so a cut never leaves part of a secret behind.
const MaxValueBytes = 4096

// ErrReservedField is returned by Log for a Fields key that names a standard field.
var ErrReservedField = errors.New("reserved field")

// Event is one decision to record. Empty strings and zero numbers are left out.
type Event struct {
	Name                                                                        string
	Provider, Capability, Class, Mode, Code, Reason, AuditID, Stage, StderrTail string
	// Duration is written as duration_ms (float) when non-zero.
	Duration time.Duration
	// Args is written as "args", a string holding the arguments as compact
	// JSON with secrets redacted (the raw text, redacted, when it is not
	// JSON), cut to MaxValueBytes; "args_sha256" is the hex SHA-256 of Args
	// exactly as given.
	Args json.RawMessage
	// Result is written redacted and cut to MaxValueBytes.
	Result string
	// ResultBytes is the original size of the result; when it is 0 and Result
	// is set, len(Result) is written.
	ResultBytes int
	// ShareKey is the share key of a broker record's upstream (the project, "" for share all):
	// written, even empty, on every record of a broker logger (OpenBroker), never otherwise.
	ShareKey string
	// Fields are event-specific extras (e.g. "providers", "family",
	// "isolated"), written in key order; every string in them is redacted and
	// bounded. A key may not name a standard field.
	Fields map[string]any
}

// Logger appends records to one audit file. It is safe for concurrent use,
// and any number of processes may append to the same file at once.
type Logger struct {
	path          string
	turn, session string
	face          string // SetFace
	broker        bool   // OpenBroker: "broker": true in place of turn and session
	red           *Redactor
	now           func() time.Time
}

// Open checks that path can be appended to (creating it 0600) and returns a logger whose
// records carry turn and session. Open does not keep the file open between records.
// red may be nil (nothing to redact).
func Open(path, turn, session string, red *Redactor) (*Logger, error) {
	if path == "" {
		return nil, errors.New("audit: open: empty path")
	}
	if err := checkFile(path); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	return &Logger{
		path:    path,
		turn:    red.String(turn),
		session: red.String(session),
		red:     red,
		now:     time.Now,
	}, nil
}

// OpenBroker is Open for the broker's own records (SPEC 14): they carry "broker": true, and the
// upstream's provider and share key, in place of turn and session.
func OpenBroker(path string, red *Redactor) (*Logger, error) {
	l, err := Open(path, "", "", red)
	if l != nil {
		l.broker = true
	}
	return l, err
}

// Path is the audit file's path.
func (l *Logger) Path() string { return l.path }

// Log writes one whole line (flock + O_APPEND + one write) before returning; an error means
// the record was not written and the caller must refuse with audit-unavailable.
// The line is in the kernel when Log returns; turn_ended and interrupted are
// also synced to disk (see docs/audit.md).
func (l *Logger) Log(e Event) error { return l.log(e, 0) }

// SetFace marks every later record with the face that writes it ("mcp"); call it before the
// logger is shared.
func (l *Logger) SetFace(face string) { l.face = face }

// OutcomeReserve is the room LogReserving keeps after its record: enough for what follows an
// intent record, whatever the call does (the outcome, a provider_failed and an interrupted
// record, each of fewer than twelve strings of at most MaxValueBytes, which escaping can make
// six times longer).
const OutcomeReserve = 256 << 10

// LogReserving is Log for a record that another must follow (a call's intent, before its
// outcome): in the same locked step it makes sure that OutcomeReserve bytes more can be
// appended to the file after it (preallocated: docs/audit.md says what that guarantees), and
// writes nothing when they cannot.
func (l *Logger) LogReserving(e Event) error { return l.log(e, OutcomeReserve) }

func (l *Logger) log(e Event, reserve int64) error {
	line, err := l.record(e, l.now())
	if err != nil {
		return fmt.Errorf("audit: %s: %w", e.Name, err)
	}
	sync := e.Name == EventTurnEnded || e.Name == EventInterrupted
	if err := appendLine(l.path, line, sync, reserve); err != nil {
		return fmt.Errorf("audit: %s: %w", e.Name, err)
	}
	return nil
}

// idEncoding is made on first use: package initialisation stays free of work (the front binary
// links this package and starts for every command line).
var idEncoding = sync.OnceValue(func() *base32.Encoding {
	return base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)
})

// NewAuditID returns a random, URL-safe identifier (16 random bytes, 26
// lower-case base32 characters), unique per answer.
func NewAuditID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never returns an error; it crashes instead
	return idEncoding().EncodeToString(b[:])
}

// Redactor is the redactor the logger applies, for callers that must clean
// their other outputs the same way.
func (l *Logger) Redactor() *Redactor { return l.red }
