package gates_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/gates"
)

const (
	deltaTRemoved = "delta: rows removed"
	deltaTOldRows = "delta: rows removed are the changed keys' old rows"
	deltaTKeys    = "unique key (id) of the changed keys"
	deltaTRows    = "row count"
)

func wantDetail(t *testing.T, rec *gates.Reconciliation, name, status, detail string) {
	t.Helper()
	f := finding(t, rec, name)
	if f.Status != status || !strings.Contains(f.Detail, detail) {
		t.Errorf("check %q: %s %q\nwant %s with %q", name, f.Status, f.Detail, status, detail)
	}
}

// TestDeltaCountsControl: every count the delta proof states on the
// untouched upsert of deltaLake, counted by hand: 2 rows written (ids 3
// and 100), 1 row removed (id 3's old row), one look-up of the 2 keys
// written, no deleted key; the kept files hold 10 + 5 = 15 rows.
func TestDeltaCountsControl(t *testing.T) {
	l, e, _ := deltaLake(t)
	rec := l.reconcile(e)
	wantDetail(t, rec, deltaTRows, gates.Pass, "this load accepted 2 rows; the snapshot's 1 new data file(s) hold 2 live rows (re-read)")
	wantDetail(t, rec, deltaTRemoved, gates.Pass, "the load updated 1 and deleted 0 key(s); the new delete files remove 1 row(s) (re-read at their positions; the manifests state 1), 0 of them deleted already by an earlier delete file")
	wantDetail(t, rec, deltaTKeys, gates.Pass, "2 key(s) written, 0 of them duplicated among the rows added; looked up in the whole snapshot (1 look-up(s): ")
	wantDetail(t, rec, deltaTKeys, gates.Pass, "): 0 not live exactly once, 0 live but not as the row written; 0 deleted key(s), 0 still live")
	wantDetail(t, rec, deltaTOldRows, gates.Pass, "of the 1 distinct key(s) whose rows were removed (0 of them more than once), 1 were rewritten by this load (it updated 1) and 0 are deleted keys (it deleted 0)")
	wantDetail(t, rec, gates.NotChecked+"the rows the change did not touch", gates.Skip, "the 2 data file(s) kept from the previous snapshot (15 rows stated) were not re-read")
	// The sums of the rows added, each column summed: id 3 + 100, amount
	// 999.99 + 1.23, score 7 + 2 (expectFor's figures).
	for c, want := range map[string]string{"id": "103", "amount": "1001.22", "score": "9"} {
		wantDetail(t, rec, "sum("+c+") of the rows added", gates.Pass, "accepted "+want+", re-read from the new data files "+want)
		if ct, ok := rec.ControlTotals[c]; !ok || ct.Source != want {
			t.Errorf("control total of %s: %+v, want source %s", c, ct, want)
		}
	}
	for _, n := range []string{"no nulls in id (rows added)", "no nulls in name (rows added)"} {
		wantStatus(t, rec, n, gates.Pass)
	}
	// A sum asked for a column the table does not have is no check.
	e.Sums["ghost"] = "1"
	for _, f := range l.reconcile(e).Checks {
		if strings.Contains(f.Name, "ghost") {
			t.Fatalf("a check of a column that is not there: %+v", f)
		}
	}
}

// TestDeltaRowCountOffByOne: the rows added must be exactly the rows the
// load accepted, one more or one fewer fails.
func TestDeltaRowCountOffByOne(t *testing.T) {
	l, e, _ := deltaLake(t)
	for _, n := range []int64{1, 3} {
		e.Rows = n
		rec := l.reconcile(e)
		wantStatus(t, rec, deltaTRows, gates.Fail)
		deltaTOthersPass(t, rec, deltaTRows)
	}
}

// TestDeltaSourceTotalsBesideTheRowsAdded: the source's own count is
// checked on the delta path too.
func TestDeltaSourceTotalsBesideTheRowsAdded(t *testing.T) {
	l, e, _ := deltaLake(t)
	e.SourceTotals = &run.SourceTotals{Unit: "orders", Rows: 2, RowsRead: 2}
	wantStatus(t, l.reconcile(e), "source count", gates.Pass)
	e.SourceTotals = &run.SourceTotals{Unit: "orders", Rows: 3, RowsRead: 2}
	wantStatus(t, l.reconcile(e), "source count", gates.Fail)
}

// deltaTUpdateDelete: deltaLake's table, upserted: id 3 updated, id 100
// inserted, id 7 deleted (2 rows written, 2 removed: 15 + 2 − 2 = 15).
func deltaTUpdateDelete(t *testing.T) (*lake, gates.Expectation) {
	l, e, ch := deltaTLake(t, []tRow{
		{id: 3, name: strp("item-03 v2"), amount: 99999, score: 7, day: time.Date(2024, 1, 6, 0, 0, 0, 0, time.UTC)},
		{id: 100, name: strp("new"), amount: 123, score: 2, day: time.Date(2024, 1, 30, 0, 0, 0, 0, time.UTC)},
	}, []int64{3, 7}, gates.DeltaExpect{Updated: 1, Deleted: 1})
	if len(ch.AddedData) != 1 || len(ch.AddedDeletes) != 1 || ch.AddedDeletes[0].Records != 2 || ch.Current.Live() != 15 {
		t.Fatalf("the delta: %+v", ch)
	}
	return l, e
}

