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

// Every intent record leaves OutcomeReserve bytes allocated after it, while most of them find
// that room already allocated and ask for none (a reservation asks reserveAhead more): the
// file's allocation changes only every few hundred records.
func TestLogReservingReusesItsRoom(t *testing.T) {
	t.Parallel()
	if !probe(t) {
		t.Skip("the file system does not preallocate")
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path, "t", "s", nil)
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("r", 900)
	changes, last := 0, int64(-1)
	const records = 1000
	for i := range records {
		if err := l.LogReserving(Event{Name: EventInvoked, Result: big, Fields: map[string]any{"phase": "intent"}}); err != nil {
			t.Fatal(err)
		}
		var st unix.Stat_t
		if err := unix.Stat(path, &st); err != nil {
			t.Fatal(err)
		}
		if past := st.Blocks*512 - st.Size; past < OutcomeReserve {
			t.Fatalf("record %d: %d bytes allocated past the end, want %d", i, past, OutcomeReserve)
		}
		if st.Blocks != last {
			changes, last = changes+1, st.Blocks
		}
		if err := l.Log(Event{Name: EventInvoked, Result: big, Fields: map[string]any{"phase": "outcome"}}); err != nil {
			t.Fatal(err)
		}
	}
	// 2,000 records of about 1 KiB: a reservation every 190 KiB or so, about 11 in all; one
	// at every intent would change the allocation at least every fourth record.
	if changes > records/20 {
		t.Errorf("the allocation changed %d times in %d intents: the room is not reused", changes, records)
	}
}

// allocatedPast counts only what st_blocks shows beyond the file's whole blocks and the
// file system's own: a hole inside the file makes it say less, never more.
func TestAllocatedPast(t *testing.T) {
	for _, c := range []struct {
		size, blocks, blksize, want int64
	}{
		{0, 0, 4096, -allocSlack},
		{1, 8, 4096, -allocSlack},                                             // one block of data, nothing past it
		{4096, (4096 + 512<<10) / 512, 4096, 512<<10 - allocSlack},            // 512 KiB past the end
		{5000, (8192 + 100<<10) / 512, 4096, 100<<10 - allocSlack},            // data rounded up to whole blocks
		{1 << 20, (256 << 10) / 512, 4096, -(1 << 20) - allocSlack + 256<<10}, // mostly a hole
		{4096, (4096 + 512<<10) / 512, 0, 512<<10 - allocSlack},               // no block size: 4096
	} {
		st := unix.Stat_t{Size: c.size, Blocks: c.blocks, Blksize: c.blksize}
		if got := allocatedPast(&st); got != c.want {
			t.Errorf("size %d, blocks %d, blksize %d: %d, want %d", c.size, c.blocks, c.blksize, got, c.want)
		}
	}
}
