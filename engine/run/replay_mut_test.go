package run

// Tests written for the surviving mutants of replay.go (docs/tests.md,
// "Mutation testing"); each names the mutants it kills.

import (
	"context"
	"testing"
)

// A selection with --table naming the exceptions' own table, on a table
// whose type is spelled out as base, is replayed: neither the table filter
// (replay.go:134 e.Table != o.Table) nor the type check (replay.go:136
// t.Type != "base") refuses it.
func TestReplayOfASelectionOfItsOwnBaseTableMut(t *testing.T) {
	f := newSelectFixture(t, 3)
	f.p.Tables["orders"].Type = "base"
	trs, err := Replay(context.Background(), ReplayOptions{Workspace: f.dir, Plan: f.p, Sink: f.sk, Store: f.st,
		Table: "orders", IDs: []int64{f.ids[0], f.ids[2]}, RunID: "run-r", By: "test"})
	if err != nil || len(trs) != 1 {
		t.Fatalf("replay of rows 1 and 3 of orders: %v, %d tables", err, len(trs))
	}
	if tr := trs[0]; tr.Err != nil || tr.Status != StatusLoaded || tr.RowsLoaded != 2 {
		t.Fatalf("replay of rows 1 and 3: status %s, loaded %d, err %v", tr.Status, tr.RowsLoaded, tr.Err)
	}
	f.wantLake(t, "after replaying rows 1 and 3", 1, 3)
}
