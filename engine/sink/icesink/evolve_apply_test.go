package icesink

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
)

// evolveTable commits one row under from, opens the table again under to
// and commits one row more (replace: a full refresh); it returns the
// table as the second commit left it.
func evolveTable(t *testing.T, from, to sink.TableSpec, replace bool, row1, row2 []int64) (*Table, Described) {
	t.Helper()
	ctx := context.Background()
	sk := longSink(t)
	tb := openSpec(t, sk, from)
	if _, err := tb.Commit(ctx, stageOne(t, tb, row1), sink.CommitProps{LoadID: "l1"}); err != nil {
		t.Fatal(err)
	}
	tb = openSpec(t, sk, to)
	if _, err := tb.Commit(ctx, stageOne(t, tb, row2), sink.CommitProps{LoadID: "l2", Replace: replace}); err != nil {
		t.Fatal(err)
	}
	tbl, err := tb.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return tb, Describe(tbl)
}

// TestEvolveApplies: what Diff finds is what the commit leaves in the
// table's metadata — partition fields moved and renamed with their
// column, columns dropped and added, a required column kept required.
func TestEvolveApplies(t *testing.T) {
	ctx := context.Background()
	partitioned := func(col string, cols ...string) sink.TableSpec {
		s := longSpec(cols...)
		s.Partition = []plan.PartitionField{{Column: col, Transform: "identity"}}
		return s
	}
	t.Run("partition by another column", func(t *testing.T) {
		tb, d := evolveTable(t, partitioned("a", "a", "b"), partitioned("b", "a", "b"), false, []int64{1, 2}, []int64{3, 4})
		if !slices.Equal(d.Partition, []string{"b"}) {
			t.Fatalf("partitioned by %v, want [b]", d.Partition)
		}
		wantRows(t, tb, "1,2", "3,4")
	})
	t.Run("rename the partition column", func(t *testing.T) {
		to := partitioned("x", "x", "b")
		to.Columns[0].RenamedFrom = "a"
		tb, d := evolveTable(t, partitioned("a", "a", "b"), to, false, []int64{1, 2}, []int64{3, 4})
		tbl, _ := tb.Load(ctx)
		spec := tbl.Spec()
		var f []string
		for _, pf := range spec.Fields() {
			f = append(f, pf.Name)
		}
		if !slices.Equal(d.Columns, []string{"x", "b"}) || !slices.Equal(f, []string{"x"}) || !slices.Equal(d.Partition, []string{"x"}) {
			t.Fatalf("columns %v, partition %v (fields %v), want [x b] partitioned by x named x", d.Columns, d.Partition, f)
		}
		wantRows(t, tb, "1,2", "3,4")
	})
	t.Run("drop one, add one, the required one stays required", func(t *testing.T) {
		from, to := longSpec("a", "b", "c"), longSpec("a", "b", "d")
		from.Required[0], to.Required[0] = true, true
		tb, d := evolveTable(t, from, to, false, []int64{1, 2, 3}, []int64{4, 5, 6})
		if !slices.Equal(d.Columns, []string{"a", "b", "d"}) || !slices.Equal(d.Required, []bool{true, false, false}) {
			t.Fatalf("columns %v required %v, want [a b d] [true false false]", d.Columns, d.Required)
		}
		wantRows(t, tb, "1,2,-", "4,5,6")
	})
}

// TestFullRefreshAppliesAnIncompatibleChange: long → int cannot be applied
// to the rows in the table: an appending commit is refused and changes
// nothing; a full refresh commits the new type with its rows only.
func TestFullRefreshAppliesAnIncompatibleChange(t *testing.T) {
	ctx := context.Background()
	sk := longSink(t)
	tb := openLong(t, sk, "a", "b")
	if _, err := tb.Commit(ctx, stageOne(t, tb, []int64{1, 2}), sink.CommitProps{LoadID: "l1"}); err != nil {
		t.Fatal(err)
	}
	narrow := longSpec("a", "b")
	narrow.Types[1], _ = plan.ParseType("int")
	narrow.Columns[1].Type = "int"
	tb2 := openSpec(t, sk, narrow)
	if ev := tb2.Evolution(); ev == nil || len(ev.Rewrite) != 1 {
		t.Fatalf("evolution %+v, want one rewrite", ev)
	}
	st := stageOne(t, tb2, []int64{3, 4})
	if _, err := tb2.Commit(ctx, st, sink.CommitProps{LoadID: "append"}); !errors.Is(err, ErrIncompatibleSchema) {
		t.Fatalf("appending commit: %v, want %v", err, ErrIncompatibleSchema)
	}
	wantRows(t, tb, "1,2")
	if _, err := tb2.Commit(ctx, st, sink.CommitProps{LoadID: "refresh", Replace: true}); err != nil {
		t.Fatalf("full refresh: %v", err)
	}
	tbl, _ := tb2.Load(ctx)
	if d := Describe(tbl); !slices.Equal(d.Types, []string{"long", "int"}) {
		t.Fatalf("types %v, want [long int]", d.Types)
	}
	wantRows(t, tb2, "3,4")
}
