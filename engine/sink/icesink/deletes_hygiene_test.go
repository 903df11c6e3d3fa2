package icesink

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
)

// longSink opens a fresh sink.
func longSink(t *testing.T) *Sink {
	t.Helper()
	dir := t.TempDir()
	sk, err := Open(context.Background(), Options{CatalogPath: filepath.Join(dir, "catalog.db"), Warehouse: filepath.Join(dir, "lake")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sk.Close() })
	return sk
}

// longSpec is table ns.t of optional long columns (none required, so a
// key value may be null in the lake), unpartitioned.
func longSpec(cols ...string) sink.TableSpec {
	long, _ := plan.ParseType("long")
	spec := sink.TableSpec{Name: "t", Namespace: "ns"}
	for _, c := range cols {
		spec.Columns = append(spec.Columns, plan.Column{Name: c, Type: "long"})
		spec.Types = append(spec.Types, long)
		spec.Required = append(spec.Required, false)
	}
	return spec
}

// openSpec opens spec's table in sk.
func openSpec(t *testing.T, sk *Sink, spec sink.TableSpec) *Table {
	t.Helper()
	tb, err := sk.OpenTable(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	return tb.(*Table)
}

// openLong opens longSpec(cols...) in sk.
func openLong(t *testing.T, sk *Sink, cols ...string) *Table {
	t.Helper()
	return openSpec(t, sk, longSpec(cols...))
}

// longTable opens ns.t in a fresh sink.
func longTable(t *testing.T, cols ...string) *Table { return openLong(t, longSink(t), cols...) }

// null is a missing value in a row given to longRows.
const null = int64(-1 << 63)

// longRows is one batch of rows of sc (every column long or int); null stands
// for a null value.
func longRows(sc *arrow.Schema, rows ...[]int64) []arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, r := range rows {
		for c, v := range r {
			if v == null {
				b.Field(c).AppendNull()
			} else if ib, ok := b.Field(c).(*array.Int32Builder); ok {
				ib.Append(int32(v))
			} else {
				b.Field(c).(*array.Int64Builder).Append(v)
			}
		}
	}
	return []arrow.RecordBatch{b.NewRecordBatch()}
}

// ids is rows of one column.
func ids(vs ...int64) [][]int64 {
	out := make([][]int64, len(vs))
	for i, v := range vs {
		out[i] = []int64{v}
	}
	return out
}

// stageOne stages rows as one data file.
func stageOne(t *testing.T, tb *Table, rows ...[]int64) *staged {
	t.Helper()
	b := longRows(tb.Schema(), rows...)
	s, err := tb.Stage(context.Background(), func(yield func(arrow.RecordBatch, error) bool) { yield(b[0], nil) })
	if err != nil {
		t.Fatal(err)
	}
	if s.Files() != 1 || s.Rows() != int64(len(rows)) {
		t.Fatalf("staged %d rows in %d files, want %d rows in 1 file", s.Rows(), s.Files(), len(rows))
	}
	return s.(*staged)
}

// keysOf is a key set over cols.
func keysOf(cols []string, tuples ...[]int64) sink.Keys {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c, Type: arrow.PrimitiveTypes.Int64}
	}
	return sink.Keys{Columns: cols, Batches: longRows(arrow.NewSchema(fields, nil), tuples...)}
}

// tableRows reads the current snapshot back, each row as "v,v,…" (null:
// "-"), sorted.
func tableRows(t *testing.T, tb *Table) []string {
	t.Helper()
	it, err := tb.Scan(context.Background(), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		for r := 0; r < int(rec.NumRows()); r++ {
			var vs []string
			for c := 0; c < int(rec.NumCols()); c++ {
				if col := rec.Column(c); col.IsNull(r) {
					vs = append(vs, "-")
				} else {
					vs = append(vs, col.ValueStr(r))
				}
			}
			out = append(out, strings.Join(vs, ","))
		}
		rec.Release()
	}
	slices.Sort(out)
	return out
}

