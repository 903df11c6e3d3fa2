package run

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/ledger"
)

// More fixed exceptions than one page of the ledger's List: the replay
// reads every page, commits every fixed row once and marks every exception
// replayed (a replay that stopped after the first page left the rest fixed
// and out of the lake; one that never stopped read the first page again).
func TestReplayReadsEveryPageOfFixedExceptions(t *testing.T) {
	if testing.Short() {
		t.Skip("5,003 exceptions")
	}
	replayPages(t, ledger.MaxPageSize+3, 0)
}

// The same over pages of two rows (the store answers at most two a page),
// fast: 5 rows are pages of 2, 2 and 1; 4 rows two full pages.
func TestReplayReadsEveryPageOfFixedExceptionsSmallPages(t *testing.T) {
	for _, n := range []int{1, 2, 4, 5} {
		t.Run(strconv.Itoa(n), func(t *testing.T) { replayPages(t, n, 2) })
	}
}

// smallPages is a Store whose List answers at most max exceptions a page,
// and fails after 100 pages.
type smallPages struct {
	ledger.Store
	max   int
	lists int
}

func (s *smallPages) List(ctx context.Context, f ledger.Filter, p ledger.Page) ([]ledger.Exception, ledger.Cursor, error) {
	s.lists++
	if s.lists > 100 {
		// A replay reading the same page again and again: fail, not hang.
		return nil, "", errors.New("smallPages: more than 100 pages listed")
	}
	if p.Limit == 0 || p.Limit > s.max {
		p.Limit = s.max
	}
	return s.Store.List(ctx, f, p)
}

// replayPages replays n fixed exceptions of one table, the store's pages
// capped at pageCap rows (0: the ledger's own pages).
func replayPages(t *testing.T, n, pageCap int) {
	ctx := context.Background()
	dir, p, sk, st := replayWorkspace(t, `schema_version: 1
platform: {prefix: rpg}
sources: {in: {kind: files, path: in}}
tables:
  orders:
    source: {name: in, files: ["*.csv"], format: csv, csv: {header: "yes"}}
    columns:
      - {name: id, type: long}
      - {name: amount, type: long}
`, "id,amount\n")
	var store ledger.Store = st
	var sp *smallPages
	if pageCap > 0 {
		sp = &smallPages{Store: st, max: pageCap}
		store = sp
	}

	// Rows id 1..n, each held back for amount "x", fixed to amount = 2·id.
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
	for i := range ex {
		if err := st.Resolve(ctx, ex[i].ID, map[string]string{"amount": strconv.Itoa(2 * (i + 1))}, "test", ""); err != nil {
			t.Fatal(err)
		}
	}
	if c, err := st.Count(ctx, ledger.Filter{Table: "orders", Status: ledger.StatusFixed}); err != nil || c != int64(n) {
		t.Fatalf("fixed before the replay: %d %v, want %d", c, err, n)
	}

	trs, err := Replay(ctx, ReplayOptions{Workspace: dir, Plan: p, Sink: sk, Store: store, RunID: "run-2", By: "test"})
	if err != nil || len(trs) != 1 {
		t.Fatalf("replay: %v, %d tables, want 1", err, len(trs))
	}
	tr := trs[0]
	if tr.Err != nil || tr.Status != StatusLoaded || tr.RowsLoaded != int64(n) {
		t.Fatalf("replay: status %s, %d rows loaded, err %v; want loaded, %d rows", tr.Status, tr.RowsLoaded, tr.Err, n)
	}
	for _, want := range []struct {
		status string
		n      int64
	}{{ledger.StatusFixed, 0}, {ledger.StatusReplayed, int64(n)}} {
		if c, err := st.Count(ctx, ledger.Filter{Table: "orders", Status: want.status}); err != nil || c != want.n {
			t.Errorf("%s after the replay: %d %v, want %d", want.status, c, err, want.n)
		}
	}

	// The lake, read with iceberg-go: ids 1..n once each, amount 2·id.
	tbl, err := sk.Catalog().LoadTable(ctx, table.Identifier{"rpg", "orders"})
	if err != nil {
		t.Fatal(err)
	}
	_, it, err := tbl.Scan(table.WithSelectedFields("id", "amount")).ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seen := make(map[int64]bool, n)
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		var ids, amounts *array.Int64
		for c, f := range rec.Schema().Fields() {
			switch f.Name {
			case "id":
				ids = rec.Column(c).(*array.Int64)
			case "amount":
				amounts = rec.Column(c).(*array.Int64)
			}
		}
		for r := 0; r < int(rec.NumRows()); r++ {
			id := ids.Value(r)
			if seen[id] || id < 1 || id > int64(n) || amounts.Value(r) != 2*id {
				t.Fatalf("lake row id %d amount %d: a duplicate, out of 1..%d or not the fix", id, amounts.Value(r), n)
			}
			seen[id] = true
		}
		rec.Release()
	}
	if len(seen) != n {
		t.Fatalf("lake has %d distinct ids, want %d", len(seen), n)
	}
	// n rows are ⌈n/pageCap⌉ pages.
	if want := (n + pageCap - 1) / max(pageCap, 1); sp != nil && sp.lists < want {
		t.Errorf("the replay listed %d page(s) of %d, want at least %d", sp.lists, pageCap, want)
	}
}
