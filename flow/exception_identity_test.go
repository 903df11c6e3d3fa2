package flow_test

// One exception per distinct bad row over a table's life (issue 13,
// failure 1): reloads and full refreshes meet the same bad rows again and
// update their exceptions instead of opening new ones; rows that leave the
// source are closed as superseded; a fixed row replays once, keyless
// tables included. Expected values come from the generator.

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/flow"
)

// openByLine returns the committed exceptions of readings in a status,
// as "line:raw" texts, sorted; it fails on two of one line.
func inStatus(t *testing.T, st ledger.Store, status string) []string {
	t.Helper()
	var out []string
	seen := map[int64]bool{}
	for line, es := range readingsByLine(t, st) {
		for _, e := range es {
			if e.Status != status {
				continue
			}
			if seen[line] {
				t.Fatalf("two %s exceptions at line %d", status, line)
			}
			seen[line] = true
			out = append(out, fmt.Sprintf("%d:%s", e.Line, e.Raw))
		}
	}
	sort.Strings(out)
	return out
}

// badNow is the ground truth of the open queue: the bad rows of the file.
func badNow(rows []genRow) []string {
	var out []string
	for _, r := range rows {
		if r.bad {
			out = append(out, fmt.Sprintf("%d:%s", r.line, r.csv()))
		}
	}
	sort.Strings(out)
	return out
}

func wantCounts(t *testing.T, what string, out *flow.Outcome, want run.ExceptionCounts) {
	t.Helper()
	tr := out.Result.Tables[0]
	if tr.Err != nil {
		t.Fatalf("%s: %v", what, tr.Err)
	}
	if tr.ExceptionCounts != want {
		t.Fatalf("%s: exceptions %+v, want %+v", what, tr.ExceptionCounts, want)
	}
	rep := tableReport(t, out.Report, "readings")
	if rep.ExceptionQueue == nil || *rep.ExceptionQueue != want {
		t.Fatalf("%s: report exception_queue %+v, want %+v", what, rep.ExceptionQueue, want)
	}
}

func TestOneExceptionPerBadRowOverReloadsRefreshesAndReplays(t *testing.T) {
	ctx := context.Background()
	for _, store := range stores(t) {
		for _, keyed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/keyed=%v", store.name, keyed), func(t *testing.T) {
				csv, rows := genReadings(120)
				ws, p := workspace(t, map[string][]byte{"r.csv": csv}, readingsPlan(keyed))
				store.setup(t, ws, p)
				nBad := len(badNow(rows))
				if nBad != 17 { // i%7 == 3 for i in [0,120)
					t.Fatalf("generator: %d bad rows, want 17", nBad)
				}
				first := runOnce(t, ws, p, flow.RunOptions{})
				wantCounts(t, "first load", first, run.ExceptionCounts{ExceptionsNew: 17})
				st := store.open(t, ws, p)
				if got := inStatus(t, st, ledger.StatusOpen); !slices.Equal(got, badNow(rows)) {
					t.Fatalf("open after the first load:\n%v\nwant\n%v", got, badNow(rows))
				}
				ids := map[int64]int64{}
				for line, es := range readingsByLine(t, st) {
					ids[line] = es[0].ID
				}
				// A full refresh, twice: the same 17 bad rows, the same 17
				// exceptions, seen again.
				for i := range 2 {
					out := runOnce(t, ws, p, flow.RunOptions{FullRefresh: true})
					wantCounts(t, fmt.Sprintf("full refresh %d", i+1), out, run.ExceptionCounts{ExceptionsStillOpen: 17})
				}
				if n, _ := st.Count(ctx, ledger.Filter{Table: "readings"}); n != 17 {
					t.Fatalf("after two full refreshes the ledger holds %d exceptions, want 17", n)
				}
				for line, es := range readingsByLine(t, st) {
					if len(es) != 1 || es[0].ID != ids[line] || es[0].LoadID != first.Result.Tables[0].LoadID {
						t.Fatalf("line %d: %d exceptions (id %d, first seen %s), want the one of the first load", line, len(es), es[0].ID, es[0].LoadID)
					}
				}
				sameReadings(t, "after the refreshes", readingsLake(t, ws, p), wantReadings(rows, nil))
				// The source corrects three bad rows in place: a new input,
				// a load that replaces the table — their exceptions are gone.
				corrected := []int{3, 10, 17}
				for _, i := range corrected {
					rows[i].bad = false
				}
				path := filepath.Join(ws.Dir, "in", "r.csv")
				if err := os.WriteFile(path, renderReadings(rows), 0o644); err != nil {
					t.Fatal(err)
				}
				later := time.Now().Add(time.Minute)
				os.Chtimes(path, later, later)
				second := runOnce(t, ws, p, flow.RunOptions{})
				wantCounts(t, "load of the corrected file", second, run.ExceptionCounts{ExceptionsStillOpen: 14, ExceptionsGone: 3})
				if got := inStatus(t, st, ledger.StatusOpen); !slices.Equal(got, badNow(rows)) {
					t.Fatalf("open after the corrected file:\n%v\nwant\n%v", got, badNow(rows))
				}
				for _, i := range corrected {
					e, _ := st.Get(ctx, ids[rows[i].line])
					if e.Status != ledger.StatusSuperseded || e.SupersededBy != second.Result.Tables[0].LoadID {
						t.Fatalf("line %d corrected at the source: %s by %q, want superseded by %s", rows[i].line, e.Status, e.SupersededBy, second.Result.Tables[0].LoadID)
					}
				}
				sameReadings(t, "after the corrected file", readingsLake(t, ws, p), wantReadings(rows, nil))
				// Resolve every open one (each bad row once) and replay:
				// every fixed row lands exactly once.
				fixed := map[int64]bool{}
				for _, r := range rows {
					if r.bad {
						if err := st.Resolve(ctx, ids[r.line], map[string]string{"value": r.value}, "ops", ""); err != nil {
							t.Fatal(err)
						}
						fixed[r.line] = true
					}
				}
				rep, err := flow.Replay(ctx, flow.ReplayOptions{Workspace: ws, Plan: p, By: "ops"})
				if err != nil {
					t.Fatal(err)
				}
				if tr := tableReport(t, rep.Report, "readings"); tr.RowsLoaded != 14 {
					t.Fatalf("replay loaded %d rows, want 14", tr.RowsLoaded)
				}
				sameReadings(t, "after the replay", readingsLake(t, ws, p), wantReadings(rows, fixed))
				// A full refresh carries the recorded fixes: still each once.
				out := runOnce(t, ws, p, flow.RunOptions{FullRefresh: true, Tables: []string{"readings"}})
				wantCounts(t, "full refresh after the replay", out, run.ExceptionCounts{})
				sameReadings(t, "after the last full refresh", readingsLake(t, ws, p), wantReadings(rows, fixed))
				if got := inStatus(t, st, ledger.StatusOpen); len(got) != 0 {
					t.Fatalf("open after everything was fixed: %v", got)
				}
				if n, _ := st.Count(ctx, ledger.Filter{Table: "readings", Status: ledger.StatusReplayed}); n != 14 {
					t.Fatalf("replayed: %d, want 14", n)
				}
			})
		}
	}
}