func wantRows(t *testing.T, tb *Table, want ...string) {
	t.Helper()
	slices.Sort(want)
	if got := tableRows(t, tb); !slices.Equal(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
}

// TestDeltaDeletesEachLiveRowOnce: a key whose row was updated before is
// deleted in its newest data file only — the position an earlier delta
// deleted is not deleted again — and the manifests' counts stay those of
// the files written. A repeated delta reports its own deletes only. Once a
// data file is gone, the delete files pointing at it are dangling (dead).
func TestDeltaDeletesEachLiveRowOnce(t *testing.T) {
	ctx := context.Background()
	tb := longTable(t, "id")
	keys := func(vs ...int64) sink.Keys { return keysOf([]string{"id"}, ids(vs...)...) }
	if _, err := tb.Commit(ctx, stageOne(t, tb, ids(1, 2, 3, 4, 5)...), sink.CommitProps{LoadID: "base"}); err != nil {
		t.Fatal(err)
	}
	tbl, _ := tb.Load(ctx)
	fs, _ := tbl.FS(ctx)
	data, _, err := liveFiles(fs, tbl.CurrentSnapshot())
	if err != nil || len(data) != 1 {
		t.Fatalf("base: %d data files (%v)", len(data), err)
	}
	f1 := data[0]

	// A: update 2 (its row in f1 deleted, a new one in f2).
	c, err := tb.CommitDelta(ctx, stageOne(t, tb, ids(2)...), sink.CommitProps{LoadID: "A"}, keys(2))
	if err != nil || c.Deleted != 1 {
		t.Fatalf("delta A: %+v %v, want 1 row deleted", c, err)
	}
	// B: update 2 again and delete 4: the live 2 is the one in f2; 2's old
	// position in f1 is already deleted.
	c, err = tb.CommitDelta(ctx, stageOne(t, tb, ids(2)...), sink.CommitProps{LoadID: "B"}, keys(2, 4))
	if err != nil || c.Deleted != 2 || c.AlreadyCommitted {
		t.Fatalf("delta B: %+v %v, want 2 rows deleted", c, err)
	}
	wantRows(t, tb, "1", "2", "3", "5")
	// Files: f1 (5 rows), f2 and f3 (1 row each); delete files: A's on f1
	// (1 record), B's on f1 (position of 4) and on f2 (1 record each).
	m, err := tb.MetaRows(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := (sink.MetaRows{SnapshotID: m.SnapshotID, DataFiles: 3, DataRows: 7, DeleteFiles: 3, DeleteRecords: 3}); m != want || m.Live() != 4 {
		t.Fatalf("metadata %+v, want %+v (4 live rows)", m, want)
	}

	// B again: found, and its deletes are B's own (A's are not counted).
	st := stageOne(t, tb, ids(2)...)
	c, err = tb.CommitDelta(ctx, st, sink.CommitProps{LoadID: "B"}, keys(2, 4))
	if err != nil || !c.AlreadyCommitted || c.Deleted != 2 {
		t.Fatalf("delta B again: %+v %v, want already committed with 2 rows deleted", c, err)
	}
	_ = st.Discard(ctx)

	// f1 rewritten (what a compaction does): the two delete files on f1
	// apply to no live file any more.
	nf := stageOne(t, tb, ids(1, 3, 5)...)
	tbl, _ = tb.Load(ctx)
	tx := tbl.NewTransaction()
	if err := tx.ReplaceDataFilesWithDataFiles(ctx, []iceberg.DataFile{f1}, nf.files, iceberg.Properties{sink.PropLoadID: "rewrite"}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	wantRows(t, tb, "1", "2", "3", "5")
	m, err = tb.MetaRows(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := (sink.MetaRows{SnapshotID: m.SnapshotID, DataFiles: 3, DataRows: 5, DeleteFiles: 3, DeleteRecords: 3, DanglingDeleteFiles: 2}); m != want {
		t.Fatalf("after the rewrite: metadata %+v, want %+v", m, want)
	}
	tbl, _ = tb.Load(ctx)
	dead, err := DeadDeletes(ctx, tbl, tbl.CurrentSnapshot(), nil)
	if err != nil || len(dead) != 2 {
		t.Fatalf("dead deletes: %d (%v), want the 2 on the rewritten file", len(dead), err)
	}
	for _, d := range dead {
		if refs, err := DeleteTargets(ctx, tbl, d); err != nil || !slices.Equal(refs, []string{f1.FilePath()}) {
			t.Fatalf("targets %v (%v), want [%s]", refs, err, f1.FilePath())
		}
	}
}

// TestDeltaDeletesExactlyItsKeys: a delta deletes the rows whose whole key
// is in the key set: not a row whose key is null, not a row whose
// composite key spells the same digits split elsewhere.
func TestDeltaDeletesExactlyItsKeys(t *testing.T) {
	ctx := context.Background()
	t.Run("one column, a null key in the lake", func(t *testing.T) {
		tb := longTable(t, "id")
		if _, err := tb.Commit(ctx, stageOne(t, tb, ids(1, 2, null, 3)...), sink.CommitProps{LoadID: "base"}); err != nil {
			t.Fatal(err)
		}
		c, err := tb.CommitDelta(ctx, stageOne(t, tb, ids(7)...), sink.CommitProps{LoadID: "d"}, keysOf([]string{"id"}, ids(2, 3)...))
		if err != nil || c.Deleted != 2 {
			t.Fatalf("delta: %+v %v, want 2 rows deleted", c, err)
		}
		wantRows(t, tb, "1", "-", "7")
	})
	t.Run("two columns", func(t *testing.T) {
		tb := longTable(t, "a", "b")
		base := [][]int64{{1, 23}, {12, 3}, {1, 2}, {2, 3}, {123, null}}
		if _, err := tb.Commit(ctx, stageOne(t, tb, base...), sink.CommitProps{LoadID: "base"}); err != nil {
			t.Fatal(err)
		}
		c, err := tb.CommitDelta(ctx, stageOne(t, tb, []int64{1, 23}), sink.CommitProps{LoadID: "d"},
			keysOf([]string{"a", "b"}, []int64{1, 23}, []int64{2, 3}, []int64{9, 9}))
		if err != nil || c.Deleted != 2 {
			t.Fatalf("delta: %+v %v, want 2 rows deleted", c, err)
		}
		wantRows(t, tb, "1,23", "12,3", "1,2", "123,-")
	})
}

// TestFileScopedTarget: a position delete file names its one data file in
// referenced_data_file, or by equal file_path bounds; anything else names
// none.
func TestFileScopedTarget(t *testing.T) {
	spec := *iceberg.UnpartitionedSpec
	build := func(content iceberg.ManifestEntryContent, ref *string, lo, hi string) iceberg.DataFile {
		b, err := iceberg.NewDataFileBuilder(spec, content, "s3://b/del.parquet", iceberg.ParquetFile, nil, nil, nil, 1, 100)
		if err != nil {
			t.Fatal(err)
		}
		if ref != nil {
			b.ReferencedDataFile(*ref)
		}
		bounds := func(v string) map[int][]byte {
			if v == "" {
				return map[int][]byte{}
			}
			return map[int][]byte{posDeleteFilePathID: []byte(v)}
		}
		b.LowerBoundValues(bounds(lo)).UpperBoundValues(bounds(hi))
		return b.Build()
	}
	str := func(s string) *string { return &s }
	for _, c := range []struct {
		name   string
		df     iceberg.DataFile
		want   string
		scoped bool
	}{
		{"referenced", build(iceberg.EntryContentPosDeletes, str("s3://b/a.parquet"), "", ""), "s3://b/a.parquet", true},
		{"referenced over bounds", build(iceberg.EntryContentPosDeletes, str("s3://b/a.parquet"), "s3://b/x", "s3://b/y"), "s3://b/a.parquet", true},
		{"equal bounds", build(iceberg.EntryContentPosDeletes, nil, "s3://b/c.parquet", "s3://b/c.parquet"), "s3://b/c.parquet", true},
		{"empty reference, equal bounds", build(iceberg.EntryContentPosDeletes, str(""), "s3://b/c.parquet", "s3://b/c.parquet"), "s3://b/c.parquet", true},
		{"bounds differ", build(iceberg.EntryContentPosDeletes, nil, "s3://b/c.parquet", "s3://b/d.parquet"), "", false},
		{"no bounds", build(iceberg.EntryContentPosDeletes, nil, "", ""), "", false},
		{"a data file", build(iceberg.EntryContentData, str("s3://b/a.parquet"), "s3://b/c.parquet", "s3://b/c.parquet"), "", false},
		{"equality deletes", build(iceberg.EntryContentEqDeletes, str("s3://b/a.parquet"), "s3://b/c.parquet", "s3://b/c.parquet"), "", false},
	} {
		if got, ok := fileScopedTarget(c.df); got != c.want || ok != c.scoped {
			t.Errorf("%s: %q %v, want %q %v", c.name, got, ok, c.want, c.scoped)
		}
	}
}
