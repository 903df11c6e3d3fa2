package run

// Tests written for the surviving mutants of replay.go (docs/tests.md,
// "Mutation testing"); each names the mutants it kills.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/ledger"
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

// The load id of a replay is the same whatever order its exceptions come
// in, and the same from one build to the next: a replay committed by one
// build and interrupted before the ledger marked it is recognised by the
// next from this id. Expected: sha256 of the fingerprint written out here
// by hand — "replay", NUL, the table, newline, then per exception in id
// order its id, NUL key=value per fix in key order, newline — first 20 hex
// digits, prefixed rp- (kills replay.go:158 ids[i].ID < ids[j].ID
// negated, which orders by descending id).
func TestReplayLoadIDIsPinnedMut(t *testing.T) {
	ex := []ledger.Exception{
		{ID: 12, Fixed: map[string]string{"amount": "20"}},
		{ID: 3, Fixed: map[string]string{"b": "x", "a": "y"}},
	}
	sum := sha256.Sum256([]byte("replay\x00orders\n" + "3\x00a=y\x00b=x\n" + "12\x00amount=20\n"))
	want := "rp-" + hex.EncodeToString(sum[:])[:20]
	if got := ReplayLoadID("orders", ex); got != want {
		t.Errorf("ReplayLoadID = %s, want %s", got, want)
	}
	if got := ReplayLoadID("orders", []ledger.Exception{ex[1], ex[0]}); got != want {
		t.Errorf("ReplayLoadID in the other order = %s, want %s", got, want)
	}
}

// A replay into a partitioned table opens it with the plan's partition
// spec and lands the fixed row (kills replay.go:234 err != nil negated in
// the partition loop, which leaves the table unopened).
func TestReplayOfAPartitionedTableMut(t *testing.T) {
	ctx := context.Background()
	dir, p, sk, st := replayWorkspace(t, `schema_version: 1
platform: {prefix: rpart}
sources: {in: {kind: files, path: in}}
tables:
  orders:
    source: {name: in, files: ["*.csv"], format: csv, csv: {header: "yes"}}
    load: {keys: [id]}
    partition: ["bucket(4, id)"]
    columns:
      - {name: id, type: long}
      - {name: amount, type: long}
`, "id,amount\n")
	ex := []ledger.Exception{{RunID: "run-1", LoadID: "ld-1", Table: "orders", Level: ledger.LevelRow, File: "a.csv", Line: 2,
		Raw: []byte("7,x"), Values: map[string]string{"id": "7", "amount": "x"},
		Failures: []ledger.Failure{{Column: "amount", Value: "x", Rule: "type"}}}}
	if err := st.AddPending(ctx, ex); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Publish(ctx, "orders", "ld-1"); err != nil {
		t.Fatal(err)
	}
	if err := st.Resolve(ctx, ex[0].ID, map[string]string{"amount": "70"}, "test", ""); err != nil {
		t.Fatal(err)
	}
	trs, err := Replay(ctx, ReplayOptions{Workspace: dir, Plan: p, Sink: sk, Store: st, RunID: "run-r", By: "test"})
	if err != nil || len(trs) != 1 {
		t.Fatalf("replay: %v, %d tables", err, len(trs))
	}
	if tr := trs[0]; tr.Err != nil || tr.Status != StatusLoaded || tr.RowsLoaded != 1 {
		t.Fatalf("replay: status %s, loaded %d, err %v", tr.Status, tr.RowsLoaded, tr.Err)
	}
	tbl, err := sk.Catalog().LoadTable(ctx, table.Identifier{"rpart", "orders"})
	if err != nil {
		t.Fatal(err)
	}
	if spec := tbl.Spec(); spec.NumFields() != 1 || spec.Field(0).Transform.String() != "bucket[4]" {
		t.Errorf("partition spec %v, want bucket[4] of id", spec)
	}
}
