package icesink

import (
	"context"
	"slices"
	"testing"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
)

// TestEvolveReorderOnly: a plan that only changes the order of the
// columns reorders the table's schema in the next commit; the rows already
// in the table keep their values by name.
func TestEvolveReorderOnly(t *testing.T) {
	ctx := context.Background()
	sk := longSink(t)
	tb := openLong(t, sk, "a", "b", "c")
	if _, err := tb.Commit(ctx, stageOne(t, tb, []int64{1, 2, 3}), sink.CommitProps{LoadID: "l1"}); err != nil {
		t.Fatal(err)
	}
	tb = openLong(t, sk, "a", "c", "b")
	ev := tb.Evolution()
	if ev == nil || len(ev.Changes) != 1 || ev.Changes[0].Kind != ChangeOrder || len(ev.Rewrite) != 0 {
		t.Fatalf("evolution %+v, want one reorder", ev)
	}
	if _, err := tb.Commit(ctx, stageOne(t, tb, []int64{10, 30, 20}), sink.CommitProps{LoadID: "l2"}); err != nil {
		t.Fatal(err)
	}
	tbl, err := tb.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := Describe(tbl).Columns; !slices.Equal(got, []string{"a", "c", "b"}) {
		t.Fatalf("columns %v, want [a c b]", got)
	}
	wantRows(t, tb, "1,3,2", "10,30,20")
}

// TestFieldsOf: the typed fields of a spec; a column without a source
// name is its own source; a spec with fewer types or required flags than
// columns leaves the rest unknown and optional.
func TestFieldsOf(t *testing.T) {
	long, _ := plan.ParseType("long")
	got := FieldsOf(sink.TableSpec{
		Columns:  []plan.Column{{Name: "id", Description: "the key"}, {Name: "customer_name", SourceName: "Customer Name", RenamedFrom: "client"}, {Name: "x"}},
		Types:    []plan.Type{long},
		Required: []bool{true, false},
	})
	want := []plan.Field{
		{Name: "id", SourceName: "id", Type: long, Required: true, Doc: "the key"},
		{Name: "customer_name", SourceName: "Customer Name", RenamedFrom: "client"},
		{Name: "x", SourceName: "x"},
	}
	if len(got) != len(want) {
		t.Fatalf("fields %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("field %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
