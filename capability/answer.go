package capability

import (
	"bytes"
	"fmt"
	"io"
	"strconv"

	"github.com/spear-shell/spear-shell/audit"
)

// answer collects one answer's output so that it is printed, redacted, only after its
// audit records are written.
type answer struct {
	t      *Turn
	out    bytes.Buffer
	errb   bytes.Buffer
	stdout io.Writer
	stderr io.Writer

	// What was decided (decision.go): at most one of these is set, then rendered.
	refusal   *Refusal // the answer's first code line
	listing   *Listing
	page      *SearchPage
	described []Described
	outcome   *CallOutcome
	preflight *Preflight

	// guarded: this answer is an invoke whose call is sent only while the provider's listing is
	// the one its checks used (family.go, invoke.go), so its definitions need not be fetched.
	guarded bool
}

func (t *Turn) newAnswer(stdout, stderr io.Writer) *answer {
	return &answer{t: t, stdout: stdout, stderr: stderr}
}

func (a *answer) printf(format string, args ...any) { fmt.Fprintf(&a.out, format, args...) }

// note writes a notice line on stderr.
func (a *answer) note(format string, args ...any) {
	a.errb.WriteString("spear-capability: ")
	fmt.Fprintf(&a.errb, format, args...)
	a.errb.WriteByte('\n')
}

// errf writes the answer's `spear-capability: <code>: <reason>` line.
func (a *answer) errf(code, format string, args ...any) {
	reason := fmt.Sprintf(format, args...)
	if a.refusal == nil {
		a.refusal = &Refusal{code, reason}
	}
	a.errb.WriteString(Refusal{code, reason}.Line())
	a.errb.WriteByte('\n')
}

// refuse records a refusal and says it; a refusal that cannot be recorded becomes
// audit-unavailable (SPEC 5 places the audit check before every later code).
func (a *answer) refuse(code, reason string) string {
	return a.refuseEv(audit.Event{Code: code, Reason: reason})
}

func (a *answer) refuseEv(ev audit.Event) string {
	ev.Name = audit.EventRefused
	if e := a.t.env; e != nil && e.Manifest != nil {
		// no-capabilities precedes audit-unavailable in SPEC 5's order: recorded when possible.
		if err := e.Log(ev); err != nil && ev.Code != CodeNoCapabilities {
			return a.auditUnavailable(err)
		}
	}
	a.errf(ev.Code, "%s", ev.Reason)
	return ev.Code
}

func (a *answer) auditUnavailable(err error) string {
	a.out.Reset()
	a.refusal = nil // audit-unavailable is the answer, whatever came before
	a.listing, a.page, a.described, a.outcome, a.preflight = nil, nil, nil, nil, nil
	a.errf(CodeAuditUnavailable, "the audit trail cannot be written, so nothing is answered: %v", err)
	return CodeAuditUnavailable
}

// finish prints the answer, redacted, and returns its exit code.
func (a *answer) finish(code string) int {
	red := audit.NewRedactor(nil)
	if a.t.env != nil && a.t.env.Redactor != nil {
		red = a.t.env.Redactor
	}
	if a.out.Len() > 0 {
		a.stdout.Write(red.Bytes(a.out.Bytes()))
	}
	if a.errb.Len() > 0 {
		a.stderr.Write(red.Bytes(a.errb.Bytes()))
	}
	return ExitCode(code)
}

func quote(s string) string { return strconv.Quote(clean(s)) }