// TestDeltaUpdateAndDelete: an upsert that updated one key and deleted
// another is proved, each count stated; the expected counts one off in
// either direction fail both removal checks.
func TestDeltaUpdateAndDelete(t *testing.T) {
	l, e := deltaTUpdateDelete(t)
	rec := l.reconcile(e)
	if rec.Status != gates.Pass || rec.LakeRows != 15 {
		t.Fatalf("gate 4: %s, %d lake rows (want pass, 15): %+v", rec.Status, rec.LakeRows, rec.Checks)
	}
	wantDetail(t, rec, deltaTRemoved, gates.Pass, "the load updated 1 and deleted 1 key(s); the new delete files remove 2 row(s) (re-read at their positions; the manifests state 2), 0 of them")
	wantDetail(t, rec, deltaTOldRows, gates.Pass, "of the 2 distinct key(s) whose rows were removed (0 of them more than once), 1 were rewritten by this load (it updated 1) and 1 are deleted keys (it deleted 1)")
	wantDetail(t, rec, deltaTKeys, gates.Pass, "2 key(s) written, 0 of them duplicated among the rows added; looked up in the whole snapshot (2 look-up(s): ")
	wantDetail(t, rec, deltaTKeys, gates.Pass, "): 0 not live exactly once, 0 live but not as the row written; 1 deleted key(s), 0 still live")
	for _, d := range []gates.DeltaExpect{{Updated: 0, Deleted: 1}, {Updated: 2, Deleted: 1}, {Updated: 1, Deleted: 0}, {Updated: 1, Deleted: 2}} {
		e2 := e
		e2.Delta = &d
		rec := l.reconcile(e2)
		wantStatus(t, rec, deltaTRemoved, gates.Fail)
		wantStatus(t, rec, deltaTOldRows, gates.Fail)
		deltaTOthersPass(t, rec, deltaTRemoved, deltaTOldRows)
	}
	// The same counts in the other roles: 2 removed, but both as updates
	// or both as deletes, fails only the second check.
	for _, d := range []gates.DeltaExpect{{Updated: 2, Deleted: 0}, {Updated: 0, Deleted: 2}} {
		e2 := e
		e2.Delta = &d
		rec := l.reconcile(e2)
		wantStatus(t, rec, deltaTRemoved, gates.Pass)
		wantStatus(t, rec, deltaTOldRows, gates.Fail)
	}
}

// TestDeltaDeleteOnly: an upsert that only deleted (no row written, id 7
// removed) is proved with one look-up (the deleted key's) and no sample
// check.
func TestDeltaDeleteOnly(t *testing.T) {
	l, e, ch := deltaTLake(t, nil, []int64{7}, gates.DeltaExpect{Deleted: 1})
	if len(ch.AddedData) != 0 || len(ch.AddedDeletes) != 1 {
		t.Fatalf("the delta: %+v", ch)
	}
	rec := l.reconcile(e)
	if rec.Status != gates.Pass || rec.LakeRows != 14 {
		t.Fatalf("gate 4: %s, %d lake rows (want pass, 14): %+v", rec.Status, rec.LakeRows, rec.Checks)
	}
	wantDetail(t, rec, deltaTKeys, gates.Pass, "0 key(s) written, 0 of them duplicated among the rows added; looked up in the whole snapshot (1 look-up(s): ")
	wantDetail(t, rec, deltaTKeys, gates.Pass, "; 1 deleted key(s), 0 still live")
	wantDetail(t, rec, deltaTOldRows, gates.Pass, "of the 1 distinct key(s) whose rows were removed (0 of them more than once), 0 were rewritten by this load (it updated 0) and 1 are deleted keys (it deleted 1)")
	for _, f := range rec.Checks {
		if f.Name == "sample rows side by side" {
			t.Fatalf("a sample check without samples: %+v", f)
		}
	}
}

