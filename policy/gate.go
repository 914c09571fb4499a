package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// Gate is what the write gate (SPEC 2.7) says about a WRITE call.
type Gate int

const (
	GateRefuse       Gate = iota // write-refused
	GateRun                      // runs
	GateAsk                      // the approver is asked; anything but approval is not-confirmed
	GateAutoApproved             // runs, recorded as auto-approved
)

func (g Gate) String() string {
	switch g {
	case GateRefuse:
		return "refuse"
	case GateRun:
		return "run"
	case GateAsk:
		return "ask"
	case GateAutoApproved:
		return "auto-approved"
	}
	return fmt.Sprintf("Gate(%d)", int(g))
}

// WriteGate is the matrix of SPEC 2.7 for a WRITE capability: the provider's write
// policy against the session's permission mode. Any value it does not know refuses.
func WriteGate(write, mode string) Gate {
	switch {
	case mode != ModeAsk && mode != ModeAutoApprove:
		return GateRefuse // read-only, and anything unknown
	case write == WriteAllow:
		return GateRun
	case write == WriteConfirm && mode == ModeAsk:
		return GateAsk
	case write == WriteConfirm && mode == ModeAutoApprove:
		return GateAutoApproved
	}
	return GateRefuse
}

// ApprovalRequest is what the approver is told about a WRITE call.
type ApprovalRequest struct {
	Turn, Session, Capability, Class, Description string
	Arguments                                     json.RawMessage
}

// MarshalJSON writes the request as the approver reads it: one object with turn,
// session, capability, class, arguments ({} when absent) and description.
func (r ApprovalRequest) MarshalJSON() ([]byte, error) {
	args := r.Arguments
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	return json.Marshal(struct {
		Turn        string          `json:"turn"`
		Session     string          `json:"session"`
		Capability  string          `json:"capability"`
		Class       string          `json:"class"`
		Arguments   json.RawMessage `json:"arguments"`
		Description string          `json:"description"`
	}{r.Turn, r.Session, r.Capability, r.Class, args, r.Description})
}

// Approve runs the approver directly (no shell) in a session of its own with no controlling
// terminal, with an environment of PATH (SystemPath) and HOME only, the request as one JSON object (and a newline)
// on stdin, and stdout and stderr discarded. It approves only when the program exits
// 0 within timeout (0 means DefaultApproverTimeout); on timeout or when ctx ends its
// process group is killed. reason says why not (for the audit), or "approved".
func Approve(ctx context.Context, approver []string, timeout time.Duration, req ApprovalRequest) (ok bool, reason string) {
	if len(approver) == 0 {
		return false, "no approver is configured"
	}
	if !filepath.IsAbs(approver[0]) {
		return false, "approver program must be an absolute path"
	}
	if timeout <= 0 {
		timeout = DefaultApproverTimeout
	}
	body, err := json.Marshal(req)
	if err != nil {
		return false, fmt.Sprintf("approval request cannot be encoded: %v", err)
	}

	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, approver[0], approver[1:]...)
	// Never our whole environment (a nil Env), nor the agent's PATH.
	cmd.Env = []string{"PATH=" + SystemPath}
	if v := os.Getenv("HOME"); v != "" {
		cmd.Env = append(cmd.Env, "HOME="+v)
	}
	cmd.Stdin = bytes.NewReader(append(body, '\n'))
	cmd.Stdout, cmd.Stderr = nil, nil // the null device: never the session's streams
	// A new session: no controlling terminal to write to or push input into (TIOCSTI).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// Bounds the wait for the stdin copy when a descendant outside the group holds the pipe.
	cmd.WaitDelay = time.Second

	err = cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return true, "approved"
	case ctx.Err() != nil:
		return false, "approval interrupted"
	case cmd.Process == nil:
		return false, fmt.Sprintf("approver cannot be started: %v", err)
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return false, fmt.Sprintf("approver did not answer within %s", timeout)
	case errors.As(err, &exitErr) && exitErr.Exited():
		return false, fmt.Sprintf("approver denied (exit status %d)", exitErr.ExitCode())
	case errors.As(err, &exitErr):
		return false, fmt.Sprintf("approver crashed (%v)", exitErr)
	}
	return false, fmt.Sprintf("approver failed: %v", err)
}
