package audit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// LogReserving leaves OutcomeReserve bytes preallocated after its record, without changing
// the file's size, so the outcome's write needs no new space.
func TestLogReserving(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path, "t", "s", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Log(Event{Name: EventTurnStarted}); err != nil {
		t.Fatal(err)
	}
	if err := l.LogReserving(Event{Name: EventInvoked, Fields: map[string]any{"phase": "intent"}}); err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	if recs := readRecords(t, path); len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	if probe(t) && st.Blocks*512 < st.Size+OutcomeReserve {
		t.Errorf("%d bytes allocated for a file of %d: want %d more after it", st.Blocks*512, st.Size, OutcomeReserve)
	}
}

// probe tells whether the test's file system preallocates (else the free space is checked).
func probe(t *testing.T) bool {
	f, err := os.CreateTemp(t.TempDir(), "probe")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, 0, 4096) == nil
}

// Under a file size limit that leaves no room for the outcome, the intent is not written at
// all (the caller refuses the call before it is sent).
func TestLogReservingUnderSizeLimit(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("needs bash for ulimit")
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	cmd := child(t, "reserve", path, "r", 1)
	cmd.Args = []string{"bash", "-c", fmt.Sprintf(`ulimit -f %d && exec "$0"`, OutcomeReserve/1024/2), cmd.Path}
	cmd.Path, _ = exec.LookPath("bash")
	rep := runReport(t, cmd)
	if rep.Written != 0 || len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0], "file size limit") {
		t.Fatalf("report %+v, want one refusal naming the file size limit", rep)
	}
	if recs := readRecords(t, path); len(recs) != 0 {
		t.Errorf("%d records written, want none", len(recs))
	}
}
