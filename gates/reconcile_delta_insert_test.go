package gates_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lima-lake/lima/gates"
)

// TestDeltaInsertOnly: an upsert that only inserted (id 100, no key of
// the table changed: no delete file) is proved as a delta from the rows
// it added: 15 + 1 − 0 = 16 live rows, nothing removed.
func TestDeltaInsertOnly(t *testing.T) {
	written := []tRow{{id: 100, name: strp("new"), amount: 123, score: 2, day: time.Date(2024, 1, 30, 0, 0, 0, 0, time.UTC)}}
	l, e, ch := deltaTLake(t, written, nil, gates.DeltaExpect{})
	if len(ch.AddedData) != 1 || len(ch.AddedDeletes) != 0 {
		t.Fatalf("the delta: %+v", ch)
	}
	rec := l.reconcile(e)
	if rec.Status != gates.Pass || rec.LakeRows != 16 || deltaTPath(t, rec) != "delta" {
		t.Fatalf("gate 4: %s, %d lake rows (want pass, 16): %+v", rec.Status, rec.LakeRows, rec.Checks)
	}
	wantDetail(t, rec, deltaTManifestCheck, gates.Pass, "manifests: previous snapshot 15 live rows + 1 added in 1 new data file(s) − 0 deleted by 0 new delete file(s) = 16; the snapshot states 16 live")
	wantDetail(t, rec, deltaTRemoved, gates.Pass, "the load updated 0 and deleted 0 key(s); the new delete files remove 0 row(s) (re-read at their positions; the manifests state 0), 0 of them")
	wantDetail(t, rec, deltaTKeys, gates.Pass, "1 key(s) written, 0 of them duplicated among the rows added; looked up in the whole snapshot (1 look-up(s): ")
	// An insert the load counted as an update is a removal that is not
	// there.
	e.Delta = &gates.DeltaExpect{Updated: 1}
	wantStatus(t, l.reconcile(e), deltaTRemoved, gates.Fail)
}

// TestDeltaKeyColumnMissing: a key column the expectation names but the
// rows added do not have is an error of gate 4 naming the column, not a
// check made on another column.
func TestDeltaKeyColumnMissing(t *testing.T) {
	l, e, _ := deltaLake(t)
	e.Columns = append(append([]string{}, e.Columns...), "ghost")
	e.Types = append(append([]string{}, e.Types...), "long")
	e.Required = append(append([]bool{}, e.Required...), false)
	e.Keys = []string{"ghost"}
	_, err := gates.Reconcile(l.ctx, l.tbl, e)
	if err == nil || !strings.Contains(err.Error(), "the rows added have no key column ghost") {
		t.Fatalf("gate 4 with key ghost: %v", err)
	}
}
