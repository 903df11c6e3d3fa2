package flow_test

// Replay lands a fixed row exactly once, whatever happened before: a crash
// between its commit and the ledger update (issue 13, failure 8), a state
// store that failed to mark the rows (issue 20), a key already in the
// table (a true duplicate is refused). The data is generated here, with its
// own ground truth: the expected lake is computed from the generator, never
// from Lima's output.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/flow"
)

// genRow is one generated source row: its true values, and whether the
// file carries it broken (value "x<true value>", which does not cast).
type genRow struct {
	id      int
	station string
	value   string // the true value, decimal(10,2) text
	bad     bool
	line    int64 // its line in the file (the header is line 1)
}

func (r genRow) text() string { return fmt.Sprintf("%d|%s|%s", r.id, r.station, r.value) }

// genReadings writes n rows; every 7th row (i%7 == 3) is broken.
func genReadings(n int) ([]byte, []genRow) {
	var rows []genRow
	for i := range n {
		rows = append(rows, genRow{id: 1000 + i, station: fmt.Sprintf("st%02d", i%13), value: fmt.Sprintf("%d.%02d", (i*37)%500, (i*11)%100), bad: i%7 == 3, line: int64(i + 2)})
	}
	return renderReadings(rows), rows
}

// renderReadings writes rows as the CSV file (a bad row's value broken).
func renderReadings(rows []genRow) []byte {
	var b strings.Builder
	b.WriteString("id,station,value\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "%s\n", r.csv())
	}
	return []byte(b.String())
}

// csv is the row's line in the file, without its line ending.
func (r genRow) csv() string {
	v := r.value
	if r.bad {
		v = "x" + v
	}
	return fmt.Sprintf("%d,%s,%s", r.id, r.station, v)
}

func readingsPlan(keyed bool) string {
	load := ""
	if keyed {
		load = "\n    load: {keys: [id]}"
	}
	return `schema_version: 1
platform: {prefix: gen}
sources:
  in: {kind: files, path: in}
tables:
  readings:
    source: {name: in, files: ["*.csv"]}
    columns:
      - {name: id, type: long, required: true}
      - {name: station, type: string}
      - {name: value, type: "decimal(10,2)"}` + load + "\n"
}

// lakeRows reads the table with iceberg-go, as an outside reader would,
// and returns its rows as sorted "id|station|value" texts.
func readingsLake(t *testing.T, ws flow.Workspace, p *plan.Plan) []string {
	t.Helper()
	_, tbl := loadIceberg(t, ws, p, "readings")
	_, it, err := tbl.Scan(table.WithSelectedFields("id", "station", "value")).ToArrowRecords(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		ids := rec.Column(0).(*array.Int64)
		st := rec.Column(1).(*array.String)
		val := rec.Column(2).(*array.Decimal128)
		scale := val.DataType().(*arrow.Decimal128Type).Scale
		for i := range int(rec.NumRows()) {
			out = append(out, fmt.Sprintf("%d|%s|%s", ids.Value(i), st.Value(i), val.Value(i).ToString(scale)))
		}
		rec.Release()
	}
	sort.Strings(out)
	return out
}

// wantRows is the ground truth: every good row, and every bad row that was
// fixed (with its true value), once each.
func wantReadings(rows []genRow, fixed map[int64]bool) []string {
	var out []string
	for _, r := range rows {
		if !r.bad || fixed[r.line] {
			out = append(out, r.text())
		}
	}
	sort.Strings(out)
	return out
}

func sameReadings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	count := map[string]int{}
	for _, r := range got {
		count[r]++
	}
	for _, r := range want {
		count[r]--
	}
	var diff []string
	for r, n := range count {
		if n != 0 {
			diff = append(diff, fmt.Sprintf("%s:%+d", r, n))
		}
	}
	sort.Strings(diff)
	if len(diff) > 10 {
		diff = append(diff[:10], "…")
	}
	t.Fatalf("%s: the lake holds %d rows, want %d; surplus(+)/missing(-): %v", what, len(got), len(want), diff)
}

// byLine lists the committed exceptions of readings by their line.
func readingsByLine(t *testing.T, st ledger.Store) map[int64][]ledger.Exception {
	t.Helper()
	out := map[int64][]ledger.Exception{}
	var after ledger.Cursor
	for {
		page, next, err := st.List(context.Background(), ledger.Filter{Table: "readings"}, ledger.Page{After: after, Limit: ledger.MaxPageSize})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page {
			out[e.Line] = append(out[e.Line], e)
		}
		if next == "" {
			return out
		}
		after = next
	}
}

func buildLima(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "lima-tui")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/lima-tui").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

