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

// Count reads the table's current snapshot back and counts its rows (for
// sink tests outside the suite too).
func Count(t *testing.T, tbl sink.Table) int64 {
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

// rowsByID reads the table back as id → name.
func rowsByID(t *testing.T, tbl sink.Table) map[int64]string {
	t.Helper()
	sc, ok := tbl.(sink.Scanner)
	if !ok {
		t.Skip("sink cannot be read back")
	}
	it, err := sc.Scan(context.Background(), 0, []string{"id", "name"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]string{}
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		ids := rec.Column(0).(*array.Int64)
		names := rec.Column(1).(*array.String)
		for i := 0; i < int(rec.NumRows()); i++ {
			if _, dup := out[ids.Value(i)]; dup {
				t.Fatalf("id %d is in the table twice", ids.Value(i))
			}
			out[ids.Value(i)] = names.Value(i)
		}
		rec.Release()
	}
	return out
}

func namedBatch(sc *arrow.Schema, name string, ids ...int64) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		defer b.Release()
		for _, id := range ids {
			b.Field(0).(*array.Int64Builder).Append(id)
			b.Field(1).(*array.StringBuilder).Append(name)
			b.Field(2).(*array.Date32Builder).Append(arrow.Date32(20454 + id%60))
		}
		yield(b.NewRecordBatch(), nil)
	}
}

// nullBatch is rows with the given ids (field 0) and nulls elsewhere.
func nullBatch(sc *arrow.Schema, ids ...int64) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		defer b.Release()
		for _, id := range ids {
			b.Field(0).(*array.Int64Builder).Append(id)
			for i := 1; i < sc.NumFields(); i++ {
				b.Field(i).AppendNull()
			}
		}
		yield(b.NewRecordBatch(), nil)
	}
}

