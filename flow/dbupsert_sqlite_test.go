package flow_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/flow"
)

// TestUpsertDeletePeriodAndFullRefresh (SQLite, no server needed): with
// detect_deletes: 24h the keys are compared on the first run and not again
// within the period (the report says when next); an id watermark with a
// count lookback re-reads the last ids; --full-refresh replaces the table
// with the source.
func TestUpsertDeletePeriodAndFullRefresh(t *testing.T) {
	file := filepath.Join(t.TempDir(), "erp.db")
	db, err := sql.Open("sqlite", file)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	dbExec(t, db, `CREATE TABLE items (id INTEGER PRIMARY KEY, qty INTEGER NOT NULL)`)
	for i := 1; i <= 20; i++ {
		dbExec(t, db, `INSERT INTO items VALUES (?, ?)`, i, i*10)
	}
	ws, p := workspace(t, nil, `schema_version: 1
platform: {prefix: upslite}
sources:
  erp: {kind: sqlite, path: `+file+`}
tables:
  items:
    source: {name: erp, table: items}
    load: {mode: upsert, keys: [id], watermark: id, lookback: 5, detect_deletes: 24h}
`)
	out := runOnce(t, ws, p, flow.RunOptions{})
	tr := out.Result.Tables[0]
	balanced(t, tr)
	if u := tr.Upsert; u == nil || u.Inserted != 20 || !u.DeletesChecked || u.Deleted != 0 || tr.WatermarkAfter != "20" {
		t.Fatalf("first run: %+v, watermark %s", tr.Upsert, tr.WatermarkAfter)
	}
	// Delete 3 and 4, add 21; within the period the keys are not compared,
	// so 3 and 4 stay in the lake. The lookback of 5 ids re-reads 15..21:
	// 15..20 equal the lake's rows (unchanged_in_lookback, not updated).
	dbExec(t, db, `DELETE FROM items WHERE id IN (3, 4)`)
	dbExec(t, db, `INSERT INTO items VALUES (21, 210)`)
	out = runOnce(t, ws, p, flow.RunOptions{})
	tr = out.Result.Tables[0]
	balanced(t, tr)
	u := tr.Upsert
	if u == nil || u.ReadFrom != "15" || tr.RowsRead != 7 || u.Inserted != 1 || u.Updated != 0 || tr.SkippedBy[run.SkipUnchanged] != 6 || u.DeletesChecked || !strings.Contains(u.DeleteNote, "next comparison after") {
		t.Fatalf("second run: read %d, skipped %v, %+v", tr.RowsRead, tr.SkippedBy, u)
	}
	rep := tableReport(t, out.Report, "items")
	if rep.Reconciliation == "fail" || rep.Upsert == nil || rep.Upsert.DeleteNote == "" {
		t.Fatalf("report: %s %+v", rep.Reconciliation, rep.Upsert)
	}
	if n := lakeCount(t, ws, p, tr); n != 21 {
		t.Fatalf("lake holds %d rows, want 21 (20 + 21, deletes not yet detected)", n)
	}
	// A full refresh replaces the table with what the source holds now.
	out = runOnce(t, ws, p, flow.RunOptions{FullRefresh: true})
	tr = out.Result.Tables[0]
	balanced(t, tr)
	var want int64
	if err := db.QueryRow(`SELECT count(*) FROM items`).Scan(&want); err != nil {
		t.Fatal(err)
	}
	if n := lakeCount(t, ws, p, tr); n != want || tr.Upsert == nil || tr.Upsert.Inserted != want {
		t.Fatalf("after a full refresh the lake holds %d rows (upsert %+v), the source %d", n, tr.Upsert, want)
	}
}

// lakeCount counts the rows of the table's current snapshot through the
// sink's Scanner (deleted rows excluded).
func lakeCount(t *testing.T, ws flow.Workspace, p *plan.Plan, tr *run.TableResult) int64 {
	t.Helper()
	it, err := openLakeTable(t, ws, p, tr).(sink.Scanner).Scan(context.Background(), 0, []string{"id"})
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		n += rec.NumRows()
		rec.Release()
	}
	return n
}

