package audit

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// The descriptor kept between records follows the path, as a record that opened the file would:
// a file renamed away (rotated) or removed gets no more records, the next one goes to a new file
// at the path; a FIFO planted there is refused.
func TestKeptFollowsThePath(t *testing.T) {
	t.Parallel()
	l, path := newTestLogger(t, nil)
	log := func() error { return l.Log(Event{Name: EventTurnStarted}) }
	if err := log(); err != nil {
		t.Fatal(err)
	}
	rotated := path + ".1"
	if err := os.Rename(path, rotated); err != nil {
		t.Fatal(err)
	}
	if err := log(); err != nil {
		t.Fatal(err)
	}
	if n := len(readRecords(t, rotated)); n != 1 {
		t.Fatalf("the rotated file holds %d records, want 1", n)
	}
	if n := len(readRecords(t, path)); n != 1 {
		t.Fatalf("the new file holds %d records, want 1", n)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := log(); err != nil {
		t.Fatal(err)
	}
	if n := len(readRecords(t, path)); n != 1 {
		t.Fatalf("the file made after a removal holds %d records, want 1", n)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := log(); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("Log to a FIFO = %v, want refused", err)
	}
	if n := len(readRecords(t, rotated)); n != 1 {
		t.Fatalf("the rotated file holds %d records, want still 1", n)
	}
}

// A line torn by another writer after this process's last record is seen although the kept
// descriptor last wrote a whole line there.
func TestKeptRepairsATornTailAfterItsOwnLine(t *testing.T) {
	t.Parallel()
	l, path := newTestLogger(t, nil)
	if err := l.Log(Event{Name: EventTurnStarted}); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"event":"tor`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := l.Log(Event{Name: EventTurnEnded}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 3 || lines[1] != `{"event":"tor` || !strings.Contains(lines[2], EventTurnEnded) {
		t.Fatalf("lines %q", lines)
	}
}

// Records to many audit files keep at most keptMax descriptors open.
func TestKeptIsBounded(t *testing.T) {
	// Not parallel: it counts this process's descriptors.
	open := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip(err)
		}
		return len(ents)
	}
	dir := t.TempDir()
	before := open()
	for i := range 3 * keptMax {
		l, err := Open(filepath.Join(dir, strconv.Itoa(i)+".jsonl"), "t", "s", nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Log(Event{Name: EventTurnStarted}); err != nil {
			t.Fatal(err)
		}
	}
	if grew := open() - before; grew > keptMax {
		t.Fatalf("%d descriptors more after records to %d files, want at most %d", grew, 3*keptMax, keptMax)
	}
	// At once: a record that took a path's entry just before another evicted it closes the
	// descriptor it opens, rather than keeping it where nobody finds it again.
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				l, err := Open(filepath.Join(dir, strconv.Itoa((g+i)%(keptMax+3))+".jsonl"), "t", "s", nil)
				if err == nil {
					err = l.Log(Event{Name: EventTurnStarted})
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if grew := open() - before; grew > keptMax {
		t.Fatalf("%d descriptors more after concurrent records to %d files, want at most %d", grew, keptMax+3, keptMax)
	}
}
