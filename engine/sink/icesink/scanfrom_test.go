package icesink_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/sink/icesink"
	"github.com/lima-lake/lima/engine/sink/sinktest"
)

// TestScanFromPrunesByStatistics: ScanFrom reads only the data files whose
// statistics reach the bound (three appends of ids 1-10, 11-20, 21-30: the
// first two are never read for id >= 22), and rows deleted by a later
// commit (position deletes) are not returned.
func TestScanFromPrunesByStatistics(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	sk, err := icesink.Open(ctx, icesink.Options{CatalogPath: filepath.Join(dir, ".lima", "catalog.db"), Warehouse: filepath.Join(dir, "lake")})
	if err != nil {
		t.Fatal(err)
	}
	defer sk.Close()
	spec := sinktest.Spec("ranged")
	spec.Partition = nil // statistics, not partitions, do the pruning
	tbl, err := sk.OpenTable(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	ids := func(from, to int64) []int64 {
		var out []int64
		for i := from; i <= to; i++ {
			out = append(out, i)
		}
		return out
	}
	for n, r := range [][2]int64{{1, 10}, {11, 20}, {21, 30}} {
		st, err := tbl.Stage(ctx, sinktest.Batches(tbl.Schema(), ids(r[0], r[1])...))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tbl.Commit(ctx, st, sink.CommitProps{LoadID: fmt.Sprint("load-", n)}); err != nil {
			t.Fatal(err)
		}
	}
	// Id 25 is replaced by nothing: deleted by key, with 31 and 32 added.
	st, err := tbl.Stage(ctx, sinktest.Batches(tbl.Schema(), 31, 32))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.(sink.KeyDeleter).CommitDelta(ctx, st, sink.CommitProps{LoadID: "delta"}, keys(25)); err != nil {
		t.Fatal(err)
	}
	read := func(from any) []int64 {
		t.Helper()
		it, err := tbl.(sink.RangeScanner).ScanFrom(ctx, []string{"id", "name"}, "id", from)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for rec, err := range it {
			if err != nil {
				t.Fatal(err)
			}
			a := rec.Column(0).(*array.Int64)
			for i := 0; i < a.Len(); i++ {
				got = append(got, a.Value(i))
			}
			rec.Release()
		}
		slices.Sort(got)
		return got
	}
	got := read(int64(22))
	var want []int64
	for _, i := range ids(22, 32) {
		if i != 25 {
			want = append(want, i)
		}
	}
	var atOrAbove []int64
	for _, i := range got {
		if i < 21 {
			t.Fatalf("id %d was read: a file wholly below the bound was not pruned (%v)", i, got)
		}
		if i >= 22 {
			atOrAbove = append(atOrAbove, i)
		}
	}
	if !slices.Equal(atOrAbove, want) {
		t.Fatalf("rows at or above 22: %v, want %v", atOrAbove, want)
	}
	// A bound the column cannot take scans every file (the caller filters).
	if all := read("22"); len(all) != 31 {
		t.Fatalf("an unfiltered scan read %d rows, want 31", len(all))
	}
}

func keys(ids ...int64) sink.Keys {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(ids, nil)
	arr := b.NewArray()
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	return sink.Keys{Columns: []string{"id"}, Batches: []arrow.RecordBatch{array.NewRecordBatch(sc, []arrow.Array{arr}, int64(len(ids)))}}
}
