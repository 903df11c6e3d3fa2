package run

// Tests written for the surviving mutants of replay.go (docs/tests.md,
// "Mutation testing"); each names the mutants it kills.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
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

// A fixed row whose key the table already has is not replayed: it is
// reopened under rule unique and the table keeps its one row of that key
// (kills replay.go:302:18 len(keyCols) > 0 negated, :312:23 the row loop's
// row < NumRows negated and :316:18 f.Name == k negated — each leaves the
// table's keys unread).
func TestReplayRefusesAKeyTheTableHasMut(t *testing.T) {
	ctx := context.Background()
	f := newSelectFixture(t, 1)
	if _, err := f.replay(t, f.st, nil); err != nil {
		t.Fatal(err)
	}
	f.wantLake(t, "after the first replay", 1)
	ex := []ledger.Exception{{RunID: "run-2", LoadID: "ld-2", Table: "orders", Level: ledger.LevelRow, File: "a.csv", Line: 9,
		Raw: []byte("1,y"), Values: map[string]string{"id": "1", "amount": "y"},
		Failures: []ledger.Failure{{Column: "amount", Value: "y", Rule: "type"}}}}
	if err := f.st.AddPending(ctx, ex); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.Publish(ctx, "orders", "ld-2"); err != nil {
		t.Fatal(err)
	}
	if err := f.st.Resolve(ctx, ex[0].ID, map[string]string{"amount": "10"}, "test", ""); err != nil {
		t.Fatal(err)
	}
	trs, err := f.replay(t, f.st, nil)
	if err != nil || len(trs) != 1 {
		t.Fatalf("second replay: %v, %d tables", err, len(trs))
	}
	if tr := trs[0]; tr.RowsRead != 1 || tr.RowsLoaded != 0 || tr.QuarantinedBy[RuleUnique] != 1 {
		t.Fatalf("second replay: read %d loaded %d held by rule %v, want the row held as unique", tr.RowsRead, tr.RowsLoaded, tr.QuarantinedBy)
	}
	f.wantLake(t, "after the second replay", 1)
	e, err := f.st.Get(ctx, ex[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if e.Status != ledger.StatusOpen || len(e.Failures) != 1 || e.Failures[0].Rule != RuleUnique {
		t.Errorf("the duplicate row is %s with %+v, want open under rule unique", e.Status, e.Failures)
	}
}

// A held row's values are found under the names they were recorded with:
// a column's header when it differs from its name (source_name), its
// previous name after a rename (renamed_from); a column added since has no
// value and is NULL. Kills replay.go:335 (i < len(srcNames) and
// srcNames[i] != c, negated), :339:15 and :339:38 (pc.Name == c and
// RenamedFrom != "", negated) and :339:20 (&& made ||, which gives every
// column the renamed column's old name).
func TestReplayFindsValuesUnderTheirRecordedNamesMut(t *testing.T) {
	ctx := context.Background()
	dir, p, sk, st := replayWorkspace(t, `schema_version: 1
platform: {prefix: rnames}
sources: {in: {kind: files, path: in}}
tables:
  orders:
    source: {name: in, files: ["*.csv"], format: csv, csv: {header: "yes"}}
    load: {keys: [id]}
    columns:
      - {name: id, type: long}
      - {name: amount, type: long, renamed_from: amt}
      - {name: price, type: long, source_name: Price}
      - {name: qty, type: long}
      - {name: note, type: string}
`, "id,amount,Price,qty,note\n")
	ex := []ledger.Exception{{RunID: "run-1", LoadID: "ld-1", Table: "orders", Level: ledger.LevelRow, File: "a.csv", Line: 2,
		Raw: []byte("5,50,9,x"), Values: map[string]string{"id": "5", "amt": "50", "Price": "9", "qty": "x"},
		Failures: []ledger.Failure{{Column: "qty", Value: "x", Rule: "type"}}}}
	if err := st.AddPending(ctx, ex); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Publish(ctx, "orders", "ld-1"); err != nil {
		t.Fatal(err)
	}
	if err := st.Resolve(ctx, ex[0].ID, map[string]string{"qty": "3"}, "test", ""); err != nil {
		t.Fatal(err)
	}
	trs, err := Replay(ctx, ReplayOptions{Workspace: dir, Plan: p, Sink: sk, Store: st, RunID: "run-r", By: "test"})
	if err != nil || len(trs) != 1 {
		t.Fatalf("replay: %v, %d tables", err, len(trs))
	}
	if tr := trs[0]; tr.Err != nil || tr.RowsLoaded != 1 {
		t.Fatalf("replay: status %s, loaded %d, held %v, err %v", tr.Status, tr.RowsLoaded, tr.QuarantinedBy, tr.Err)
	}
	tbl, err := sk.Catalog().LoadTable(ctx, table.Identifier{"rnames", "orders"})
	if err != nil {
		t.Fatal(err)
	}
	_, it, err := tbl.Scan(table.WithSelectedFields("id", "amount", "price", "qty", "note")).ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		for r := 0; r < int(rec.NumRows()); r++ {
			rows++
			got := []string{formatArrow(rec.Column(0), r), formatArrow(rec.Column(1), r), formatArrow(rec.Column(2), r), formatArrow(rec.Column(3), r)}
			if want := []string{"5", "50", "9", "3"}; !slices.Equal(got, want) {
				t.Errorf("id, amount, price, qty = %q, want %q", got, want)
			}
			if !rec.Column(4).IsNull(r) {
				t.Errorf("note = %q, want NULL (the column had no value when the row was held)", formatArrow(rec.Column(4), r))
			}
		}
		rec.Release()
	}
	if rows != 1 {
		t.Errorf("%d rows in the lake, want 1", rows)
	}
}

// What still fails is reopened, each with its reason, and counted once:
// a fix that breaks a plan check (kills replay.go:386:11 errs != nil
// negated, which skips the checks after a clean cast), a row that could
// not be split whose fix leaves a column unset, and a whole file (kill
// :356:34 || made &&, :360:15 the reason's e.Level != LevelFile negated,
// :357:22 and :358:38 the held counts' ++ made --).
func TestReplayReopensWhatStillFailsMut(t *testing.T) {
	ctx := context.Background()
	dir, p, sk, st := replayWorkspace(t, `schema_version: 1
platform: {prefix: rfail}
sources: {in: {kind: files, path: in}}
tables:
  orders:
    source: {name: in, files: ["*.csv"], format: csv, csv: {header: "yes"}}
    load: {keys: [id]}
    columns:
      - {name: id, type: long}
      - {name: amount, type: long}
    checks: [{rule: range, column: amount, min: 0, max: 100}]
`, "id,amount\n")
	row := func(line int64, id string) ledger.Exception {
		return ledger.Exception{RunID: "run-1", LoadID: "ld-1", Table: "orders", Level: ledger.LevelRow, File: "a.csv", Line: line,
			Raw: []byte(id + ",x"), Values: map[string]string{"id": id, "amount": "x"},
			Failures: []ledger.Failure{{Column: "amount", Value: "x", Rule: "type"}}}
	}
	unsplit := row(3, "")
	unsplit.Values, unsplit.Raw = nil, []byte("\"2,20")
	whole := ledger.Exception{RunID: "run-1", LoadID: "ld-1", Table: "orders", Level: ledger.LevelFile, File: "b.csv",
		Failures: []ledger.Failure{{Rule: "encoding", Reason: "not UTF-8"}}}
	ex := []ledger.Exception{row(2, "1"), unsplit, whole, row(5, "4")}
	if err := st.AddPending(ctx, ex); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Publish(ctx, "orders", "ld-1"); err != nil {
		t.Fatal(err)
	}
	for i, fix := range []map[string]string{{"amount": "500"}, {"amount": "20"}, {"id": "3", "amount": "30"}, {"amount": "40"}} {
		if err := st.Resolve(ctx, ex[i].ID, fix, "test", ""); err != nil {
			t.Fatal(err)
		}
	}
	trs, err := Replay(ctx, ReplayOptions{Workspace: dir, Plan: p, Sink: sk, Store: st, RunID: "run-r", By: "test"})
	if err != nil || len(trs) != 1 {
		t.Fatalf("replay: %v, %d tables", err, len(trs))
	}
	tr := trs[0]
	if tr.Err != nil || tr.RowsRead != 4 || tr.RowsLoaded != 1 || tr.RowsQuarantined != 3 ||
		tr.QuarantinedBy["not_replayable"] != 2 || tr.QuarantinedBy["range"] != 1 || !tr.Balanced() {
		t.Fatalf("replay: read %d loaded %d held %d by rule %v, err %v; want 4 read, 1 loaded, 3 held (2 not_replayable, 1 range)",
			tr.RowsRead, tr.RowsLoaded, tr.RowsQuarantined, tr.QuarantinedBy, tr.Err)
	}
	for i, want := range []struct{ rule, reason string }{
		{"range", ""},
		{"not_replayable", "could not be split into columns, so the fix must set every column; missing: id"},
		{"not_replayable", "a whole file cannot be replayed"},
	} {
		e, err := st.Get(ctx, ex[i].ID)
		if err != nil {
			t.Fatal(err)
		}
		if e.Status != ledger.StatusOpen || len(e.Failures) != 1 || e.Failures[0].Rule != want.rule || !strings.Contains(e.Failures[0].Reason, want.reason) {
			t.Errorf("exception %d: %s with %+v, want open under %s with %q", i+1, e.Status, e.Failures, want.rule, want.reason)
		}
	}
	if e, err := st.Get(ctx, ex[3].ID); err != nil || e.Status != ledger.StatusReplayed {
		t.Errorf("exception 4: %+v %v, want replayed", e.Status, err)
	}
}

// Two fixed rows of one key in one replay: the first is replayed, the
// second reopened under unique — the replay does not duplicate a key it
// adds itself (kills replay.go:412:19 len(keyCols) > 0 negated, which
// stops recording the keys the replay stages).
func TestReplayDoesNotDuplicateAKeyItAddsMut(t *testing.T) {
	ctx := context.Background()
	f := newSelectFixture(t, 2)
	ex := []ledger.Exception{{RunID: "run-2", LoadID: "ld-2", Table: "orders", Level: ledger.LevelRow, File: "a.csv", Line: 9,
		Raw: []byte("1,y"), Values: map[string]string{"id": "1", "amount": "y"},
		Failures: []ledger.Failure{{Column: "amount", Value: "y", Rule: "type"}}}}
	if err := f.st.AddPending(ctx, ex); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.Publish(ctx, "orders", "ld-2"); err != nil {
		t.Fatal(err)
	}
	if err := f.st.Resolve(ctx, ex[0].ID, map[string]string{"amount": "10"}, "test", ""); err != nil {
		t.Fatal(err)
	}
	trs, err := f.replay(t, f.st, nil)
	if err != nil || len(trs) != 1 {
		t.Fatalf("replay: %v, %d tables", err, len(trs))
	}
	if tr := trs[0]; tr.RowsRead != 3 || tr.RowsLoaded != 2 || tr.QuarantinedBy[RuleUnique] != 1 {
		t.Fatalf("replay: read %d loaded %d held by rule %v, want 3 read, 2 loaded, 1 held as unique", tr.RowsRead, tr.RowsLoaded, tr.QuarantinedBy)
	}
	f.wantLake(t, "after the replay", 1, 2)
}