// TestDeltaTamperDeletedKeyStillLive: a row of the file the delta deleted
// from rewritten behind Lima's back to carry the deleted key (5 → 7): the
// deleted key is looked up and found live once.
func TestDeltaTamperDeletedKeyStillLive(t *testing.T) {
	l, e := deltaTUpdateDelete(t)
	ch, err := l.tbl.SnapshotChange(l.ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	l.rewriteBehind(ch.AddedDeletes[0].Target, moveKey(5, 7))
	rec := l.reconcile(e)
	wantDetail(t, rec, deltaTKeys, gates.Fail, "): 0 not live exactly once, 0 live but not as the row written; 1 deleted key(s), 1 still live")
	deltaTOthersPass(t, rec, deltaTKeys)
}

// TestDeltaTamperKeyRemovedTwice: a second row of key 3 appended behind
// Lima's back before the upsert: the upsert removes both, one key's rows
// removed twice, more rows than it updated.
func TestDeltaTamperKeyRemovedTwice(t *testing.T) {
	l := loadLake(t, tRows(), "L1")
	l.appendBehind([]tRow{{id: 3, name: strp("behind"), amount: 1, day: time.Date(2024, 1, 3, 0, 0, 0, 0, time.UTC)}}, nil)
	written := []tRow{{id: 3, name: strp("item-03 v2"), amount: 99999, score: 7, day: time.Date(2024, 1, 6, 0, 0, 0, 0, time.UTC)}}
	c := l.deltaTCommit(written, []int64{3}, "L2")
	e := expectFor(written, "L2")
	e.Mode, e.SnapshotID, e.Min, e.Max = "upsert", c.SnapshotID, nil, nil
	e.Delta = &gates.DeltaExpect{Updated: 1}
	rec := l.reconcile(e)
	wantDetail(t, rec, deltaTRemoved, gates.Fail, "the load updated 1 and deleted 0 key(s); the new delete files remove 2 row(s) (re-read at their positions; the manifests state 2)")
	wantDetail(t, rec, deltaTOldRows, gates.Fail, "of the 1 distinct key(s) whose rows were removed (1 of them more than once), 1 were rewritten by this load (it updated 1) and 0 are deleted keys (it deleted 0)")
	deltaTOthersPass(t, rec, deltaTRemoved, deltaTOldRows)
}

// TestDeltaTamperNewRowMovedOntoAnOldKey: an upsert updates id 3
// (January) and inserts id 100 (March: a data file of its own, key bounds
// 100…100); the March file is rewritten behind Lima's back to carry key 1
// instead — an old live key outside that file's stated bounds, so the
// look-up of 1 opens only the January files: key 1 is live once, but as
// the old row, not the one written.
func TestDeltaTamperNewRowMovedOntoAnOldKey(t *testing.T) {
	l, e, ch := deltaTLake(t, []tRow{
		{id: 3, name: strp("item-03 v2"), amount: 99999, score: 7, day: time.Date(2024, 1, 6, 0, 0, 0, 0, time.UTC)},
		{id: 100, name: strp("new"), amount: 123, score: 2, day: time.Date(2024, 3, 30, 0, 0, 0, 0, time.UTC)},
	}, []int64{3}, gates.DeltaExpect{Updated: 1})
	march := ""
	for _, f := range ch.AddedData {
		if strings.Contains(f.Path, "2024-03") {
			march = f.Path
		}
	}
	if len(ch.AddedData) != 2 || march == "" {
		t.Fatalf("the delta: %+v", ch)
	}
	if rec := l.reconcile(e); rec.Status != gates.Pass {
		t.Fatalf("before the tamper: %s %+v", rec.Status, rec.Checks)
	}
	l.rewriteBehind(march, moveKey(100, 1))
	rec := l.reconcile(e)
	wantDetail(t, rec, deltaTKeys, gates.Fail, "2 key(s) written, 0 of them duplicated among the rows added; looked up in the whole snapshot (1 look-up(s): ")
	wantDetail(t, rec, deltaTKeys, gates.Fail, "): 0 not live exactly once, 1 live but not as the row written; 0 deleted key(s), 0 still live")
	wantStatus(t, rec, "sum(id) of the rows added", gates.Fail) // 3 + 1, not 3 + 100
	deltaTOthersPass(t, rec, deltaTKeys, "sum(id) of the rows added")
}

// TestDeltaCompositeKeyTexts: a two-column key (id, name) whose columns'
// texts run together alike — (100, "new") and (10, "0new") — are two
// keys, each live once.
func TestDeltaCompositeKeyTexts(t *testing.T) {
	written := []tRow{
		{id: 3, name: strp("item-03"), amount: 99999, score: 7, day: time.Date(2024, 1, 6, 0, 0, 0, 0, time.UTC)},
		{id: 100, name: strp("new"), amount: 123, score: 2, day: time.Date(2024, 1, 30, 0, 0, 0, 0, time.UTC)},
		{id: 10, name: strp("0new"), amount: 5, score: 1, day: time.Date(2024, 1, 29, 0, 0, 0, 0, time.UTC)},
	}
	l, e, _ := deltaTLake(t, written, []int64{3}, gates.DeltaExpect{Updated: 1})
	e.Keys = []string{"id", "name"}
	rec := l.reconcile(e)
	wantDetail(t, rec, "unique key (id, name) of the changed keys", gates.Pass, "3 key(s) written, 0 of them duplicated")
	wantDetail(t, rec, "unique key (id, name) of the changed keys", gates.Pass, "): 0 not live exactly once")
	if rec.Status != gates.Pass {
		t.Fatalf("gate 4: %s %+v", rec.Status, rec.Checks)
	}
}
