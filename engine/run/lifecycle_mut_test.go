package run

// The lifecycle's skeleton driven through fake steps, one path at a time:
// what runs (closers, discards, the history's commit, the table's commit,
// settle, dropPending), in what order, and the status and error each path
// leaves. Written for the mutants of lifecycle.go (docs/tests.md, "Mutation
// testing"); the loads in the other tests go through the same code with a
// real sink but cannot tell a closer skipped or a discard not done.

import (
	"context"
	"errors"
	"iter"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/lima-lake/lima/engine/sink"
)

// recStaged is a staged part that records its discard in a shared log.
type recStaged struct {
	name string
	rows int64
	log  *[]string
}

func (s *recStaged) Rows() int64  { return s.rows }
func (s *recStaged) Files() int   { return 1 }
func (s *recStaged) Bytes() int64 { return 1 }
func (s *recStaged) Discard(context.Context) error {
	*s.log = append(*s.log, "discard "+s.name)
	return nil
}

// recTable is a history table whose Commit is recorded; only Commit is
// used by the lifecycle.
type recTable struct {
	log     *[]string
	err     error
	already bool
}

func (t *recTable) Schema() *arrow.Schema { return nil }
func (t *recTable) FindLoad(context.Context, string) (sink.Commit, bool, error) {
	return sink.Commit{}, false, nil
}
func (t *recTable) Current(context.Context) (sink.Commit, bool, error) {
	return sink.Commit{}, false, nil
}
func (t *recTable) LastLoad(context.Context) (sink.Commit, bool, error) {
	return sink.Commit{}, false, nil
}
func (t *recTable) Stage(context.Context, iter.Seq2[arrow.RecordBatch, error]) (sink.Staged, error) {
	return nil, errors.New("not used")
}
func (t *recTable) Commit(_ context.Context, s sink.Staged, p sink.CommitProps) (sink.Commit, error) {
	*t.log = append(*t.log, "commit history "+p.LoadID)
	if t.err != nil {
		return sink.Commit{}, t.err
	}
	return sink.Commit{SnapshotID: 7, AlreadyCommitted: t.already}, nil
}

// fakeSteps plays one path through the lifecycle.
type fakeSteps struct {
	lc  *lifecycle
	log *[]string

	openDone   bool
	openErr    error
	stageErr   error
	unbalanced bool // the accounting loses a row
	history    *recTable
	histRows   int64
	v          verdict
	checkErr   error
	commitErr  error
	settleErr  error
}

func (f *fakeSteps) add(s string) { *f.log = append(*f.log, s) }

func (f *fakeSteps) open(context.Context) (bool, error) {
	f.add("open")
	f.lc.onClose(func() { f.add("close 1") })
	f.lc.onClose(func() { f.add("close 2") })
	if f.openDone {
		f.lc.tr.Status = StatusAlreadyLoaded
	}
	return f.openDone, f.openErr
}

func (f *fakeSteps) stage(context.Context) error {
	f.add("stage")
	tr := f.lc.tr
	tr.RowsRead, tr.RowsLoaded, tr.RowsQuarantined, tr.RowsSkipped = 5, 3, 1, 1
	if f.unbalanced {
		tr.RowsSkipped = 0
	}
	f.lc.want = 3
	f.lc.staged = &recStaged{name: "table", rows: 3, log: f.log}
	if f.history != nil {
		f.lc.history = &stagedHistory{tbl: f.history, staged: &recStaged{name: "history", rows: f.histRows, log: f.log},
			props: sink.CommitProps{LoadID: "L1"}}
	}
	return f.stageErr
}

func (f *fakeSteps) check(context.Context) (verdict, error) {
	f.add("check")
	return f.v, f.checkErr
}

func (f *fakeSteps) commit(context.Context) (sink.Commit, error) {
	f.add("commit table")
	return sink.Commit{SnapshotID: 9}, f.commitErr
}

