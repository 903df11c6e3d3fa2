package flow_test

import (
	"context"
	"errors"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/reports"
)

func openLedger(t *testing.T, ws flow.Workspace, p *plan.Plan) ledger.Store {
	t.Helper()
	st, err := flow.OpenLedger(context.Background(), ws, p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// ledgerMatchesReport checks that the committed exceptions of a run's loads
// are exactly what its report counts.
func ledgerMatchesReport(t *testing.T, st ledger.Store, r *reports.Report) {
	t.Helper()
	ctx := context.Background()
	var total int64
	for _, tr := range r.Tables {
		if tr.Status != "loaded" {
			continue
		}
		n, err := st.Count(ctx, ledger.Filter{Table: tr.Name, LoadID: tr.LoadID})
		if err != nil {
			t.Fatal(err)
		}
		want := tr.RowsQuarantined
		for _, f := range tr.Files {
			if f.Status == "unreadable" {
				want++
			}
		}
		if n != want {
			t.Errorf("%s: ledger holds %d exceptions of load %s, report says %d", tr.Name, n, tr.LoadID, want)
		}
		total += n
	}
	if total != r.Exceptions.Total {
		t.Errorf("ledger %d exceptions, report total %d", total, r.Exceptions.Total)
	}
}

func TestDemoExceptionsAreInTheLedgerWithOwnerAndDeadline(t *testing.T) {
	ws, p := newDemo(t)
	out := runOnce(t, ws, p, flow.RunOptions{})
	st := openLedger(t, ws, p)
	ledgerMatchesReport(t, st, out.Report)
	ctx := context.Background()
	byOwner, err := st.CountBy(ctx, ledger.Filter{}, ledger.ByOwner)
	if err != nil {
		t.Fatal(err)
	}
	for o, n := range out.Report.Exceptions.ByOwner {
		if byOwner[o] != n {
			t.Errorf("owner %s: ledger %d, report %d", o, byOwner[o], n)
		}
	}
	byRule, err := st.CountBy(ctx, ledger.Filter{}, ledger.ByRule)
	if err != nil {
		t.Fatal(err)
	}
	for r, n := range out.Report.Exceptions.ByRule {
		if byRule[r] != n {
			t.Errorf("rule %s: ledger %d, report %d", r, byRule[r], n)
		}
	}
	page, _, err := st.List(ctx, ledger.Filter{}, ledger.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range page {
		if e.Owner == "" || e.Deadline.IsZero() || e.Status != ledger.StatusOpen {
			t.Errorf("exception %d: owner %q deadline %v status %s", e.ID, e.Owner, e.Deadline, e.Status)
		}
		// The raw row is kept byte for byte: the CRLF-terminated March file
		// and the quoted thousands both survive.
		if e.Table == "inspections" && e.Line == 4 && e.File == "inspections_2026-03.csv" && string(e.Raw) != `1007,0010010015,2026-03-12,450,1,320.000,PASS,J. Park` {
			t.Errorf("raw bytes %q", e.Raw)
		}
	}
	// A rerun adds no exception: the input was already loaded.
	runOnce(t, ws, p, flow.RunOptions{})
	// 13: the demo's held-back rows and files (see TestDemoBalancesWithHandCountedTotals).
	if n, _ := st.Count(ctx, ledger.Filter{}); n != 13 {
		t.Fatalf("after a rerun the ledger holds %d exceptions, want 13", n)
	}
}

func findException(t *testing.T, st ledger.Store, table, file string, line int64) ledger.Exception {
	t.Helper()
	page, _, err := st.List(context.Background(), ledger.Filter{Table: table}, ledger.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range page {
		if e.File == file && e.Line == line {
			return e
		}
	}
	t.Fatalf("no exception at %s:%d", file, line)
	return ledger.Exception{}
}

func TestFixTwoRowsReplayOnceAndKeepThemOnReload(t *testing.T) {
	ws, p := newDemo(t)
	runOnce(t, ws, p, flow.RunOptions{})
	st := openLedger(t, ws, p)
	ctx := context.Background()
	// 1009 had the impossible date 2026-02-30; 1010 the cost "12x.50".
	e1009 := findException(t, st, "inspections", "inspections_2026-02.csv", 4)
	e1010 := findException(t, st, "inspections", "inspections_2026-02.csv", 5)
	if err := st.Resolve(ctx, e1009.ID, map[string]string{"inspected_on": "2026-02-28"}, "ops", "date confirmed with the plant"); err != nil {
		t.Fatal(err)
	}
	if err := st.Resolve(ctx, e1010.ID, map[string]string{"cost": "12.50"}, "ops", ""); err != nil {
		t.Fatal(err)
	}
	out, err := flow.Replay(ctx, flow.ReplayOptions{Workspace: ws, Plan: p, By: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	tr := tableReport(t, out.Report, "inspections")
	if tr.RowsRead != 2 || tr.RowsLoaded != 2 || tr.RowsQuarantined != 0 || !tr.Balanced || tr.Reconciliation != gates.Pass {
		t.Fatalf("replay: %+v", tr)
	}
	_, tbl := loadIceberg(t, ws, p, "inspections")
	if n := countRows(t, tbl); n != 14 {
		t.Fatalf("after replay the lake holds %d rows, want 12 + 2", n)
	}
	for _, id := range []int64{e1009.ID, e1010.ID} {
		if e, _ := st.Get(ctx, id); e.Status != ledger.StatusReplayed || e.ReplayLoadID != tr.LoadID {
			t.Errorf("exception %d: %s via %q, want replayed via %s", id, e.Status, e.ReplayLoadID, tr.LoadID)
		}
	}
	// Replay again: nothing is fixed any more, nothing is added.
	again, err := flow.Replay(ctx, flow.ReplayOptions{Workspace: ws, Plan: p, By: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Report.Tables) != 0 {
		t.Fatalf("second replay did something: %+v", again.Report.Tables)
	}
	_, tbl = loadIceberg(t, ws, p, "inspections")
	if n := countRows(t, tbl); n != 14 {
		t.Fatalf("after a second replay the lake holds %d rows, want 14", n)
	}
	// Gate 4 of the original load still proves the whole table: the
	// replayed rows and their sums are accounted for. cost: 6682.500 +
	// 100.000 (1009) + 12.500 (1010).
	recs, err := flow.Reconcile(ctx, ws, p, filepath.Base(filepath.Dir(mustLatestLoad(t, ws))))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Status != gates.Pass {
			t.Errorf("%s after replay: %+v", r.Table, r.Checks)
		}
		if r.Table == "inspections" && r.ControlTotals["cost"].Target != "6795.000" {
			t.Errorf("cost after replay %+v, want 6795.000", r.ControlTotals["cost"])
		}
	}
	// A full refresh reads the bad rows again: their recorded fixes apply,
	// so the table keeps 14 rows and no new exception appears for them.
	refresh := runOnce(t, ws, p, flow.RunOptions{Tables: []string{"inspections"}, FullRefresh: true})
	rt := tableReport(t, refresh.Report, "inspections")
	if rt.RowsLoaded != 14 || rt.RowsQuarantined != 2 || !rt.Balanced || rt.Reconciliation != gates.Pass {
		t.Fatalf("refresh after replay: loaded %d held %d (%s)", rt.RowsLoaded, rt.RowsQuarantined, rt.Reconciliation)
	}
	open, _ := st.Count(ctx, ledger.Filter{Table: "inspections", Status: ledger.StatusOpen, LoadID: rt.LoadID})
	if open != 3 { // the ragged row, the duplicate 1007 and the binary April file
		t.Fatalf("open exceptions of the refresh: %d, want 3", open)
	}
}

// mustLatestLoad returns the report path of the newest run that loaded data
// (the first run of the test).
func mustLatestLoad(t *testing.T, ws flow.Workspace) string {
	t.Helper()
	ents, _ := os.ReadDir(ws.ReportsDir())
	for _, e := range ents {
		r, err := reports.Read(filepath.Join(ws.ReportsDir(), e.Name(), "report.json"))
		if err == nil && len(r.Tables) > 0 && r.Tables[0].Mode == "full" && r.Tables[0].Status == "loaded" {
			return filepath.Join(ws.ReportsDir(), e.Name(), "report.json")
		}
	}
	t.Fatal("no loading run")
	return ""
}

func TestErrorBudgetOneBelowAndOneAbove(t *testing.T) {
	// inspections holds back 4 rows: a budget of 4 passes, 3 fails.
	for _, c := range []struct {
		budget string
		ok     bool
	}{{"4", true}, {"3", false}, {"25%", true}, {"24%", false}} {
		ws, p := newDemo(t)
		// 4 of 16 data rows is exactly 25%.
		p.Tables["inspections"].ErrorBudget = c.budget
		out := runOnce(t, ws, p, flow.RunOptions{Tables: []string{"inspections"}})
		tr := out.Result.Tables[0]
		_, tbl := loadIceberg(t, ws, p, "inspections")
		st := openLedger(t, ws, p)
		n, _ := st.Count(context.Background(), ledger.Filter{Table: "inspections"})
		if c.ok {
			if tr.Status != "loaded" || countRows(t, tbl) != 12 {
				t.Errorf("budget %s: %s, want loaded", c.budget, tr.Status)
			}
		} else {
			if tr.Status != "failed" || !strings.Contains(tr.Err.Error(), "error budget") || tbl.CurrentSnapshot() != nil || out.Report.ExitCode() != 1 {
				t.Errorf("budget %s: %s (%v), want failed with nothing committed", c.budget, tr.Status, tr.Err)
			}
		}
		if n != 5 {
			t.Errorf("budget %s: ledger holds %d exceptions, want 5 (kept for inspection either way)", c.budget, n)
		}
	}
}

// TestKillBetweenWriteAndCommit kills a real lima-tui process after it
// wrote its exceptions and data files but before the commit, then after the
// commit but before the exceptions were published; each time the next run
// settles the ledger so that it matches the lake exactly.
func TestKillBetweenWriteAndCommit(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "lima-tui")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/lima-tui").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	for _, store := range stores(t) {
		for _, point := range []string{"before-commit", "after-commit"} {
			t.Run(store.name+"/"+point, func(t *testing.T) {
				ws, p := newDemo(t)
				store.setup(t, ws, p)
				cmd := exec.Command(bin, "run", "--force", "--plan", ws.PlanPath(), "--table", "inspections")
				cmd.Env = append(os.Environ(), "LIMA_FAULTPOINT="+point)
				cmd.Env = append(cmd.Env, store.env...)
				err := cmd.Run()
				if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != -1 {
					t.Fatalf("the process was not killed: %v", err)
				}
				st := store.open(t, ws, p)
				pending, err := st.PendingLoads(context.Background())
				if err != nil || len(pending) != 1 {
					t.Fatalf("pending loads after the kill: %v %v", pending, err)
				}
				// The killed process could not record its end: its run is
				// still "running" until the next run of the workspace.
				killed := runsWithStatus(t, st, "running")
				if len(killed) != 1 {
					t.Fatalf("runs left running by the kill: %v, want 1", killed)
				}
				_, tbl := loadIceberg(t, ws, p, "inspections")
				if (tbl.CurrentSnapshot() != nil) != (point == "after-commit") {
					t.Fatalf("snapshot after kill at %s: %v", point, tbl.CurrentSnapshot())
				}
				cmd = exec.Command(bin, "run", "--force", "--plan", ws.PlanPath(), "--table", "inspections", "--json")
				cmd.Env = append(os.Environ(), store.env...)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("rerun: %v\n%s", err, out)
				}
				if pending, _ := st.PendingLoads(context.Background()); len(pending) != 0 {
					t.Fatalf("pending after rerun: %v", pending)
				}
				if r := runsWithStatus(t, st, "running"); len(r) != 0 {
					t.Fatalf("runs still running after the rerun: %v", r)
				}
				if r := runsWithStatus(t, st, "interrupted"); !slices.Equal(r, killed) {
					t.Fatalf("interrupted runs after the rerun: %v, want the killed run %v", r, killed)
				}
				if r := runsWithStatus(t, st, "ok"); len(r) != 1 {
					t.Fatalf("runs ok after the rerun: %v, want the rerun", r)
				}
				_, tbl = loadIceberg(t, ws, p, "inspections")
				if n := countRows(t, tbl); n != 12 {
					t.Fatalf("lake rows %d, want 12", n)
				}
				// The killed load's staged files are gone (before the
				// commit) or referenced (after it): every file in the
				// table's folder is one a snapshot reads.
				onDisk, referenced := tableFiles(t, tbl)
				if !slices.Equal(onDisk, referenced) {
					t.Fatalf("files in the table folder %v, files its snapshots reference %v", onDisk, referenced)
				}
				// Exactly one load's exceptions: 4 rows and the April file.
				if n, _ := st.Count(context.Background(), ledger.Filter{Table: "inspections"}); n != 5 {
					t.Fatalf("ledger holds %d committed exceptions, want 5", n)
				}
			})
		}
	}
}

type storeKind struct {
	name  string
	env   []string
	setup func(t *testing.T, ws flow.Workspace, p *plan.Plan)
	open  func(t *testing.T, ws flow.Workspace, p *plan.Plan) ledger.Store
}

func stores(t *testing.T) []storeKind {
	out := []storeKind{{name: "sqlite", setup: func(*testing.T, flow.Workspace, *plan.Plan) {}, open: openLedger}}
	dsn := pgDSN(t)
	if dsn == "" {
		return out
	}
	return append(out, storeKind{name: "postgres", env: []string{"LIMA_TEST_STATE_DSN=" + dsn},
		setup: func(t *testing.T, ws flow.Workspace, p *plan.Plan) {
			schema := "lima_kill_" + strings.ReplaceAll(strings.ToLower(t.Name()[len(t.Name())-12:]), "-", "_")
			schema = strings.Map(func(r rune) rune {
				if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
					return r
				}
				return '_'
			}, schema)
			p.Storage.State, p.Storage.StateDSNEnv, p.Storage.StateSchema = "postgres", "LIMA_TEST_STATE_DSN", schema
			p.Gates.DataModel.PlanHash = p.Hash()
			if err := p.Write(ws.PlanPath()); err != nil {
				t.Fatal(err)
			}
			t.Setenv("LIMA_TEST_STATE_DSN", dsn)
			t.Cleanup(func() { dropSchema(t, dsn, schema) })
		},
		open: func(t *testing.T, ws flow.Workspace, p *plan.Plan) ledger.Store { return openLedger(t, ws, p) }})
}

// A row whose bytes were invalid in its encoding could not be split into
// columns: it replays once the fix sets every column, and is reopened with
// the missing columns named otherwise.
func TestReplayOfAnUnsplittableRowNeedsEveryColumn(t *testing.T) {
	ws, p := newDemo(t)
	runOnce(t, ws, p, flow.RunOptions{})
	st := openLedger(t, ws, p)
	ctx := context.Background()
	page, _, err := st.List(ctx, ledger.Filter{Table: "supplier_evaluations", Rule: "encoding"}, ledger.Page{Limit: 10})
	if err != nil || len(page) != 1 {
		t.Fatalf("encoding exceptions: %v %v", page, err)
	}
	e := page[0]
	if err := st.Resolve(ctx, e.ID, map[string]string{"supplier_id": "0010010015", "score": "77.5"}, "ops", ""); err != nil {
		t.Fatal(err)
	}
	out, err := flow.Replay(ctx, flow.ReplayOptions{Workspace: ws, Plan: p, By: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	if tr := tableReport(t, out.Report, "supplier_evaluations"); tr.RowsRead != 1 || tr.RowsLoaded != 0 || tr.RowsQuarantined != 1 {
		t.Fatalf("partial fix: %+v", tr)
	}
	got, _ := st.Get(ctx, e.ID)
	if got.Status != ledger.StatusOpen || !strings.Contains(got.Failures[0].Reason, "missing: evaluated_on, comment") {
		t.Fatalf("after a partial fix: %s %+v", got.Status, got.Failures)
	}
	if err := st.Resolve(ctx, e.ID, map[string]string{"evaluated_on": "27.02.2026", "comment": "재입력"}, "ops", ""); err != nil {
		t.Fatal(err)
	}
	out, err = flow.Replay(ctx, flow.ReplayOptions{Workspace: ws, Plan: p, By: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	if tr := tableReport(t, out.Report, "supplier_evaluations"); tr.RowsLoaded != 1 || tr.Reconciliation != gates.Pass {
		t.Fatalf("full fix: %+v", tr)
	}
}

// runsWithStatus lists the ids of the state store's runs in a status.
func runsWithStatus(t *testing.T, st ledger.Store, status string) []string {
	t.Helper()
	runs, err := st.Runs(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range runs {
		if r.Status == status {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// tableFiles lists the files in an Iceberg table's data folder (walked on
// disk) and the files its snapshots reference (read from the manifests
// through iceberg-go), both as sorted absolute paths.
func tableFiles(t *testing.T, tbl *table.Table) (onDisk, referenced []string) {
	t.Helper()
	onDisk, referenced, err := lakeTableFiles(tbl)
	if err != nil {
		t.Fatal(err)
	}
	return onDisk, referenced
}

func lakeTableFiles(tbl *table.Table) (onDisk, referenced []string, err error) {
	loc, err := url.Parse(tbl.Location())
	if err != nil {
		return nil, nil, err
	}
	err = filepath.WalkDir(filepath.Join(loc.Path, "data"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			onDisk = append(onDisk, p)
		}
		return err
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	fio, err := tbl.FS(context.Background())
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	for _, snap := range tbl.Metadata().Snapshots() {
		mans, err := snap.Manifests(fio)
		if err != nil {
			return nil, nil, err
		}
		for _, m := range mans {
			for e, err := range m.Entries(fio, false) {
				if err != nil {
					return nil, nil, err
				}
				u, err := url.Parse(e.DataFile().FilePath())
				if err != nil {
					return nil, nil, err
				}
				if !seen[u.Path] {
					seen[u.Path] = true
					referenced = append(referenced, u.Path)
				}
			}
		}
	}
	slices.Sort(onDisk)
	slices.Sort(referenced)
	return onDisk, referenced, nil
}
