package run

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/sink/icesink"
)

// selectFixture is a keyed table orders whose rows id 1..n were all held
// back (amount "x") and fixed to amount = 10·id; nothing of them is in
// the lake yet.
type selectFixture struct {
	dir string
	p   *plan.Plan
	sk  *icesink.Sink
	st  ledger.Store
	ids []int64 // exception id of row i+1
}

func newSelectFixture(t *testing.T, n int) *selectFixture {
	t.Helper()
	ctx := context.Background()
	dir, p, sk, st := replayWorkspace(t, `schema_version: 1
platform: {prefix: rsel}
sources: {in: {kind: files, path: in}}
tables:
  orders:
    source: {name: in, files: ["*.csv"], format: csv, csv: {header: "yes"}}
    load: {keys: [id]}
    columns:
      - {name: id, type: long}
      - {name: amount, type: long}
`, "id,amount\n")
	ex := make([]ledger.Exception, n)
	for i := range ex {
		id := strconv.Itoa(i + 1)
		ex[i] = ledger.Exception{RunID: "run-1", LoadID: "ld-1", Table: "orders", Level: ledger.LevelRow, File: "a.csv", Line: int64(i + 2),
			Raw: []byte(id + ",x"), Values: map[string]string{"id": id, "amount": "x"},
			Failures: []ledger.Failure{{Column: "amount", Value: "x", Rule: "type"}}}
	}
	if err := st.AddPending(ctx, ex); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Publish(ctx, "orders", "ld-1"); err != nil {
		t.Fatal(err)
	}
	f := &selectFixture{dir: dir, p: p, sk: sk, st: st}
	for i := range ex {
		if err := st.Resolve(ctx, ex[i].ID, map[string]string{"amount": strconv.Itoa(10 * (i + 1))}, "test", ""); err != nil {
			t.Fatal(err)
		}
		f.ids = append(f.ids, ex[i].ID)
	}
	return f
}

func (f *selectFixture) replay(t *testing.T, st ledger.Store, ids []int64) ([]*TableResult, error) {
	t.Helper()
	return Replay(context.Background(), ReplayOptions{Workspace: f.dir, Plan: f.p, Sink: f.sk, Store: st, IDs: ids, RunID: "run-r", By: "test"})
}

// lake reads orders with iceberg-go, as an outside reader would: amount
// by id, and how often each id is there.
func (f *selectFixture) lake(t *testing.T) (map[int64]int64, map[int64]int) {
	t.Helper()
	ctx := context.Background()
	amount, seen := map[int64]int64{}, map[int64]int{}
	tbl, err := f.sk.Catalog().LoadTable(ctx, table.Identifier{"rsel", "orders"})
	if err != nil {
		return amount, seen // no table yet: nothing committed
	}
	_, it, err := tbl.Scan(table.WithSelectedFields("id", "amount")).ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		ids, amounts := rec.Column(0).(*array.Int64), rec.Column(1).(*array.Int64)
		for r := 0; r < int(rec.NumRows()); r++ {
			amount[ids.Value(r)] = amounts.Value(r)
			seen[ids.Value(r)]++
		}
		rec.Release()
	}
	return amount, seen
}