func lima(t *testing.T, bin string, env []string, fault string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	if fault != "" {
		cmd.Env = append(cmd.Env, "LIMA_FAULTPOINT="+fault)
	}
	out, err := cmd.CombinedOutput()
	if fault != "" {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != -1 {
			t.Fatalf("%v with %s armed: the process was not killed: %v\n%s", args, fault, err, out)
		}
		return
	}
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
}

// replaySnapshots returns the load ids of the table's replay snapshots,
// oldest first, read from the Iceberg metadata directly.
func replaySnapshots(t *testing.T, ws flow.Workspace, p *plan.Plan) []string {
	t.Helper()
	_, tbl := loadIceberg(t, ws, p, "readings")
	var out []string
	for _, s := range tbl.Metadata().Snapshots() {
		if s.Summary != nil && s.Summary.Properties[sink.PropKind] == sink.KindReplay {
			out = append(out, s.Summary.Properties[sink.PropLoadID])
		}
	}
	return out
}

// TestReplayKilledAfterCommitThenResolveThenReplay is failure 8 of issue
// 13: a replay killed after its commit and before the ledger marks its
// rows, then one more resolve, then replay again must not commit the
// earlier rows a second time — keyless and keyed, SQLite and PostgreSQL.
// Killed before its commit instead, nothing is visible and the rows stay
// fixed (the ledger is never marked ahead of the lake).
func TestReplayKilledAfterCommitThenResolveThenReplay(t *testing.T) {
	bin := buildLima(t)
	csv, rows := genReadings(300)
	var bad []genRow
	for _, r := range rows {
		if r.bad {
			bad = append(bad, r)
		}
	}
	if len(bad) != 43 { // i%7 == 3 for i in [0,300): 3, 10, …, 297
		t.Fatalf("generator: %d bad rows, want 43", len(bad))
	}
	for _, store := range stores(t) {
		for _, keyed := range []bool{false, true} {
			for _, point := range []string{"replay-after-commit", "replay-before-commit"} {
				name := fmt.Sprintf("%s/keyed=%v/%s", store.name, keyed, point)
				t.Run(name, func(t *testing.T) {
					ctx := context.Background()
					ws, p := workspace(t, map[string][]byte{"r.csv": csv}, readingsPlan(keyed))
					store.setup(t, ws, p)
					planArg := []string{"--plan", ws.PlanPath()}
					lima(t, bin, store.env, "", append([]string{"run", "--force"}, planArg...)...)
					st := store.open(t, ws, p)
					ex := readingsByLine(t, st)
					if len(ex) != len(bad) {
						t.Fatalf("%d bad lines in the ledger, want %d", len(ex), len(bad))
					}
					resolve := func(r genRow) {
						t.Helper()
						es := ex[r.line]
						if len(es) != 1 {
							t.Fatalf("line %d: %d exceptions", r.line, len(es))
						}
						if err := st.Resolve(ctx, es[0].ID, map[string]string{"value": r.value}, "ops", ""); err != nil {
							t.Fatal(err)
						}
					}
					fixed := map[int64]bool{}
					for _, r := range bad[:20] {
						resolve(r)
						fixed[r.line] = true
					}
					lima(t, bin, store.env, point, append([]string{"exceptions", "replay"}, planArg...)...)
					first := replaySnapshots(t, ws, p)
					after := readingsLake(t, ws, p)
					if point == "replay-before-commit" {
						// Nothing visible, nothing marked.
						if len(first) != 0 {
							t.Fatalf("a replay killed before its commit left snapshots %v", first)
						}
						sameReadings(t, "after the kill before the commit", after, wantReadings(rows, nil))
						for _, r := range bad[:20] {
							if e, _ := st.Get(ctx, ex[r.line][0].ID); e.Status != ledger.StatusFixed {
								t.Fatalf("line %d is %s after a replay killed before its commit, want fixed", r.line, e.Status)
							}
						}
					} else {
						if len(first) != 1 {
							t.Fatalf("replay snapshots after the kill: %v", first)
						}
						sameReadings(t, "after the kill after the commit", after, wantReadings(rows, fixed))
					}
					// One more resolve, then replay to the end.
					resolve(bad[20])
					fixed[bad[20].line] = true
					lima(t, bin, store.env, "", append([]string{"exceptions", "replay"}, planArg...)...)
					sameReadings(t, "after the second replay", readingsLake(t, ws, p), wantReadings(rows, fixed))
					snaps := replaySnapshots(t, ws, p)
					for _, r := range bad {
						e, err := st.Get(ctx, ex[r.line][0].ID)
						if err != nil {
							t.Fatal(err)
						}
						switch {
						case !fixed[r.line]:
							if e.Status != ledger.StatusOpen {
								t.Errorf("line %d: %s, want open", r.line, e.Status)
							}
						case e.Status != ledger.StatusReplayed:
							t.Errorf("line %d: %s, want replayed", r.line, e.Status)
						case point == "replay-after-commit" && r.line != bad[20].line && e.ReplayLoadID != first[0]:
							t.Errorf("line %d replayed by %s, want the first replay %s", r.line, e.ReplayLoadID, first[0])
						case !slices.Contains(snaps, e.ReplayLoadID):
							t.Errorf("line %d replayed by %s, which is no replay snapshot of the table (%v)", r.line, e.ReplayLoadID, snaps)
						}
					}
					// Replay again: nothing left, nothing added.
					lima(t, bin, store.env, "", append([]string{"exceptions", "replay"}, planArg...)...)
					sameReadings(t, "after a third replay", readingsLake(t, ws, p), wantReadings(rows, fixed))
				})
			}
		}
	}
}

