package run

import (
	"context"
	"testing"

	"github.com/lima-lake/lima/engine/ledger"
)

// A table the plan names type: base (the default, written out) is
// replayed like one without a type: its fixed row is committed once, under
// the replay's load id; replaying again finds nothing fixed.
func TestReplayOfATableTypedBase(t *testing.T) {
	ctx := context.Background()
	dir, p, sk, st := replayWorkspace(t, `schema_version: 1
platform: {prefix: rb}
sources: {in: {kind: files, path: in}}
tables:
  orders:
    type: base
    source: {name: in, files: ["*.csv"], format: csv, csv: {header: "yes"}}
    columns:
      - {name: id, type: long}
      - {name: amount, type: long}
`, "id,amount\n1,4\n2,x\n")
	ex := []ledger.Exception{{RunID: "run-1", LoadID: "ld-1", Table: "orders", Level: ledger.LevelRow, File: "a.csv", Line: 3,
		Raw: []byte("2,x"), Values: map[string]string{"id": "2", "amount": "x"},
		Failures: []ledger.Failure{{Column: "amount", Value: "x", Rule: "type"}}}}
	if err := st.AddPending(ctx, ex); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Publish(ctx, "orders", "ld-1"); err != nil {
		t.Fatal(err)
	}
	if err := st.Resolve(ctx, ex[0].ID, map[string]string{"amount": "5"}, "test", ""); err != nil {
		t.Fatal(err)
	}
	fixed, err := st.Get(ctx, ex[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	trs, err := Replay(ctx, ReplayOptions{Workspace: dir, Plan: p, Sink: sk, Store: st, RunID: "run-2", By: "test"})
	if err != nil || len(trs) != 1 {
		t.Fatalf("replay: %v, %d tables, want 1", err, len(trs))
	}
	tr := trs[0]
	if tr.Err != nil || tr.Status != StatusLoaded || tr.Commit.LoadID != ReplayLoadID("orders", []ledger.Exception{fixed}) || tr.Commit.AlreadyCommitted {
		t.Fatalf("replay of a base table: status %s, commit %+v, err %v", tr.Status, tr.Commit, tr.Err)
	}
	if e, err := st.Get(ctx, ex[0].ID); err != nil || e.Status != ledger.StatusReplayed {
		t.Fatalf("exception after the replay: %+v %v, want replayed", e.Status, err)
	}
	// The replay is recorded under the name it was given.
	h, err := st.History(ctx, ex[0].ID)
	if err != nil || len(h) == 0 || h[len(h)-1].Action != ledger.ActionReplayed || h[len(h)-1].By != "test" {
		t.Fatalf("history %+v %v, want the replay by test last", h, err)
	}
	trs, err = Replay(ctx, ReplayOptions{Workspace: dir, Plan: p, Sink: sk, Store: st, RunID: "run-3", By: "test"})
	if err != nil || len(trs) != 0 {
		t.Fatalf("second replay: %v, %d tables, want none (nothing fixed)", err, len(trs))
	}
}