func (f *fakeSteps) settle(_ context.Context, committed bool) error {
	if committed {
		f.add("settle committed")
	} else {
		f.add("settle")
	}
	return f.settleErr
}

func (f *fakeSteps) dropPending(context.Context) { f.add("drop pending") }

func TestLifecyclePathsMut(t *testing.T) {
	boom := errors.New("boom")
	hist := func(err error, already bool) func(*[]string) *recTable {
		return func(log *[]string) *recTable { return &recTable{log: log, err: err, already: already} }
	}
	for _, c := range []struct {
		name     string
		set      func(*fakeSteps)
		hist     func(*[]string) *recTable
		histRows int64
		want     []string
		status   string
		err      string // a part of the error; "" none
		snapshot int64  // tr.Commit.SnapshotID
	}{
		{name: "loaded", want: []string{"open", "stage", "check", "commit table", "settle committed", "close 2", "close 1"},
			status: StatusLoaded, snapshot: 9},
		{name: "loaded with history", hist: hist(nil, false), histRows: 2,
			want:   []string{"open", "stage", "check", "commit history L1", "commit table", "settle committed", "close 2", "close 1"},
			status: StatusLoaded, snapshot: 9},
		{name: "history already committed", hist: hist(nil, true), histRows: 2,
			want:   []string{"open", "stage", "check", "commit history L1", "discard history", "commit table", "settle committed", "close 2", "close 1"},
			status: StatusLoaded, snapshot: 9},
		{name: "empty history is not committed", hist: hist(nil, false), histRows: 0,
			want:   []string{"open", "stage", "check", "discard history", "commit table", "settle committed", "close 2", "close 1"},
			status: StatusLoaded, snapshot: 9},
		{name: "history commit fails", hist: hist(boom, false), histRows: 2,
			want:   []string{"open", "stage", "check", "commit history L1", "discard table", "discard history", "drop pending", "close 2", "close 1"},
			status: StatusFailed, err: "commit the history of t: boom"},
		{name: "already loaded", set: func(f *fakeSteps) { f.openDone = true },
			want: []string{"open", "close 2", "close 1"}, status: StatusAlreadyLoaded},
		{name: "open fails", set: func(f *fakeSteps) { f.openErr = boom },
			want: []string{"open", "close 2", "close 1"}, status: StatusFailed, err: "boom"},
		{name: "stage fails", set: func(f *fakeSteps) { f.stageErr = boom },
			want:   []string{"open", "stage", "discard table", "drop pending", "close 2", "close 1"},
			status: StatusFailed, err: "boom"},
		{name: "unbalanced", set: func(f *fakeSteps) { f.unbalanced = true },
			want:   []string{"open", "stage", "discard table", "drop pending", "close 2", "close 1"},
			status: StatusFailed, err: "rows do not balance"},
		{name: "check fails", set: func(f *fakeSteps) { f.checkErr = boom },
			want:   []string{"open", "stage", "check", "discard table", "drop pending", "close 2", "close 1"},
			status: StatusFailed, err: "boom"},
		{name: "refused", set: func(f *fakeSteps) { f.v.refuse = errors.New("over budget") },
			want:   []string{"open", "stage", "check", "discard table", "settle", "close 2", "close 1"},
			status: StatusFailed, err: "over budget"},
		{name: "no snapshot", set: func(f *fakeSteps) { f.v.noSnapshot = StatusNothingToLoad }, hist: hist(nil, false), histRows: 2,
			want:   []string{"open", "stage", "check", "discard table", "discard history", "settle", "close 2", "close 1"},
			status: StatusNothingToLoad},
		{name: "no snapshot after the history", set: func(f *fakeSteps) { f.v.noSnapshot, f.v.afterHistory = StatusNothingToLoad, true },
			hist: hist(nil, false), histRows: 2,
			want:   []string{"open", "stage", "check", "commit history L1", "discard table", "settle", "close 2", "close 1"},
			status: StatusNothingToLoad},
		{name: "no snapshot, settle fails", set: func(f *fakeSteps) { f.v.noSnapshot, f.settleErr = StatusNothingToLoad, boom },
			want:   []string{"open", "stage", "check", "discard table", "settle", "close 2", "close 1"},
			status: StatusFailed, err: "boom"},
		{name: "commit fails", set: func(f *fakeSteps) { f.commitErr = boom },
			want:   []string{"open", "stage", "check", "commit table", "discard table", "drop pending", "close 2", "close 1"},
			status: StatusFailed, err: "boom"},
		{name: "settle fails", set: func(f *fakeSteps) { f.settleErr = boom },
			want:   []string{"open", "stage", "check", "commit table", "settle committed", "close 2", "close 1"},
			status: StatusFailed, err: "boom", snapshot: 9},
	} {
		t.Run(c.name, func(t *testing.T) {
			var log []string
			prog := &TableProgress{}
			lc := newLifecycle("t", "full", prog)
			f := &fakeSteps{lc: lc, log: &log, histRows: c.histRows}
			if c.hist != nil {
				f.history = c.hist(&log)
			}
			if c.set != nil {
				c.set(f)
			}
			tr := lc.live(context.Background(), f)
			if !slices.Equal(log, c.want) {
				t.Errorf("steps\n got %q\nwant %q", log, c.want)
			}
			if tr.Status != c.status {
				t.Errorf("status %q, want %q", tr.Status, c.status)
			}
			if got, _ := prog.Phase.Load().(string); got != c.status {
				t.Errorf("progress phase %q, want %q", got, c.status)
			}
			if prog.FinishedAt().IsZero() || tr.Finished.IsZero() {
				t.Errorf("finish time not set: progress %v, result %v", prog.FinishedAt(), tr.Finished)
			}
			switch {
			case c.err == "" && tr.Err != nil:
				t.Errorf("error %v, want none", tr.Err)
			case c.err != "" && (tr.Err == nil || !strings.Contains(tr.Err.Error(), c.err)):
				t.Errorf("error %v, want one with %q", tr.Err, c.err)
			}
			if tr.Commit.SnapshotID != c.snapshot {
				t.Errorf("commit snapshot %d, want %d", tr.Commit.SnapshotID, c.snapshot)
			}
		})
	}
}