// failMark is a state store whose MarkReplayed fails (the state store went
// away between the replay's commit and the ledger update).
type failMark struct{ ledger.Store }

func (failMark) MarkReplayed(context.Context, []int64, string, string) error {
	return errors.New("state store unavailable")
}

// TestReplayRerunAfterMarkFailedFinishesOnAKeyedTable is issue 20's
// defect: a replay commits, then marking its exceptions fails; the rerun
// must recognise its own commit and mark them replayed with that replay's
// load id — not refuse the rows as duplicates of themselves ("the table
// already has key 1009") and reopen them. A later full refresh keeps the
// demo's 12 loaded + 2 replayed rows.
func TestReplayRerunAfterMarkFailedFinishesOnAKeyedTable(t *testing.T) {
	ctx := context.Background()
	ws, p := newDemo(t)
	runOnce(t, ws, p, flow.RunOptions{})
	st := openLedger(t, ws, p)
	// 1009 had the impossible date 2026-02-30; 1010 the cost "12x.50".
	e1009 := findException(t, st, "inspections", "inspections_2026-02.csv", 4)
	e1010 := findException(t, st, "inspections", "inspections_2026-02.csv", 5)
	if err := st.Resolve(ctx, e1009.ID, map[string]string{"inspected_on": "2026-02-28"}, "ops", ""); err != nil {
		t.Fatal(err)
	}
	if err := st.Resolve(ctx, e1010.ID, map[string]string{"cost": "12.50"}, "ops", ""); err != nil {
		t.Fatal(err)
	}
	sk, err := flow.OpenPlanSink(ctx, ws, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	trs, err := run.Replay(ctx, run.ReplayOptions{Workspace: ws.Dir, Plan: p, Sink: sk, Store: failMark{st}, Table: "inspections", RunID: "run-broken", By: "ops"})
	sk.Close()
	if err != nil || len(trs) != 1 || trs[0].Err == nil || trs[0].Commit.SnapshotID == 0 {
		t.Fatalf("the broken replay should commit and then fail to mark: %+v %v", trs, err)
	}
	firstLoad := trs[0].LoadID
	_, tbl := loadIceberg(t, ws, p, "inspections")
	if n := countRows(t, tbl); n != 14 {
		t.Fatalf("after the broken replay the lake holds %d rows, want 12 + 2", n)
	}
	for _, id := range []int64{e1009.ID, e1010.ID} {
		if e, _ := st.Get(ctx, id); e.Status != ledger.StatusFixed {
			t.Fatalf("exception %d is %s after a failed mark, want fixed", id, e.Status)
		}
	}
	// The rerun finishes the first replay's work and commits nothing.
	if _, err := flow.Replay(ctx, flow.ReplayOptions{Workspace: ws, Plan: p, By: "ops"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{e1009.ID, e1010.ID} {
		if e, _ := st.Get(ctx, id); e.Status != ledger.StatusReplayed || e.ReplayLoadID != firstLoad {
			t.Errorf("exception %d: %s via %q (failures %+v), want replayed via %s", id, e.Status, e.ReplayLoadID, e.Failures, firstLoad)
		}
	}
	_, tbl = loadIceberg(t, ws, p, "inspections")
	if n := countRows(t, tbl); n != 14 {
		t.Fatalf("after the rerun the lake holds %d rows, want 14", n)
	}
	// A full refresh applies the recorded fixes: 12 + 2 rows stay.
	refresh := runOnce(t, ws, p, flow.RunOptions{Tables: []string{"inspections"}, FullRefresh: true})
	if rt := tableReport(t, refresh.Report, "inspections"); rt.RowsLoaded != 14 {
		t.Fatalf("the refresh loaded %d rows, want 14", rt.RowsLoaded)
	}
	_, tbl = loadIceberg(t, ws, p, "inspections")
	if n := countRows(t, tbl); n != 14 {
		t.Fatalf("after the full refresh the lake holds %d rows, want 14", n)
	}
}

// TestReplayRefusesAKeyAlreadyInTheTable: a fix that gives a row the key of
// a row already in the lake is a true duplicate — refused with rule
// unique and reopened; the other fixed row lands; the lake keeps one row
// per key.
func TestReplayRefusesAKeyAlreadyInTheTable(t *testing.T) {
	ctx := context.Background()
	csv, rows := genReadings(60)
	ws, p := workspace(t, map[string][]byte{"r.csv": csv}, readingsPlan(true))
	runOnce(t, ws, p, flow.RunOptions{})
	st := openLedger(t, ws, p)
	ex := readingsByLine(t, st)
	var bad []genRow
	for _, r := range rows {
		if r.bad {
			bad = append(bad, r)
		}
	}
	// bad[0] is fixed honestly; bad[1] gets the id of row 0 (good, loaded).
	dupID := fmt.Sprint(rows[0].id)
	if err := st.Resolve(ctx, ex[bad[0].line][0].ID, map[string]string{"value": bad[0].value}, "ops", ""); err != nil {
		t.Fatal(err)
	}
	if err := st.Resolve(ctx, ex[bad[1].line][0].ID, map[string]string{"value": bad[1].value, "id": dupID}, "ops", ""); err != nil {
		t.Fatal(err)
	}
	out, err := flow.Replay(ctx, flow.ReplayOptions{Workspace: ws, Plan: p, By: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	tr := tableReport(t, out.Report, "readings")
	if tr.RowsRead != 2 || tr.RowsLoaded != 1 || tr.RowsQuarantined != 1 {
		t.Fatalf("replay read %d loaded %d held %d, want 2, 1, 1", tr.RowsRead, tr.RowsLoaded, tr.RowsQuarantined)
	}
	sameReadings(t, "after the replay", readingsLake(t, ws, p), wantReadings(rows, map[int64]bool{bad[0].line: true}))
	e, _ := st.Get(ctx, ex[bad[1].line][0].ID)
	if e.Status != ledger.StatusOpen || len(e.Failures) != 1 || e.Failures[0].Rule != run.RuleUnique || !strings.Contains(e.Failures[0].Reason, dupID) {
		t.Fatalf("the duplicate: %s %+v, want open with rule unique naming %s", e.Status, e.Failures, dupID)
	}
}

// TestKeylessRunRefreshResolveEveryCopyReplayLandsOnce is issue 13's
// failure 1 as a user met it: in a table without a key, `run`, then
// `run --full-refresh`, then resolve every exception of each bad row and
// replay: each fixed row must be in the lake once (the refresh met the same
// bad rows again: one exception each, not a second copy).
func TestKeylessRunRefreshResolveEveryCopyReplayLandsOnce(t *testing.T) {
	ctx := context.Background()
	csv, rows := genReadings(50)
	ws, p := workspace(t, map[string][]byte{"r.csv": csv}, readingsPlan(false))
	runOnce(t, ws, p, flow.RunOptions{})
	runOnce(t, ws, p, flow.RunOptions{FullRefresh: true})
	st := openLedger(t, ws, p)
	fixed := map[int64]bool{}
	byL := readingsByLine(t, st)
	for _, r := range rows {
		if !r.bad {
			continue
		}
		if n := len(byL[r.line]); n != 1 {
			t.Errorf("line %d: %d exceptions after run and full refresh, want 1", r.line, n)
		}
		for _, e := range byL[r.line] {
			if err := st.Resolve(ctx, e.ID, map[string]string{"value": r.value}, "ops", ""); err != nil {
				t.Fatal(err)
			}
		}
		fixed[r.line] = true
	}
	if len(fixed) != 7 { // i%7 == 3 for i in [0,50)
		t.Fatalf("generator: %d bad rows, want 7", len(fixed))
	}
	out, err := flow.Replay(ctx, flow.ReplayOptions{Workspace: ws, Plan: p, By: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	if tr := tableReport(t, out.Report, "readings"); tr.RowsLoaded != 7 {
		t.Errorf("replay loaded %d rows, want 7", tr.RowsLoaded)
	}
	sameReadings(t, "after the replay", readingsLake(t, ws, p), wantReadings(rows, fixed))
}
