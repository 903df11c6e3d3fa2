package gates_test

import (
	"testing"

	"github.com/lima-lake/lima/gates"
)

// An incremental load's row count compares the rows this load accepted
// with the whole table's: a first load into an empty table holds exactly
// as many rows as it accepted and passes (kills ">=" changed to ">"); a row
// of the load deleted behind Lima's back leaves fewer and fails; rows of
// other loads beside it pass.
func TestIncrementalRowCountBoundaries(t *testing.T) {
	rows := tRows()
	incr := func() gates.Expectation {
		e := expectFor(rows, "L1")
		e.Mode = "incremental"
		return e
	}
	l := loadLake(t, rows, "L1")
	rec := l.reconcile(incr())
	if rec.LakeRows != int64(len(rows)) {
		t.Fatalf("lake rows %d, want %d", rec.LakeRows, len(rows))
	}
	wantStatus(t, rec, "row count", gates.Pass)

	l.appendBehind([]tRow{{id: 11, name: strp("other load"), amount: 5, score: 1, day: rows[0].day}}, nil)
	rec = l.reconcile(incr())
	if rec.LakeRows != int64(len(rows))+1 {
		t.Fatalf("lake rows %d, want %d", rec.LakeRows, len(rows)+1)
	}
	wantStatus(t, rec, "row count", gates.Pass)

	l.deleteBehind(3, 11)
	rec = l.reconcile(incr())
	if rec.LakeRows != int64(len(rows))-1 {
		t.Fatalf("lake rows %d, want %d", rec.LakeRows, len(rows)-1)
	}
	wantStatus(t, rec, "row count", gates.Fail)
}