// TestUpsertSoftDelete: rows the source marks deleted (soft_delete) are
// removed from the lake and skipped (counted), unmarked again they come
// back, and the lake's keys equal the source's unmarked keys.
func TestUpsertSoftDelete(t *testing.T) {
	file := filepath.Join(t.TempDir(), "erp.db")
	db, err := sql.Open("sqlite", file)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	dbExec(t, db, `CREATE TABLE items (id INTEGER PRIMARY KEY, qty INTEGER NOT NULL, is_deleted BOOLEAN NOT NULL, version INTEGER NOT NULL)`)
	for i := 1; i <= 10; i++ {
		dbExec(t, db, `INSERT INTO items VALUES (?, ?, ?, ?)`, i, i*10, i == 4 || i == 7, i)
	}
	ws, p := workspace(t, nil, `schema_version: 1
platform: {prefix: upsoft}
sources:
  erp: {kind: sqlite, path: `+file+`}
tables:
  items:
    source: {name: erp, table: items}
    load: {mode: upsert, keys: [id], watermark: version, soft_delete: is_deleted, detect_deletes: every_run}
`)
	live := func() map[int64]bool {
		rows, err := db.Query(`SELECT id FROM items WHERE NOT is_deleted`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[int64]bool{}
		for rows.Next() {
			var id int64
			rows.Scan(&id)
			out[id] = true
		}
		return out
	}
	lakeIDs := func(tr *run.TableResult) map[int64]bool {
		it, err := openLakeTable(t, ws, p, tr).(sink.Scanner).Scan(context.Background(), 0, []string{"id"})
		if err != nil {
			t.Fatal(err)
		}
		out := map[int64]bool{}
		for rec, err := range it {
			if err != nil {
				t.Fatal(err)
			}
			ids := rec.Column(0).(*array.Int64)
			for r := 0; r < ids.Len(); r++ {
				out[ids.Value(r)] = true
			}
			rec.Release()
		}
		return out
	}
	out := runOnce(t, ws, p, flow.RunOptions{})
	tr := out.Result.Tables[0]
	balanced(t, tr)
	if tr.RowsLoaded != 8 || tr.SkippedBy[run.SkipSoftDeleted] != 2 || tr.Upsert.Inserted != 8 || tr.Upsert.SoftDeleted != 0 {
		t.Fatalf("first run: loaded %d skipped %v upsert %+v", tr.RowsLoaded, tr.SkippedBy, *tr.Upsert)
	}
	if got, want := lakeIDs(tr), live(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("lake %v, source's unmarked keys %v", got, want)
	}
	dbExec(t, db, `UPDATE items SET is_deleted = 1, version = 11 WHERE id = 2`)
	dbExec(t, db, `UPDATE items SET is_deleted = 0, version = 12 WHERE id = 4`)
	out = runOnce(t, ws, p, flow.RunOptions{})
	tr = out.Result.Tables[0]
	balanced(t, tr)
	// Read from version 10: 10 unchanged, 2 marked, 4 unmarked (new again).
	if u := tr.Upsert; u.SoftDeleted != 1 || u.Inserted != 1 || u.Updated != 0 || u.Deleted != 0 || tr.SkippedBy[run.SkipSoftDeleted] != 1 || tr.SkippedBy[run.SkipUnchanged] != 1 {
		t.Fatalf("second run: skipped %v upsert %+v", tr.SkippedBy, *u)
	}
	if got, want := lakeIDs(tr), live(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("lake %v, source's unmarked keys %v", got, want)
	}
	if f := check(t, tableReport(t, out.Report, "items"), "lake keys = source keys"); f.Status != "pass" {
		t.Fatalf("key equality: %+v", f)
	}
}
