package run

// The life of one table in one run, written once for every kind of load.
//
// A file or database load (loadTable), a change-capture batch (loadCDC) and
// a replay of fixed exceptions (replayTable) differ in what they read, how
// they stage it, what their commit carries and what the ledger records
// afterwards. They do not differ in the order of things or in the guards,
// so those live here and nowhere else:
//
//	open    the source and the table; name the load (its load id) and look
//	        for it in the table: a load already committed ends here
//	stage   read the input (raw/ landing first), check every row, hold the
//	        failing ones as pending exceptions under the load id, stage the
//	        rows the commit will carry (and the history's rows)
//	guard   conservation — rows read = loaded + held + skipped, and the
//	        sink staged exactly the rows the checks accepted — before any
//	        commit; a load that does not balance commits nothing
//	check   the mode's last word before the commit (the error budget, a
//	        database's delete detection, the extract's landing)
//	commit  the history first, under the same load id; then one snapshot of
//	        the table carrying the load id and the watermark (the sink looks
//	        for the load id before every retry: never applied twice)
//	settle  the ledger after the commit: the held exceptions become visible
//	        with the data; a replay marks its exceptions replayed
//
// Every failure before the commit takes the one abort path (abort): every
// staged file is discarded and the load's pending exceptions are dropped, so
// nothing of the load is visible and the ledger is as it was. The fault
// points before-commit and after-commit (replay-… for a replay) sit at the
// same place in every kind of load.
//
// The shape follows a transaction: staged parts accumulate, then one commit
// makes them visible together, or they are all dropped.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/internal/faultpoint"
)

// lifeSteps are the mode-specific steps of a table's life. They reach the
// shared state through the *lifecycle they embed.
type lifeSteps interface {
	// open opens the source and the table, names the load (tr.LoadID),
	// reads the table's current commit (lifecycle.cur) and looks for the
	// load in the table. done ends the life there, with tr.Status set
	// (already loaded, nothing to load). Nothing is held or staged yet.
	open(ctx context.Context) (done bool, err error)
	// stage reads and checks the input, holds the failing rows under the
	// load id and stages the table's rows (lifecycle.staged; want: the rows
	// the checks accepted for the table) and the history's
	// (lifecycle.history). What it staged is discarded on any failure.
	stage(ctx context.Context) error
	// check is the mode's last word once the rows balance.
	check(ctx context.Context) (verdict, error)
	// commit makes the table's one snapshot, with the load id and the
	// watermark.
	commit(ctx context.Context) (sink.Commit, error)
	// settle records the outcome in the ledger: after the commit
	// (committed), or when the load ends without a snapshot of the table.
	settle(ctx context.Context, committed bool) error
	// dropPending drops the exceptions held under the load id (abort).
	dropPending(ctx context.Context)
}

// verdict is what check decided.
type verdict struct {
	// noSnapshot ends the load without a snapshot of the table, settled,
	// with this status (nothing to add; a replay whose rows all failed).
	noSnapshot string
	// afterHistory: noSnapshot applies after the history's commit (a
	// change-capture batch that changes nothing in the table is recorded
	// by its history alone).
	afterHistory bool
	// refuse fails the load without a commit but keeps (settles) its
	// exceptions for inspection: the error budget.
	refuse error
}

// stagedHistory is a history table's part of the load, committed first
// under the same load id: a crash between the two commits is completed by
// the rerun, whose history commit finds its load id and adds nothing.
type stagedHistory struct {
	tbl    sink.Table
	staged sink.Staged
	props  sink.CommitProps
}

// lifecycle is the state every kind of load shares.
type lifecycle struct {
	tr   *TableResult
	prog *TableProgress
	// fault prefixes the names of the fault points ("replay-" for a replay).
	fault string
	// cur is the table's current commit when the load opened it.
	cur    sink.Commit
	hasCur bool
	// staged are the table's rows, not yet visible; want is how many rows
	// the checks accepted for them.
	staged  sink.Staged
	want    int64
	history *stagedHistory
	// closers run when the life ends, last registered first.
	closers []func()
	// st: the stage's inner stretches the mode measured (phases.go).
	st stageTimes
	// stageOnly ends the life after the conservation guard: the staged
	// files are handed over (TableResult.Staged), nothing is committed or
	// settled, the held rows stay in the quarantine (a distributed
	// worker's shard, shard.go).
	stageOnly bool
}

func newLifecycle(name, mode string, prog *TableProgress) *lifecycle {
	return &lifecycle{
		tr: &TableResult{Name: name, Mode: mode, Started: time.Now().UTC(),
			SkippedBy: map[string]int64{}, QuarantinedBy: map[string]int64{}, HeldByOwner: map[string]int64{}},
		prog: prog,
	}
}

// onClose registers a release for the end of the life.
func (lc *lifecycle) onClose(f func()) { lc.closers = append(lc.closers, f) }