// A database row is recognised by its key: read again at another record
// number (rows before it deleted), it is the same exception; a bad row
// deleted at the source is gone (superseded). Counts by hand.
func TestDatabaseBadRowIsItsKey(t *testing.T) {
	file := filepath.Join(t.TempDir(), "erp.db")
	db, err := sql.Open("sqlite", file)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	dbExec(t, db, `CREATE TABLE readings (id INTEGER PRIMARY KEY, station TEXT, value TEXT)`)
	for i := 1; i <= 30; i++ {
		v := fmt.Sprintf("%d.25", i)
		if i%5 == 0 { // 5, 10, …, 30: 6 bad rows
			v = "x" + v
		}
		dbExec(t, db, `INSERT INTO readings VALUES (?, ?, ?)`, i, fmt.Sprintf("st%d", i%4), v)
	}
	ws, p := workspace(t, nil, `schema_version: 1
platform: {prefix: litekey}
sources:
  erp: {kind: sqlite, path: `+file+`}
tables:
  readings:
    source: {name: erp, table: readings}
    columns:
      - {name: id, type: long, required: true}
      - {name: station, type: string}
      - {name: value, type: "decimal(10,2)"}
    load: {keys: [id]}
`)
	first := runOnce(t, ws, p, flow.RunOptions{})
	wantCounts(t, "first read", first, run.ExceptionCounts{ExceptionsNew: 6})
	// Rows 1–4 and the bad row 5 leave the source: every later row moves
	// up five records.
	dbExec(t, db, `DELETE FROM readings WHERE id <= 5`)
	second := runOnce(t, ws, p, flow.RunOptions{})
	wantCounts(t, "second read", second, run.ExceptionCounts{ExceptionsStillOpen: 5, ExceptionsGone: 1})
	st := openLedger(t, ws, p)
	ctx := context.Background()
	if n, _ := st.Count(ctx, ledger.Filter{Table: "readings", Status: ledger.StatusOpen}); n != 5 {
		t.Fatalf("open: %d, want 5", n)
	}
	gone, _, err := st.List(ctx, ledger.Filter{Table: "readings", Status: ledger.StatusSuperseded}, ledger.Page{})
	if err != nil || len(gone) != 1 || gone[0].Key != "id=5" {
		t.Fatalf("superseded: %+v %v, want the row with id 5", gone, err)
	}
}
