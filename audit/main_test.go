package audit

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// The test binary doubles as the child processes of the cross-process tests:
// with childEnv set it does one job and exits instead of running tests.
const (
	childEnv     = "AUDIT_TEST_CHILD"
	childPathEnv = "AUDIT_TEST_PATH"
	childIDEnv   = "AUDIT_TEST_ID"
	childNEnv    = "AUDIT_TEST_N"
)

func TestMain(m *testing.M) {
	if job := os.Getenv(childEnv); job != "" {
		os.Exit(runChild(job))
	}
	goleak.VerifyTestMain(m)
}

// childReport is what a child prints on stdout.
type childReport struct {
	Written int      `json:"written"`
	Errors  []string `json:"errors"`
}

func runChild(job string) int {
	path := os.Getenv(childPathEnv)
	id := os.Getenv(childIDEnv)
	n, _ := strconv.Atoi(os.Getenv(childNEnv))
	var rep childReport
	fail := func(err error) { rep.Errors = append(rep.Errors, err.Error()) }
	l, err := Open(path, "turn-x", "session-"+id, NewRedactor([]string{"child-secret-value"}))
	if err != nil {
		fail(err)
	} else {
		switch job {
		case "append":
			// Lines longer than PIPE_BUF, so atomicity cannot come from a
			// pipe-sized write guarantee.
			for i := range n {
				err := l.Log(Event{
					Name:     EventInvoked,
					Provider: "fake",
					Result:   strings.Repeat(id, 5000),
					Fields:   map[string]any{"child": id, "seq": i},
				})
				if err != nil {
					fail(err)
					break
				}
				rep.Written++
			}
		case "fill":
			// Write until the file size limit stops us, then try once more:
			// both attempts must fail cleanly (the process must survive SIGXFSZ).
			ev := Event{Name: EventDescribed, Capability: "fake/echo", Reason: strings.Repeat("r", 200)}
			for range n {
				if err := l.Log(ev); err != nil {
					fail(err)
					break
				}
				rep.Written++
			}
			if err := l.Log(ev); err != nil {
				fail(err)
			}
		case "reserve":
			// An intent record that needs room for its outcome: refused whole under a
			// file size limit smaller than OutcomeReserve.
			if err := l.LogReserving(Event{Name: EventInvoked, Fields: map[string]any{"phase": "intent"}}); err != nil {
				fail(err)
			} else {
				rep.Written++
			}
		case "readonly":
			// One record, then the file loses its write permission.
			if err := l.Log(Event{Name: EventTurnStarted}); err != nil {
				fail(err)
			} else {
				rep.Written++
			}
			if err := os.Chmod(path, 0o400); err != nil {
				fail(err)
			}
			if err := l.Log(Event{Name: EventTurnEnded}); err != nil {
				fail(err)
			} else {
				rep.Written++
			}
		default:
			fail(fmt.Errorf("unknown child job %q", job))
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(rep); err != nil {
		return 2
	}
	return 0
}
