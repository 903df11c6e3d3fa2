package gates_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/gates"
)

// deltaTReadParquet reads a local Parquet file whole.
func deltaTReadParquet(t *testing.T, path string) arrow.Table {
	t.Helper()
	f, err := os.Open(strings.TrimPrefix(path, "file://"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pr, err := file.NewParquetReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// deltaTPositions maps the ids of a data file to their row positions.
func deltaTPositions(t *testing.T, path string) map[int64]int64 {
	t.Helper()
	tbl := deltaTReadParquet(t, path)
	defer tbl.Release()
	out := map[int64]int64{}
	var at int64
	for _, c := range tbl.Column(0).Data().Chunks() {
		ids := c.(*array.Int64)
		for i := 0; i < ids.Len(); i++ {
			out[ids.Value(i)] = at
			at++
		}
	}
	return out
}

// deltaTRewriteDeletes rewrites a position delete file in place (same
// path, the columns file_path and pos) to delete the positions pos of
// data file target instead: a change no manifest records (its entry
// still states the old records and size).
func deltaTRewriteDeletes(t *testing.T, path, target string, pos ...int64) {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{{Name: "file_path", Type: arrow.BinaryTypes.String}, {Name: "pos", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, p := range pos {
		b.Field(0).(*array.StringBuilder).Append(target)
		b.Field(1).(*array.Int64Builder).Append(p)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	out, err := os.Create(strings.TrimPrefix(path, "file://"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(sc, out, parquet.NewWriterProperties(), pqarrow.NewArrowWriterProperties())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestDeltaTamperDeleteFileRemovesAnotherRow: the delete file the upsert
// wrote rewritten behind Lima's back to remove id 5's row instead of id
// 3's old row. The manifests still balance and one row is removed, but
// the row re-read at the deleted position is of a key the load did not
// change, and key 3 is live twice (its old row is back).
func TestDeltaTamperDeleteFileRemovesAnotherRow(t *testing.T) {
	l, e, ch := deltaLake(t)
	jan := ch.AddedDeletes[0].Target
	pos := deltaTPositions(t, jan)
	deltaTRewriteDeletes(t, ch.AddedDeletes[0].Path, jan, pos[5])
	rec := l.reconcile(e)
	wantDetail(t, rec, deltaTOldRows, gates.Fail, "of the 1 distinct key(s) whose rows were removed (0 of them more than once), 0 were rewritten by this load (it updated 1) and 1 are deleted keys (it deleted 0)")
	wantDetail(t, rec, deltaTKeys, gates.Fail, "): 1 not live exactly once, 0 live but not as the row written; 1 deleted key(s), 0 still live")
	wantStatus(t, rec, deltaTRemoved, gates.Pass)
	deltaTOthersPass(t, rec, deltaTOldRows, deltaTKeys)
}

// TestDeltaTamperRowDeletedTwice: two upserts (id 3 updated, then id 5);
// the first one's delete file is rewritten behind Lima's back to delete
// id 5's old row too. The second upsert's delete file then removes a row
// an earlier delete file removes already — the manifests' count drifts
// from the rows a reader reads — and only that is wrong.
func TestDeltaTamperRowDeletedTwice(t *testing.T) {
	l, _, ch1 := deltaLake(t)
	jan := ch1.AddedDeletes[0].Target
	written := []tRow{{id: 5, name: strp("item-05 v2"), amount: 5555, score: 3, day: time.Date(2024, 1, 10, 0, 0, 0, 0, time.UTC)}}
	c := l.deltaTCommit(written, []int64{5}, "L3")
	e := expectFor(written, "L3")
	e.Mode, e.SnapshotID, e.Min, e.Max = "upsert", c.SnapshotID, nil, nil
	e.Delta = &gates.DeltaExpect{Updated: 1}
	ch2, err := l.tbl.SnapshotChange(l.ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ch2.AddedDeletes) != 1 || ch2.AddedDeletes[0].Target != jan || len(ch2.RemovedDeletes) != 0 {
		t.Fatalf("the second delta: %+v", ch2)
	}
	rec := l.reconcile(e)
	if rec.Status != gates.Pass {
		t.Fatalf("before the tamper: %s %+v", rec.Status, rec.Checks)
	}
	pos := deltaTPositions(t, jan)
	deltaTRewriteDeletes(t, ch1.AddedDeletes[0].Path, jan, pos[3], pos[5])
	rec = l.reconcile(e)
	wantDetail(t, rec, deltaTRemoved, gates.Fail, "the load updated 1 and deleted 0 key(s); the new delete files remove 1 row(s) (re-read at their positions; the manifests state 1), 1 of them deleted already by an earlier delete file")
	deltaTOthersPass(t, rec, deltaTRemoved)
}

var _ sink.DeltaReader = deltaTManifests{}

// deltaTRewriteNullable is rewriteBehind with every column written
// optional, so a NULL reaches the file whatever the table's schema says.
func (l *lake) deltaTRewriteNullable(path string, fn func([]tRow) []tRow) {
	l.t.Helper()
	tbl := deltaTReadParquet(l.t, path)
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
	fields := slices.Clone(l.tbl.Schema().Fields())
	for i := range fields {
		fields[i].Nullable = true
	}
	sc := arrow.NewSchema(fields, nil)
	rec := record(sc, fn(rows))
	defer rec.Release()
	out, err := os.Create(strings.TrimPrefix(path, "file://"))
	if err != nil {
		l.t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(sc, out, parquet.NewWriterProperties(), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
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

// TestDeltaTamperRowsAddedRequiredNull: the new row of id 100 rewritten
// behind Lima's back with no name: the rows added are re-read and the
// required column's null is counted.
func TestDeltaTamperRowsAddedRequiredNull(t *testing.T) {
	l, e, ch := deltaLake(t)
	l.deltaTRewriteNullable(ch.AddedData[0].Path, func(rows []tRow) []tRow {
		for i := range rows {
			if rows[i].id == 100 {
				rows[i].name = nil
			}
		}
		return rows
	})
	rec := l.reconcile(e)
	wantDetail(t, rec, "no nulls in name (rows added)", gates.Fail, "1 null(s) in required column name among the 2 rows added")
	deltaTOthersPass(t, rec, "no nulls in name (rows added)")
}

// TestDeltaTamperSampledRowAdded: the sampled row (id 3) changed behind
// Lima's back in the file the delta wrote: its sample pair and the sum
// differ.
func TestDeltaTamperSampledRowAdded(t *testing.T) {
	l, e, ch := deltaLake(t)
	l.rewriteBehind(ch.AddedData[0].Path, setAmount(3, 1))
	rec := l.reconcile(e)
	wantDetail(t, rec, "sample rows side by side", gates.Fail, "0 of 1 sampled source rows found identical among the rows added")
	wantStatus(t, rec, "sum(amount) of the rows added", gates.Fail)
	deltaTOthersPass(t, rec, "sample rows side by side", "sum(amount) of the rows added")
}