func idKeys(ids ...int64) sink.Keys {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(ids, nil)
	arr := b.NewArray()
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	return sink.Keys{Columns: []string{"id"}, Batches: []arrow.RecordBatch{array.NewRecordBatch(sc, []arrow.Array{arr}, int64(len(ids)))}}
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
		if n := Count(t, tbl); n != 3 {
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
		if n := Count(t, tbl); n != 2 {
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
		if n := Count(t, tbl); n != 3 {
			t.Fatalf("after two appends %d rows, want 3", n)
		}
		st, _ = tbl.Stage(ctx, batches(t, tbl.Schema(), 7, 8, 9, 10))
		if _, err := tbl.Commit(ctx, st, sink.CommitProps{LoadID: "c", RunID: "r", Replace: true}); err != nil {
			t.Fatal(err)
		}
		if n := Count(t, tbl); n != 4 {
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
	t.Run("an incompatible column change is never appended", func(t *testing.T) {
		sk := open(t)
		tbl, err := sk.OpenTable(ctx, Spec("evolve"))
		if err != nil {
			t.Fatal(err)
		}
		st, _ := tbl.Stage(ctx, batches(t, tbl.Schema(), 1, 2))
		if _, err := tbl.Commit(ctx, st, sink.CommitProps{LoadID: "l1", RunID: "r1"}); err != nil {
			t.Fatal(err)
		}
		// name string → long cannot be applied to the rows in the table:
		// the sink refuses at open, or (Iceberg, which evolves schemas in
		// the commit) refuses the appending commit.
		s := Spec("evolve")
		s.Types[1] = plan.Type{Kind: plan.Long}
		s.Columns[1].Type = "long"
		tbl2, err := sk.OpenTable(ctx, s)
		if err != nil {
			return
		}
		st, err = tbl2.Stage(ctx, nullBatch(tbl2.Schema(), 3))
		if err != nil {
			return
		}
		if _, err := tbl2.Commit(ctx, st, sink.CommitProps{LoadID: "l2", RunID: "r2"}); err == nil {
			t.Fatal("an incompatible schema change was appended")
		}
		_ = st.Discard(ctx)
		if got := rowsByID(t, tbl); len(got) != 2 || got[1] != "row" {
			t.Fatalf("the refused commit changed the table: %v", got)
		}
	})
	t.Run("a delta commit deletes by key and appends in one commit", func(t *testing.T) {
		sk := open(t)
		tbl, _ := sk.OpenTable(ctx, Spec("delta"))
		kd, ok := tbl.(sink.KeyDeleter)
		if !ok {
			t.Skip("sink has no key deletes (optional capability)")
		}
		st, _ := tbl.Stage(ctx, namedBatch(tbl.Schema(), "v1", 1, 2, 3, 4, 5, 6))
		if _, err := tbl.Commit(ctx, st, sink.CommitProps{LoadID: "base", RunID: "r1"}); err != nil {
			t.Fatal(err)
		}
		// update 2, delete 4, insert 7; 99 is unknown and deletes nothing.
		st, _ = tbl.Stage(ctx, namedBatch(tbl.Schema(), "v2", 2, 7))
		c, err := kd.CommitDelta(ctx, st, sink.CommitProps{LoadID: "delta-1", RunID: "r2", Watermark: "w2"}, idKeys(2, 4, 7, 99))
		if err != nil {
			t.Fatal(err)
		}
		if c.LoadID != "delta-1" || c.Watermark != "w2" || c.Deleted != 2 {
			t.Fatalf("delta commit %+v, want load delta-1, watermark w2, 2 rows deleted", c)
		}
		got := rowsByID(t, tbl)
		want := map[int64]string{1: "v1", 2: "v2", 3: "v1", 5: "v1", 6: "v1", 7: "v2"}
		if len(got) != len(want) {
			t.Fatalf("rows %v, want %v", got, want)
		}
		for id, name := range want {
			if got[id] != name {
				t.Fatalf("rows %v, want %v", got, want)
			}
		}
		if cur, ok, _ := tbl.Current(ctx); !ok || cur.LoadID != "delta-1" {
			t.Fatalf("current commit %+v", cur)
		}
		// the same delta again is found, not applied
		st, _ = tbl.Stage(ctx, namedBatch(tbl.Schema(), "v3", 2, 7))
		c, err = kd.CommitDelta(ctx, st, sink.CommitProps{LoadID: "delta-1", RunID: "r3"}, idKeys(2, 7))
		if err != nil || !c.AlreadyCommitted {
			t.Fatalf("a repeated delta was applied: %+v %v", c, err)
		}
		_ = st.Discard(ctx)
		// deletes only
		st, _ = tbl.Stage(ctx, namedBatch(tbl.Schema(), "none"))
		c, err = kd.CommitDelta(ctx, st, sink.CommitProps{LoadID: "delta-2", RunID: "r4"}, idKeys(1, 3))
		if err != nil || c.Deleted != 2 {
			t.Fatalf("delete-only delta: %+v %v", c, err)
		}
		if got := rowsByID(t, tbl); len(got) != 4 || got[1] != "" || got[3] != "" {
			t.Fatalf("after deleting 1 and 3: %v", got)
		}
	})
	t.Run("a commit of nothing never passes for an earlier snapshot", func(t *testing.T) {
		sk := open(t)
		tbl, _ := sk.OpenTable(ctx, Spec("empty"))
		st, _ := tbl.Stage(ctx, batches(t, tbl.Schema(), 1, 2))
		if _, err := tbl.Commit(ctx, st, sink.CommitProps{LoadID: "first", RunID: "r1"}); err != nil {
			t.Fatal(err)
		}
		st, err := tbl.Stage(ctx, batches(t, tbl.Schema()))
		if err != nil {
			t.Fatal(err)
		}
		c, err := tbl.Commit(ctx, st, sink.CommitProps{LoadID: "second", RunID: "r2"})
		if err == nil && c.LoadID != "second" {
			t.Fatalf("an empty commit reported the snapshot of load %q as its own", c.LoadID)
		}
		if n := Count(t, tbl); n != 2 {
			t.Fatalf("%d rows after an empty commit, want 2", n)
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