// phases splits the table's wall time at the life's marks; the stage's
// time not covered by the measured stretches is StageOther, never negative.
func TestLifecyclePhasesMut(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	sec := time.Second
	for _, c := range []struct {
		name                    string
		openEnd, stageEnd, end  time.Time
		st                      stageTimes
		open, other, commit, rd time.Duration
	}{
		{"whole life", at(2), at(12), at(15), stageTimes{land: 1 * sec, read: 3 * sec, castCheck: 2 * sec, writeWait: 1 * sec},
			2 * sec, 3 * sec, 3 * sec, 3 * sec},
		{"stretches over the stage", at(2), at(4), at(5), stageTimes{read: 5 * sec}, 2 * sec, 0, 1 * sec, 5 * sec},
		{"ended in the stage", at(2), time.Time{}, at(10), stageTimes{read: 1 * sec}, 2 * sec, 7 * sec, 0, 1 * sec},
		{"ended in open", time.Time{}, time.Time{}, at(4), stageTimes{read: 1 * sec}, 4 * sec, 0, 0, 0},
	} {
		lc := newLifecycle("t", "full", &TableProgress{})
		lc.st = c.st
		lc.phases(t0, c.openEnd, c.stageEnd, c.end)
		ph := lc.tr.Phases
		if ph.Open != c.open || ph.StageOther != c.other || ph.Commit != c.commit || ph.Read != c.rd {
			t.Errorf("%s: open %v other %v commit %v read %v, want %v %v %v %v", c.name,
				ph.Open, ph.StageOther, ph.Commit, ph.Read, c.open, c.other, c.commit, c.rd)
		}
	}
}
