package gates_test

// Helpers of the delta tests (issue 20, mutation testing of gate 4's delta
// proof): a delta lake with a chosen change, and thin wrappers of the
// Iceberg table that hide one capability or restate one fact of the
// manifests, so each check of reconcile_delta.go can be made to fail on
// exactly one fact.
//
// The mutants of reconcile_delta.go that lived or were not covered under
// the tests before these (gremlins at 62bb0ab: 63 killed, 47 lived, 8 not
// covered), each applied by hand and killed by (line: test):
//   49 (|| → &&, x4): TestDeltaPathOnlyForTheUpsertsOwnSnapshot
//   53 (|| → &&): TestDeltaPathNeedsBothCapabilities
//   57 (|| → &&, x2): TestDeltaPathNeedsAParentAndNoReplace
//   87, 92 (x4), 93, 96, 99, 102: TestDeltaManifestsEachFactFails
//   95, 96 (n > 0), 99, 102 (boundaries): TestDeltaManifestsControl
//   144, 280: TestDeltaCountsControl; 152: TestDeltaSourceTotals…
//   173, 202: TestDeltaTamperKeyRemovedTwice
//   182, 183 (x2), 209, 248, 260, 270 (x2), 346, 352: TestDeltaUpdateAndDelete
//   214, 276: TestDeltaDeleteOnly; 246 (x2): TestDeltaCountsControl
//   238: TestDeltaTamperDeleteFileRemovesAnotherRow
//   240: TestDeltaTamperNewRowMovedOntoAnOldKey
//   291: TestDeltaKeyColumnMissing; 325, 329: TestDeltaTamperDeletedKeyStillLive
//   368 (j > 0 → j <= 0): TestDeltaCompositeKeyTexts
// Left living, equivalent: 118 and 165 (len > 0 → >= 0: ScanFiles and
// DeletedRows of no file read nothing; TestDeltaDeleteOnly and
// TestDeltaInsertOnly run them), 368 (j > 0 → j >= 0: a separator before
// every key column is as injective, and the texts never leave this file).

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/sink/icesink"
	"github.com/lima-lake/lima/gates"
)

// deltaTLake is the table of deltaLake (January ids 1…10 in one file,
// February ids 11…15 in another) changed by one upsert's delta commit:
// the rows written (may be none) and the keys deleted first (the updated
// and the deleted ones). The expectation is computed by expectFor from the
// rows written, never by the code under test.
func deltaTLake(t *testing.T, written []tRow, delIDs []int64, d gates.DeltaExpect) (*lake, gates.Expectation, sink.SnapshotChange) {
	t.Helper()
	l := loadLake(t, tRows(), "L1")
	var feb []tRow
	for i := int64(11); i <= 15; i++ {
		feb = append(feb, tRow{id: i, name: strp("feb"), amount: 500 * i, score: 1, day: time.Date(2024, 2, int(i), 0, 0, 0, 0, time.UTC)})
	}
	l.commitRows(feb, sink.CommitProps{LoadID: "L1b", RunID: "run-L1b"})
	c := l.deltaTCommit(written, delIDs, "L2")
	var e gates.Expectation
	if len(written) > 0 {
		e = expectFor(written, "L2")
	} else {
		e = gates.Expectation{Table: "orders", LoadID: "L2", Columns: tCols, Types: tTypes, Required: tRequired, Keys: []string{"id"},
			Sums: map[string]string{"id": "0", "amount": "0.00"}}
	}
	e.Mode, e.SnapshotID, e.Min, e.Max = plan.ModeUpsert, c.SnapshotID, nil, nil
	e.Delta = &d
	ch, err := l.tbl.SnapshotChange(l.ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	return l, e, ch
}

// deltaTCommit stages written and commits it as a delta deleting the
// committed rows of delIDs first, as an upsert does.
func (l *lake) deltaTCommit(written []tRow, delIDs []int64, loadID string) sink.Commit {
	l.t.Helper()
	rec := record(l.tbl.Schema(), written)
	defer rec.Release()
	staged, err := l.tbl.Stage(l.ctx, func(yield func(arrow.RecordBatch, error) bool) {
		if len(written) > 0 {
			yield(rec, nil)
		}
	})
	if err != nil {
		l.t.Fatal(err)
	}
	kb := array.NewInt64Builder(memory.DefaultAllocator)
	kb.AppendValues(delIDs, nil)
	ka := kb.NewArray()
	kb.Release()
	keys := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{l.tbl.Schema().Field(0)}, nil), []arrow.Array{ka}, int64(len(delIDs)))
	ka.Release()
	defer keys.Release()
	c, err := l.tbl.CommitDelta(l.ctx, staged, sink.CommitProps{LoadID: loadID, RunID: "run-" + loadID}, sink.Keys{Columns: []string{"id"}, Batches: []arrow.RecordBatch{keys}})
	if err != nil {
		l.t.Fatal(err)
	}
	return c
}

// deltaTReconcile is gate 4 through another view of the lake's table.
func deltaTReconcile(t *testing.T, l *lake, sc sink.Scanner, e gates.Expectation) *gates.Reconciliation {
	t.Helper()
	rec, err := gates.Reconcile(l.ctx, sc, e)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// deltaTManifests is the lake's table whose manifests, as SnapshotChange
// states them, are restated by edit (or fail with err): the facts a
// commit behind Lima's back would leave in a delta snapshot's manifests
// — a file of the previous snapshot removed or changed, a stray delete
// file — one at a time, everything else read from the real lake.
type deltaTManifests struct {
	*icesink.Table
	edit func(*sink.SnapshotChange)
	err  error
}

func (d deltaTManifests) SnapshotChange(ctx context.Context, snapshotID int64) (sink.SnapshotChange, error) {
	if d.err != nil {
		return sink.SnapshotChange{}, d.err
	}
	ch, err := d.Table.SnapshotChange(ctx, snapshotID)
	if err == nil && d.edit != nil {
		d.edit(&ch)
	}
	return ch, err
}

// deltaTNoKeyFinder is the table without its key look-up: the field
// FindKeys hides the method the embedded table would promote.
type deltaTNoKeyFinder struct {
	*icesink.Table
	FindKeys struct{}
}

// deltaTNoDeltaReader is the table without SnapshotChange (so no
// sink.DeltaReader), the same way.
type deltaTNoDeltaReader struct {
	*icesink.Table
	SnapshotChange struct{}
}

var (
	_ sink.DeltaReader = deltaTManifests{}
	_ sink.KeyFinder   = deltaTNoDeltaReader{}
	_ sink.DeltaReader = deltaTNoKeyFinder{}
)

// deltaTPath says which path gate 4 took: the delta proof names its
// manifest check, the full re-read its whole-table key check.
func deltaTPath(t *testing.T, rec *gates.Reconciliation) string {
	t.Helper()
	var delta, full bool
	for _, f := range rec.Checks {
		switch f.Name {
		case "delta: live rows from the manifests":
			delta = true
		case "unique key (id)":
			full = true
		}
	}
	switch {
	case delta && !full:
		return "delta"
	case full && !delta:
		return "full"
	}
	t.Fatalf("gate 4 took no one path (delta %v, full %v): %+v", delta, full, rec.Checks)
	return ""
}
