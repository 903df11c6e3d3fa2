package gates_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/gates"
)

// deltaLake is a table loaded in two files (January, February), then
// changed by an upsert's delta commit: id 3 updated, id 100 inserted (both
// January, so the delta adds one data file and deletes one row of the
// January file; the February file is untouched).
func deltaLake(t *testing.T) (*lake, gates.Expectation, sink.SnapshotChange) {
	t.Helper()
	l := loadLake(t, tRows(), "L1")
	var feb []tRow
	for i := int64(11); i <= 15; i++ {
		feb = append(feb, tRow{id: i, name: strp("feb"), amount: 500 * i, score: 1, day: time.Date(2024, 2, int(i), 0, 0, 0, 0, time.UTC)})
	}
	l.commitRows(feb, sink.CommitProps{LoadID: "L1b", RunID: "run-L1b"})
	changed := []tRow{
		{id: 3, name: strp("item-03 v2"), amount: 99999, score: 7, day: time.Date(2024, 1, 6, 0, 0, 0, 0, time.UTC)},
		{id: 100, name: strp("new"), amount: 123, score: 2, day: time.Date(2024, 1, 30, 0, 0, 0, 0, time.UTC)},
	}
	rec := record(l.tbl.Schema(), changed)
	defer rec.Release()
	staged, err := l.tbl.Stage(l.ctx, func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) })
	if err != nil {
		t.Fatal(err)
	}
	kb := array.NewInt64Builder(memory.DefaultAllocator)
	kb.Append(3)
	ka := kb.NewArray()
	kb.Release()
	keys := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{l.tbl.Schema().Field(0)}, nil), []arrow.Array{ka}, 1)
	ka.Release()
	defer keys.Release()
	c, err := l.tbl.CommitDelta(l.ctx, staged, sink.CommitProps{LoadID: "L2", RunID: "run-L2"}, sink.Keys{Columns: []string{"id"}, Batches: []arrow.RecordBatch{keys}})
	if err != nil {
		t.Fatal(err)
	}
	e := expectFor(changed, "L2")
	e.Mode, e.SnapshotID, e.Min, e.Max = plan.ModeUpsert, c.SnapshotID, nil, nil
	e.Delta = &gates.DeltaExpect{Updated: 1}
	ch, err := l.tbl.SnapshotChange(l.ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.AddedData) != 1 || len(ch.AddedDeletes) != 1 || ch.KeptData != 2 {
		t.Fatalf("the delta: %+v", ch)
	}
	return l, e, ch
}

// rewriteBehind rewrites a data file in place (same path, Lima's schema
// with its field ids) after fn changed its rows: a change no manifest
// records.
func (l *lake) rewriteBehind(path string, fn func([]tRow) []tRow) {
	l.t.Helper()
	p := strings.TrimPrefix(path, "file://")
	f, err := os.Open(p)
	if err != nil {
		l.t.Fatal(err)
	}
	pr, err := file.NewParquetReader(f)
	if err != nil {
		l.t.Fatal(err)
	}
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		l.t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		l.t.Fatal(err)
	}
	var rows []tRow
	tr := array.NewTableReader(tbl, 1024)
	for tr.Next() {
		rec := tr.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			r := tRow{id: rec.Column(0).(*array.Int64).Value(i), amount: int64(rec.Column(2).(*array.Decimal128).Value(i).LowBits()),
				score: rec.Column(3).(*array.Float64).Value(i), day: rec.Column(4).(*array.Date32).Value(i).ToTime()}
			if n := rec.Column(1); !n.IsNull(i) {
				r.name = strp(n.(*array.String).Value(i))
			}
			rows = append(rows, r)
		}
	}
	tr.Release()
	tbl.Release()
	pr.Close()
	f.Close()
	rec := record(l.tbl.Schema(), fn(rows))
	defer rec.Release()
	out, err := os.Create(p)
	if err != nil {
		l.t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(l.tbl.Schema(), out, parquet.NewWriterProperties(), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		l.t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		l.t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		l.t.Fatal(err)
	}
}

func setAmount(id, amount int64) func([]tRow) []tRow {
	return func(rows []tRow) []tRow {
		for i := range rows {
			if rows[i].id == id {
				rows[i].amount = amount
			}
		}
		return rows
	}
}

// februaryFile is the data file of the February partition (the delta did
// not touch it).
func februaryFile(t *testing.T, l *lake) string {
	t.Helper()
	tbl, err := l.tbl.Load(l.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	root := strings.TrimPrefix(tbl.Location(), "file://")
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") && strings.Contains(p, "2024-02") && !strings.Contains(p, "deletes") {
			found = append(found, p)
		}
		return nil
	})
	if len(found) != 1 {
		t.Fatalf("February data files: %q", found)
	}
	return found[0]
}