// live runs the table's life: the one skeleton of every load.
func (lc *lifecycle) live(ctx context.Context, m lifeSteps) *TableResult {
	tr := lc.tr
	t0 := time.Now()
	var openEnd, stageEnd time.Time
	defer func() {
		for i := len(lc.closers) - 1; i >= 0; i-- {
			lc.closers[i]()
		}
		now := time.Now()
		tr.Finished = now.UTC()
		lc.phases(t0, openEnd, stageEnd, now)
		if tr.Err != nil {
			tr.Status = StatusFailed
		}
		lc.prog.MarkFinished(now)
		lc.prog.Phase.Store(tr.Status)
	}()
	done, err := m.open(ctx)
	openEnd = time.Now()
	if err != nil || done {
		tr.Err = err
		return tr
	}
	err = m.stage(ctx)
	stageEnd = time.Now()
	if err != nil {
		return lc.abort(ctx, m, err)
	}
	// Conservation is a precondition of every commit.
	if err := lc.conserved(); err != nil {
		return lc.abort(ctx, m, err)
	}
	if lc.stageOnly {
		tr.Staged, lc.staged = lc.staged, nil
		tr.Status = StatusStaged
		return tr
	}
	v, err := m.check(ctx)
	switch {
	case err != nil:
		return lc.abort(ctx, m, err)
	case v.refuse != nil:
		lc.discardStaged(ctx)
		tr.Err = errors.Join(v.refuse, m.settle(context.WithoutCancel(ctx), false))
		return tr
	case v.noSnapshot != "" && !v.afterHistory:
		return lc.withoutSnapshot(ctx, m, v.noSnapshot)
	}
	lc.prog.Phase.Store("committing")
	if err := lc.commitHistory(ctx); err != nil {
		return lc.abort(ctx, m, err)
	}
	faultpoint.Hit(lc.fault + "before-commit")
	if v.noSnapshot != "" {
		return lc.withoutSnapshot(ctx, m, v.noSnapshot)
	}
	c, err := m.commit(ctx)
	if err != nil {
		// The sink looked for the load id before giving up: nothing of
		// the load is visible.
		return lc.abort(ctx, m, err)
	}
	lc.staged = nil // visible now, never discarded
	tr.Commit = c
	faultpoint.Hit(lc.fault + "after-commit")
	if err := m.settle(ctx, true); err != nil {
		tr.Err = err
		return tr
	}
	tr.Status = StatusLoaded
	return tr
}

// phases fills tr.Phases from the life's time marks: open from t0 to
// openEnd, the stage to stageEnd (zero: the life ended before), the commit
// (and everything after the stage) to end.
func (lc *lifecycle) phases(t0, openEnd, stageEnd, end time.Time) {
	ph := &lc.tr.Phases
	if openEnd.IsZero() {
		ph.Open = end.Sub(t0)
		return
	}
	ph.Open = openEnd.Sub(t0)
	if stageEnd.IsZero() {
		stageEnd = end
	}
	stage := stageEnd.Sub(openEnd)
	st := lc.st
	ph.Land, ph.Read, ph.CastCheck, ph.WriteWait, ph.WriteBusy = st.land, st.read, st.castCheck, st.writeWait, st.writeBusy
	ph.StageOther = max(0, stage-st.covered())
	ph.Commit = end.Sub(stageEnd)
}

// conserved is the conservation guard: every row read is loaded, held or
// skipped, and the sink staged exactly the rows the checks accepted.
func (lc *lifecycle) conserved() error {
	tr := lc.tr
	var staged int64
	if lc.staged != nil {
		staged = lc.staged.Rows()
	}
	if tr.Balanced() && staged == lc.want {
		return nil
	}
	return fmt.Errorf("rows do not balance: read %d ≠ loaded %d + held back %d + skipped %d (staged %d of %d accepted); nothing committed",
		tr.RowsRead, tr.RowsLoaded, tr.RowsQuarantined, tr.RowsSkipped, staged, lc.want)
}

// abort is the one failure path before a commit: the staged files are
// discarded and the load's pending exceptions dropped.
func (lc *lifecycle) abort(ctx context.Context, m lifeSteps, err error) *TableResult {
	lc.discardStaged(ctx)
	m.dropPending(context.WithoutCancel(ctx))
	lc.tr.Err = err
	return lc.tr
}

// withoutSnapshot ends a load that makes no snapshot of the table: its
// exceptions are settled — they are the whole outcome of the load.
func (lc *lifecycle) withoutSnapshot(ctx context.Context, m lifeSteps, status string) *TableResult {
	lc.discardStaged(ctx)
	lc.tr.Commit = lc.cur
	if err := m.settle(ctx, false); err != nil {
		lc.tr.Err = err
	}
	lc.tr.Status = status
	return lc.tr
}

// discardStaged removes what was staged and not committed.
func (lc *lifecycle) discardStaged(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	if lc.staged != nil {
		_ = lc.staged.Discard(ctx)
		lc.staged = nil
	}
	if h := lc.history; h != nil && h.staged != nil {
		_ = h.staged.Discard(ctx)
		h.staged = nil
	}
}

// commitHistory commits the history's rows first, under the load id.
func (lc *lifecycle) commitHistory(ctx context.Context) error {
	h := lc.history
	if h == nil || h.staged == nil {
		return nil
	}
	s := h.staged
	if s.Rows() == 0 {
		h.staged = nil
		_ = s.Discard(context.WithoutCancel(ctx))
		return nil
	}
	c, err := h.tbl.Commit(ctx, s, h.props)
	if err != nil {
		return fmt.Errorf("commit the history of %s: %w", lc.tr.Name, err)
	}
	h.staged = nil
	if c.AlreadyCommitted { // a rerun completing the batch: its files are not needed
		_ = s.Discard(context.WithoutCancel(ctx))
	}
	return nil
}
