package mcpstdio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Sentinels callers tell apart with errors.Is.
var (
	ErrStart    = errors.New("start")                        // the program could not be started
	ErrVersion  = errors.New("unsupported protocol version") // the server offered another version
	ErrProtocol = errors.New("protocol error")               // the server broke the protocol or the transport
	ErrTimeout  = errors.New("timeout")                      // a deadline passed while a request waited
	ErrClosed   = errors.New("client closed")                // the client was closed or is unusable
)

// Stages name the step a failure happened in.
const (
	StageStart      = "start"
	StageInitialize = "initialize"
	StageList       = "tools/list"
	StageCall       = "tools/call"
)

// VersionError says which protocol version the server offered instead of ours.
type VersionError struct{ Offered string }

func (e *VersionError) Error() string {
	return fmt.Sprintf("initialize: server offered protocol version %s, want %q", snippet([]byte(e.Offered)), ProtocolVersion)
}

func (e *VersionError) Is(target error) bool { return target == ErrVersion }

// ProtocolError is a broken message, transport or limit during Stage.
type ProtocolError struct {
	Stage string
	Err   error
}

func (e *ProtocolError) Error() string { return e.Stage + ": " + e.Err.Error() }

func (e *ProtocolError) Is(target error) bool { return target == ErrProtocol }

func (e *ProtocolError) Unwrap() error { return e.Err }

// TimeoutError is a deadline that passed during Stage. Err is context.DeadlineExceeded.
type TimeoutError struct {
	Stage string
	Err   error
}

func (e *TimeoutError) Error() string { return e.Stage + ": timeout" }

func (e *TimeoutError) Is(target error) bool { return target == ErrTimeout }

func (e *TimeoutError) Unwrap() error { return e.Err }

// RPCError is a JSON-RPC error answer. The client stays usable after it.
type RPCError struct {
	Code    int64
	Message string
	Data    json.RawMessage
}

func (e *RPCError) Error() string {
	return "rpc error " + strconv.FormatInt(e.Code, 10) + ": " + e.Message
}

// canceledError is a context cancelled (not a deadline) during a stage, e.g. Ctrl-C.
type canceledError struct {
	stage string
	err   error
}

func (e *canceledError) Error() string { return e.stage + ": " + e.err.Error() }

func (e *canceledError) Unwrap() error { return e.err }

// tailError carries the server's stderr tail on errors from Start, which has no Client
// to ask. It does not change the message.
type tailError struct {
	err  error
	tail string
}

func (e *tailError) Error() string { return e.err.Error() }

func (e *tailError) Unwrap() error { return e.err }

// StderrOf returns the server's stderr tail carried by an error from Start, or "".
func StderrOf(err error) string {
	var t *tailError
	if errors.As(err, &t) {
		return t.tail
	}
	return ""
}

// StageOf returns the step an error from this package happened in, or "".
func StageOf(err error) string {
	var (
		pe *ProtocolError
		te *TimeoutError
		ve *VersionError
		ce *canceledError
	)
	switch {
	case errors.As(err, &pe):
		return pe.Stage
	case errors.As(err, &te):
		return te.Stage
	case errors.As(err, &ce):
		return ce.stage
	case errors.As(err, &ve):
		return StageInitialize
	case errors.Is(err, ErrStart):
		return StageStart
	}
	return ""
}

// ctxError turns the end of ctx during stage into the error callers see:
// a deadline is ErrTimeout, a cancellation wraps context.Canceled.
func ctxError(ctx context.Context, stage string) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &TimeoutError{Stage: stage, Err: ctx.Err()}
	}
	return &canceledError{stage: stage, err: ctx.Err()}
}
