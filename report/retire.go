package report

import (
	"container/list"
	"encoding/json"
	"fmt"
	"time"
)

// maxLive bounds the turn summaries held in memory: past it, the summary least recently
// touched is retired to the spool and read back when its turn has another record (rare: a
// trail's turns mostly follow one another) or when it is shown. What stays in memory per turn
// is its slot (about 150 bytes with its key), whatever the turn holds.
var maxLive = 256 // a variable for tests

// slot is one turn as the reader keeps it: its summary in memory (t), or where in the spool
// the retired summary lies; its rows' stream; and its last record's time, for --since.
type slot struct {
	t    *Turn
	disk chunk
	rows *stream
	last time.Time
	el   *list.Element // in reader.live while t is in memory
}

// turnDisk is a retired summary: the turn's exported fields and what the reader keeps of it.
type turnDisk struct {
	T         *Turn
	FirstAt   string
	MaxTime   time.Time
	MaxTimeAt string
	NRows     int
}

// wake returns the slot's summary, reading it back when it was retired, and marks it the most
// recently used; other summaries are retired past maxLive.
func (rd *reader) wake(sl *slot) *Turn {
	if sl.t == nil {
		t, err := rd.r.load(sl)
		if err != nil { // the spool cannot be read back: a report without the turn's past
			t = &Turn{rows: sl.rows}
			t.problem("", "the report lost this turn's earlier records: "+err.Error())
		}
		sl.t = t
	}
	if sl.el != nil {
		rd.live.MoveToFront(sl.el)
	} else {
		sl.el = rd.live.PushFront(sl)
	}
	for rd.live.Len() > maxLive {
		old := rd.live.Back().Value.(*slot)
		if old == sl || old == rd.cur || !rd.retire(old) {
			break
		}
	}
	return sl.t
}

// retire writes a summary to the spool and lets it go; false when it could not be written
// (the summary then stays in memory).
func (rd *reader) retire(sl *slot) bool {
	t := sl.t
	b, err := json.Marshal(turnDisk{T: t, FirstAt: t.firstAt, MaxTime: t.maxTime, MaxTimeAt: t.maxTimeAt, NRows: t.nrows})
	if err != nil {
		return false
	}
	c, ok := rd.r.spool.put(b)
	if !ok {
		return false
	}
	rd.live.Remove(sl.el)
	sl.el, sl.t, sl.disk = nil, nil, c
	return true
}

// load reads a retired summary back.
func (r *Report) load(sl *slot) (*Turn, error) {
	b, err := r.spool.get(sl.disk)
	if err != nil {
		return nil, fmt.Errorf("report: a turn's summary in the spool: %w", err)
	}
	var d turnDisk
	if err := json.Unmarshal(b, &d); err != nil || d.T == nil {
		return nil, fmt.Errorf("report: a turn's summary in the spool: %v", err)
	}
	t := d.T
	t.firstAt, t.maxTime, t.maxTimeAt, t.nrows, t.rows = d.FirstAt, d.MaxTime, d.MaxTimeAt, d.NRows, sl.rows
	return t, nil
}
