// Package sinktest is the conformance suite every sink runs against itself.
package sinktest

import (
	"context"
	"iter"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
)

// Spec is the table every case uses: id long (required), name string, day date.
func Spec(name string) sink.TableSpec {
	return sink.TableSpec{
		Name: name, Namespace: "conformance",
		Columns:   []plan.Column{{Name: "id", Type: "long", Required: true}, {Name: "name", Type: "string"}, {Name: "day", Type: "date"}},
		Types:     []plan.Type{{Kind: plan.Long}, {Kind: plan.String}, {Kind: plan.Date}},
		Required:  []bool{true, false, false},
		Partition: []plan.PartitionField{{Column: "day", Transform: "month"}},
	}
}

func batches(t *testing.T, sc *arrow.Schema, ids ...int64) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		defer b.Release()
		for _, id := range ids {
			b.Field(0).(*array.Int64Builder).Append(id)
			b.Field(1).(*array.StringBuilder).Append("row")
			b.Field(2).(*array.Date32Builder).Append(arrow.Date32(20454 + id%60))
		}
		yield(b.NewRecordBatch(), nil)
	}
}

// Batches is one batch of rows with the given ids, in the schema of Spec
// (for sink tests outside the suite).
func Batches(sc *arrow.Schema, ids ...int64) iter.Seq2[arrow.RecordBatch, error] {
	return batches(nil, sc, ids...)
}

func count(t *testing.T, tbl sink.Table) int64 {
	t.Helper()
	sc, ok := tbl.(sink.Scanner)
	if !ok {
		t.Skip("sink cannot be read back")
	}
	it, err := sc.Scan(context.Background(), 0, nil)
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

// Run runs the suite. open returns a fresh, empty sink.
func Run(t *testing.T, open func(t *testing.T) sink.Sink) {
	ctx := context.Background()
	t.Run("staged rows are invisible until the commit", func(t *testing.T) {
		sk := open(t)
		tbl, err := sk.OpenTable(ctx, Spec("staging"))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := tbl.Current(ctx); ok {
			t.Fatal("a new table has a snapshot")
		}
		st, err := tbl.Stage(ctx, batches(t, tbl.Schema(), 1, 2, 3))
		if err != nil {
			t.Fatal(err)
		}
		if st.Rows() != 3 || st.Files() < 1 {
			t.Fatalf("staged %d rows in %d files, want 3 rows", st.Rows(), st.Files())
		}
		if _, ok, _ := tbl.Current(ctx); ok {
			t.Fatal("staging created a snapshot")
		}
		c, err := tbl.Commit(ctx, st, sink.CommitProps{LoadID: "ld-1", RunID: "r1", Watermark: "2026-01-31"})
		if err != nil {
			t.Fatal(err)
		}
		if c.LoadID != "ld-1" || c.Watermark != "2026-01-31" || c.AlreadyCommitted || c.Attempts != 1 {
			t.Fatalf("commit %+v", c)
		}
		if n := count(t, tbl); n != 3 {
			t.Fatalf("%d rows visible, want 3", n)
		}
	})
	t.Run("the same load id is never applied twice", func(t *testing.T) {
		sk := open(t)
		tbl, err := sk.OpenTable(ctx, Spec("twice"))
		if err != nil {
			t.Fatal(err)
		}
		st, _ := tbl.Stage(ctx, batches(t, tbl.Schema(), 1, 2))
		if _, err := tbl.Commit(ctx, st, sink.CommitProps{LoadID: "ld-x", RunID: "r1"}); err != nil {
			t.Fatal(err)
		}
		st2, _ := tbl.Stage(ctx, batches(t, tbl.Schema(), 1, 2))
		c, err := tbl.Commit(ctx, st2, sink.CommitProps{LoadID: "ld-x", RunID: "r2"})
		if err != nil {
			t.Fatal(err)
		}
		if !c.AlreadyCommitted {
			t.Fatal("a second commit of the same load id was applied")
		}
		_ = st2.Discard(ctx)
		if n := count(t, tbl); n != 2 {
			t.Fatalf("%d rows, want 2", n)
		}
		found, ok, err := tbl.FindLoad(ctx, "ld-x")
		if err != nil || !ok || found.RunID != "r1" {
			t.Fatalf("FindLoad: %+v %v %v", found, ok, err)
		}
		if _, ok, _ := tbl.FindLoad(ctx, "ld-none"); ok {
			t.Fatal("FindLoad found a load that never ran")
		}
	})
	t.Run("append adds, replace swaps the whole table", func(t *testing.T) {
		sk := open(t)
		tbl, _ := sk.OpenTable(ctx, Spec("modes"))
		st, _ := tbl.Stage(ctx, batches(t, tbl.Schema(), 1, 2))
		tbl.Commit(ctx, st, sink.CommitProps{LoadID: "a", RunID: "r"})
		st, _ = tbl.Stage(ctx, batches(t, tbl.Schema(), 3))
		tbl.Commit(ctx, st, sink.CommitProps{LoadID: "b", RunID: "r"})
		if n := count(t, tbl); n != 3 {
			t.Fatalf("after two appends %d rows, want 3", n)
		}
		st, _ = tbl.Stage(ctx, batches(t, tbl.Schema(), 7, 8, 9, 10))
		if _, err := tbl.Commit(ctx, st, sink.CommitProps{LoadID: "c", RunID: "r", Replace: true}); err != nil {
			t.Fatal(err)
		}
		if n := count(t, tbl); n != 4 {
			t.Fatalf("after replace %d rows, want 4", n)
		}
	})
	t.Run("discarded staging leaves the table untouched", func(t *testing.T) {
		sk := open(t)
		tbl, _ := sk.OpenTable(ctx, Spec("discard"))
		st, _ := tbl.Stage(ctx, batches(t, tbl.Schema(), 1))
		if err := st.Discard(ctx); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := tbl.Current(ctx); ok {
			t.Fatal("discard made a snapshot")
		}
	})
	t.Run("reopening with different columns is refused", func(t *testing.T) {
		sk := open(t)
		if _, err := sk.OpenTable(ctx, Spec("evolve")); err != nil {
			t.Fatal(err)
		}
		s := Spec("evolve")
		s.Types[1] = plan.Type{Kind: plan.Long}
		s.Columns[1].Type = "long"
		if _, err := sk.OpenTable(ctx, s); err == nil {
			t.Fatal("a silent schema change was accepted")
		}
	})
	t.Run("a commit without a load id is refused", func(t *testing.T) {
		sk := open(t)
		tbl, _ := sk.OpenTable(ctx, Spec("noid"))
		st, _ := tbl.Stage(ctx, batches(t, tbl.Schema(), 1))
		if _, err := tbl.Commit(ctx, st, sink.CommitProps{}); err == nil {
			t.Fatal("commit without a load id")
		}
		_ = st.Discard(ctx)
	})
}