// TestDeltaGate4Untouched is the control: the delta is proved from what
// it changed, every check named, and what was not re-read is said.
func TestDeltaGate4Untouched(t *testing.T) {
	l, e, _ := deltaLake(t)
	rec := l.reconcile(e)
	if rec.Status != gates.Pass || rec.LakeRows != 16 {
		t.Fatalf("gate 4: %s, %d lake rows (want 16): %+v", rec.Status, rec.LakeRows, rec.Checks)
	}
	for _, n := range []string{"delta: live rows from the manifests", "row count", "sum(amount) of the rows added", "delta: rows removed",
		"unique key (id) of the changed keys", "delta: rows removed are the changed keys' old rows", "sample rows side by side"} {
		wantStatus(t, rec, n, gates.Pass)
	}
	wantStatus(t, rec, gates.NotChecked+"the rows the change did not touch", gates.Skip)
	for _, f := range rec.Checks {
		if f.Name == "metadata row count" || f.Name == "unique key (id)" || strings.HasPrefix(f.Name, "range of") {
			t.Fatalf("a whole-table check the delta path does not make is claimed: %+v", f)
		}
	}
}

// TestDeltaGate4CatchesTamperInTheFileItWrote: a value changed behind
// Lima's back in the data file the delta wrote is caught — the rows added
// are re-read whole and their sums compared with what the load accepted.
func TestDeltaGate4CatchesTamperInTheFileItWrote(t *testing.T) {
	l, e, ch := deltaLake(t)
	l.rewriteBehind(ch.AddedData[0].Path, setAmount(100, 124))
	rec := l.reconcile(e)
	wantStatus(t, rec, "sum(amount) of the rows added", gates.Fail)
	wantStatus(t, rec, "sample rows side by side", gates.Pass) // id 3 is sampled, 100 is not: the sum sees it
}

// TestDeltaGate4CatchesADuplicatedChangedKey: an old row of the file the
// delta deleted from rewritten to carry a changed key (5 → 3) is caught:
// every changed key is looked up in the whole snapshot and found twice.
func TestDeltaGate4CatchesADuplicatedChangedKey(t *testing.T) {
	l, e, ch := deltaLake(t)
	l.rewriteBehind(ch.AddedDeletes[0].Target, moveKey(5, 3))
	wantStatus(t, l.reconcile(e), "unique key (id) of the changed keys", gates.Fail)
	// 5 → 100 (outside the file's manifest bounds 1…10) is caught too, but
	// only because the file is read for key 3 anyway: see the next test.
	l, e, ch = deltaLake(t)
	l.rewriteBehind(ch.AddedDeletes[0].Target, moveKey(5, 100))
	wantStatus(t, l.reconcile(e), "unique key (id) of the changed keys", gates.Fail)
}

func moveKey(from, to int64) func([]tRow) []tRow {
	return func(rows []tRow) []tRow {
		for i := range rows {
			if rows[i].id == from {
				rows[i].id = to
			}
		}
		return rows
	}
}

// TestDeltaGate4DoesNotSeeUntouchedRows says what the delta check cannot
// catch, so the report never claims it: a value changed behind Lima's back
// in a row the change did not touch — in the untouched February file, or
// in an unchanged row of the January file the delta deleted from — and a
// key of the untouched file moved onto a changed key outside that file's
// manifest bounds (12 → 100: its bounds say 11…15, so it is no candidate
// for 100 and is never opened). Gate 4 passes and its "not checked"
// finding names those rows; a full re-read (mode full) sees all three.
func TestDeltaGate4DoesNotSeeUntouchedRows(t *testing.T) {
	for name, tamper := range map[string]func(*lake, sink.SnapshotChange){
		"untouched file": func(l *lake, _ sink.SnapshotChange) { l.rewriteBehind(februaryFile(t, l), setAmount(12, 1)) },
		"unchanged row of the touched file": func(l *lake, ch sink.SnapshotChange) {
			l.rewriteBehind(ch.AddedDeletes[0].Target, setAmount(5, 1))
		},
		"key of the untouched file moved outside its bounds": func(l *lake, _ sink.SnapshotChange) {
			l.rewriteBehind(februaryFile(t, l), moveKey(12, 100))
		},
	} {
		t.Run(name, func(t *testing.T) {
			l, e, ch := deltaLake(t)
			tamper(l, ch)
			rec := l.reconcile(e)
			if rec.Status != gates.Pass {
				t.Fatalf("the delta check now sees this tamper (update the report's claims): %s %+v", rec.Status, rec.Checks)
			}
			wantStatus(t, rec, gates.NotChecked+"the rows the change did not touch", gates.Skip)
		})
	}
}