// wantLake: the rows (ids) in the lake are exactly want, once each, with
// the fixed amount 10·id.
func (f *selectFixture) wantLake(t *testing.T, what string, want ...int64) {
	t.Helper()
	amount, seen := f.lake(t)
	var got []int64
	for id, n := range seen {
		got = append(got, id)
		if n != 1 || amount[id] != 10*id {
			t.Errorf("%s: id %d is in the lake %d time(s) with amount %d, want once with %d", what, id, n, amount[id], 10*id)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("%s: the lake holds ids %v, want %v", what, got, want)
	}
}

func (f *selectFixture) status(t *testing.T, row int) ledger.Exception {
	t.Helper()
	e, err := f.st.Get(context.Background(), f.ids[row-1])
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// A replay of a selection commits exactly the selected fixed rows, in one
// snapshot whose load id fingerprints them; the other fixed rows stay
// fixed and a later replay of everything brings them, once.
func TestReplayOfASelectionLoadsOnlyTheSelectedRows(t *testing.T) {
	f := newSelectFixture(t, 6)
	sel := []int64{f.ids[4], f.ids[1], f.ids[1]} // rows 5 and 2, one twice, out of order
	trs, err := f.replay(t, f.st, sel)
	if err != nil || len(trs) != 1 {
		t.Fatalf("replay of rows 2 and 5: %v, %d tables", err, len(trs))
	}
	tr := trs[0]
	want := ReplayLoadID("orders", []ledger.Exception{f.status(t, 2), f.status(t, 5)})
	if tr.Err != nil || tr.Status != StatusLoaded || tr.RowsRead != 2 || tr.RowsLoaded != 2 || tr.LoadID != want {
		t.Fatalf("replay of rows 2 and 5: status %s, read %d, loaded %d, load %s (want %s), err %v", tr.Status, tr.RowsRead, tr.RowsLoaded, tr.LoadID, want, tr.Err)
	}
	f.wantLake(t, "after replaying rows 2 and 5", 2, 5)
	for row := 1; row <= 6; row++ {
		e := f.status(t, row)
		wantStatus := ledger.StatusFixed
		if row == 2 || row == 5 {
			wantStatus = ledger.StatusReplayed
		}
		if e.Status != wantStatus {
			t.Errorf("row %d is %s, want %s", row, e.Status, wantStatus)
		}
	}
	// The same selection again: nothing to do, nothing committed.
	trs, err = f.replay(t, f.st, sel)
	if err != nil || len(trs) != 0 {
		t.Fatalf("the same selection again: %v, %d tables, want none", err, len(trs))
	}
	// Everything else, later.
	trs, err = f.replay(t, f.st, nil)
	if err != nil || len(trs) != 1 || trs[0].RowsLoaded != 4 {
		t.Fatalf("replay of the rest: %v %+v", err, trs)
	}
	f.wantLake(t, "after replaying the rest", 1, 2, 3, 4, 5, 6)
}

// A selection with an exception that is not fixed (open, waived, unknown,
// of another table) is refused whole, naming each, before anything is
// committed.
func TestReplayOfASelectionRefusesWhatIsNotFixed(t *testing.T) {
	f := newSelectFixture(t, 4)
	ctx := context.Background()
	if err := f.st.Waive(ctx, f.ids[2], "duplicate", "test"); err != nil {
		t.Fatal(err)
	}
	_, err := f.replay(t, f.st, []int64{f.ids[0], f.ids[2], 999})
	if err == nil {
		t.Fatal("a selection with a waived and an unknown exception was replayed")
	}
	for _, want := range []string{"2 of the 3 selected", strconv.FormatInt(f.ids[2], 10) + ": waived, not fixed", "999: no such exception", "nothing was"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	_, err = Replay(ctx, ReplayOptions{Workspace: f.dir, Plan: f.p, Sink: f.sk, Store: f.st, Table: "other", IDs: []int64{f.ids[0]}})
	if err == nil {
		t.Error("a selection with --table other (not in the plan) was replayed")
	}
	f.wantLake(t, "after the refused selections")
	if e := f.status(t, 1); e.Status != ledger.StatusFixed {
		t.Errorf("row 1 is %s after a refused selection, want fixed", e.Status)
	}
}

// failMarkStore fails MarkReplayed: the state store went away between the
// replay's commit and the ledger update.
type failMarkStore struct{ ledger.Store }

func (failMarkStore) MarkReplayed(context.Context, []int64, string, string) error {
	return errors.New("state store unavailable")
}

// A selected replay that committed and then could not mark its rows is
// finished by the rerun of the same selection: the rows are marked with
// the first replay's load id and nothing is committed twice; the rows not
// selected stay fixed throughout.
func TestReplayOfASelectionRerunAfterMarkFailedDoesNotDuplicate(t *testing.T) {
	f := newSelectFixture(t, 5)
	sel := []int64{f.ids[0], f.ids[3]} // rows 1 and 4
	trs, err := f.replay(t, failMarkStore{f.st}, sel)
	if err != nil || len(trs) != 1 || trs[0].Err == nil || trs[0].Commit.SnapshotID == 0 {
		t.Fatalf("the broken replay should commit and then fail to mark: %+v %v", trs, err)
	}
	first := trs[0].LoadID
	f.wantLake(t, "after the broken replay", 1, 4)
	for _, row := range []int{1, 2, 3, 4, 5} {
		if e := f.status(t, row); e.Status != ledger.StatusFixed {
			t.Fatalf("row %d is %s after a failed mark, want fixed", row, e.Status)
		}
	}
	trs, err = f.replay(t, f.st, sel)
	if err != nil || len(trs) != 1 || trs[0].Err != nil || trs[0].ReplaysRecovered != 2 || trs[0].Commit.AlreadyCommitted {
		t.Fatalf("the rerun: %v %+v", err, trs)
	}
	f.wantLake(t, "after the rerun", 1, 4)
	for row := 1; row <= 5; row++ {
		e := f.status(t, row)
		switch {
		case row == 1 || row == 4:
			if e.Status != ledger.StatusReplayed || e.ReplayLoadID != first {
				t.Errorf("row %d: %s via %q, want replayed via %s", row, e.Status, e.ReplayLoadID, first)
			}
		case e.Status != ledger.StatusFixed:
			t.Errorf("row %d (not selected) is %s, want fixed", row, e.Status)
		}
	}
	// One replay snapshot in the table, read from its metadata.
	tbl, err := f.sk.Catalog().LoadTable(context.Background(), table.Identifier{"rsel", "orders"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range tbl.Metadata().Snapshots() {
		if s.Summary != nil && s.Summary.Properties[sink.PropKind] == sink.KindReplay {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d replay snapshots, want 1", n)
	}
}
