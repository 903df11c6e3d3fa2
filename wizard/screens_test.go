package wizard

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/lima-lake/lima/engine/demo"
	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/reports"
	"github.com/lima-lake/lima/ui"
)

// demoHarness opens the wizard on a fresh demo workspace (the bundled plan
// with its tables) with gate 2 passing.
func demoHarness(t *testing.T, d Deps) (*harness, string) {
	t.Helper()
	return demoThemedHarness(t, d, ui.MustTheme(ui.ThemeMono))
}

func demoThemedHarness(t *testing.T, d Deps, theme ui.Theme) (*harness, string) {
	t.Helper()
	dir := t.TempDir()
	if _, err := demo.Create(dir, t0); err != nil {
		t.Fatal(err)
	}
	if d.Preconditions == nil {
		d.Preconditions = func(context.Context, flow.Workspace, *plan.Plan) []gates.Finding {
			return []gates.Finding{{Name: "clock", Status: gates.Pass, Detail: "ok"}}
		}
	}
	h := newThemedHarness(t, dir, d, theme)
	h.m.by = "tester"
	return h, filepath.Join(dir, "platform.yaml")
}

// toGate3 walks gate 1 (answered by the demo plan) and gate 2.
func toGate3(t *testing.T, d Deps) (*harness, string) {
	return toGate3Themed(t, d, ui.MustTheme(ui.ThemeMono))
}

func toGate3Themed(t *testing.T, d Deps, theme ui.Theme) (*harness, string) {
	h, pp := demoThemedHarness(t, d, theme)
	h.contains("all questions answered")
	h.key("enter")
	h.contains("every check passes")
	h.key("enter")
	h.contains("Gate 3 · data model", "Base tables (6)")
	return h, pp
}

// toRun approves gate 3 on the defaults.
func toRun(t *testing.T, d Deps) *harness {
	h, _ := toGate3(t, d)
	h.key("enter")
	h.contains("Gate 3 approved. Enter loads")
	return h
}

func TestGate3ReviewEditDiffApprove(t *testing.T) {
	h, pp := toGate3(t, Deps{})
	before, err := plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	h.golden("gate3_model")
	h.contains("✓ approved by lima demo", "key (gauge_id) · partition none", "> ", "gauge_id")

	// The marts and joins are further down: the view scrolls past the
	// last column.
	for range 12 {
		h.key("pgdown")
	}
	h.contains("Marts (1)", "grain (", "SUM-safe", "Joins (")

	// Edit: the partition of gauge_calibrations, then gauge_id's type.
	h.key("pgup", "pgup", "pgup", "pgup", "pgup", "pgup", "pgup", "pgup", "pgup", "pgup", "pgup", "pgup")
	h.key("down", "p")
	h.contains("~ gauge_calibrations partition: none → month(calibrated_on)")
	h.key("p")
	h.contains("~ gauge_calibrations partition: none → day(calibrated_on)")
	h.key("up", "t")
	h.golden("gate3_type")
	h.key("down", "down") // string → int → long
	h.key("enter")
	h.golden("gate3_diff")
	h.contains("2 change(s), not approved", "~ gauge_calibrations.gauge_id type: string → long", "long*")

	// k removes a column from the key, and puts it back.
	h.key("k")
	h.contains("~ gauge_calibrations key: gauge_id → none")
	h.key("k")
	h.contains("2 change(s)")

	// Nothing is written before approval.
	if now, err := plan.Load(pp); err != nil || now.Hash() != before.Hash() {
		t.Fatalf("the plan changed before approval (err %v)", err)
	}
	// enter approves: the edited model and the approval are recorded.
	h.key("enter")
	h.contains("Run · load, reconcile, report", "Gate 3 approved")
	after, err := plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	gc := after.Tables["gauge_calibrations"]
	if got := strings.Join(gc.Partition, ","); got != "day(calibrated_on)" {
		t.Errorf("partition recorded %q, want day(calibrated_on)", got)
	}
	if c, _ := gc.Column("gauge_id"); c == nil || c.Type != "long" {
		t.Errorf("gauge_id type not recorded: %+v", c)
	}
	a := after.Gates.DataModel
	if a == nil || a.ApprovedBy != "tester" || !after.ModelApproved() {
		t.Fatalf("approval not recorded for the edited plan: %+v", a)
	}
	if a.PlanHash == before.Hash() {
		t.Error("the approval carries the hash of the plan before the edits")
	}
	// The run gets the approved plan.
	if h.m.run.plan == nil || h.m.run.plan.Hash() != a.PlanHash {
		t.Error("the run screen did not get the approved plan")
	}
	// esc goes back to gate 3, which shows the approval.
	h.key("esc")
	h.contains("✓ approved by tester")
}

func TestGate3UndoRejectBack(t *testing.T) {
	h, pp := toGate3(t, Deps{})
	h.key("down", "p", "u")
	h.contains("edits undone")
	if strings.Contains(h.screen(), "Diff against") {
		t.Error("the diff stays after undo")
	}
	// x asks; n keeps; x, y removes the approval.
	h.key("x")
	h.contains("Reject the model?")
	h.key("n")
	h.contains("kept: nothing was changed")
	// The confirmation is a yes/no form: Keep focused first, ←/→ (h/l)
	// moves the marker, esc keeps.
	h.key("x")
	h.contains("> Keep")
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	h.contains("Reject the model? Nothing runs until one is approved.", "Reject  > Keep")
	h.send(tea.WindowSizeMsg{Width: 100, Height: 30})
	h.key("h")
	h.contains("> Reject")
	h.key("h", "enter")
	h.contains("kept: nothing was changed")
	h.key("x", "y")
	h.contains("rejected: no approval is recorded", "! not approved")
	p, err := plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	if p.Gates.DataModel != nil {
		t.Errorf("rejection left an approval: %+v", p.Gates.DataModel)
	}
	// esc and shift+tab go back to gate 2.
	h.key("shift+tab")
	h.contains("Gate 2 · preconditions")
}

func TestGate3ProposesForAPlanWithoutTables(t *testing.T) {
	var calls atomic.Int32
	d := Deps{Propose: func(ctx context.Context, ws flow.Workspace, p *plan.Plan) (*gates.Proposal, error) {
		calls.Add(1)
		pr := &gates.Proposal{Plan: &plan.Plan{Tables: map[string]*plan.Table{
			"orders": {Type: "base", Source: &plan.TableSource{Name: p.SourceNames()[0], Files: []string{"orders.csv"}},
				Columns: []plan.Column{{Name: "order_id", Type: "long", Required: true}, {Name: "ordered_on", Type: "date"}},
				Load:    plan.LoadSpec{Mode: "full", Keys: []string{"order_id"}}},
		}}, Findings: []gates.Finding{{Name: "orders: key", Status: gates.Pass, Detail: "order_id: 12 values, all distinct"}}}
		return pr, nil
	}}
	h := toGate2(t, d)
	h.contains("every check passes")
	h.key("enter")
	h.contains("Gate 3 · data model", "proposed now, not approved", "orders", "order_id", "✓ orders: key")
	if calls.Load() != 1 {
		t.Fatalf("Propose called %d times", calls.Load())
	}
	h.key("enter")
	h.contains("Run · load, reconcile, report")
	p, err := plan.Load(filepath.Join(filepath.Dir(h.m.planPath), "platform.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Tables["orders"] == nil || !p.ModelApproved() {
		t.Errorf("the proposal was not written and approved: tables %v, approval %+v", p.TableNames(), p.Gates.DataModel)
	}
}

// reconReport is a run's report with two tables: one that reconciles and
// one with a failed check, a total that differs and a sample that does not
// match.
func reconReport() *reports.Report {
	return &reports.Report{RunID: "r-1", Status: reports.StatusReconciliationFailed,
		Tables: []reports.TableReport{
			{Name: "inspections", Status: "loaded", LoadID: "load-inspections", SnapshotID: 11, RowsRead: 1200, RowsLoaded: 1150, RowsQuarantined: 30, RowsSkipped: 20,
				Balanced: true, Reconciliation: gates.Pass,
				ControlTotals: map[string]gates.ControlTotal{"lot_qty": {Source: "8770", Target: "8770", Variance: "0", Exact: true}},
				Checks: []gates.Finding{{Name: "conservation", Status: gates.Pass, Detail: "read 1200 = 1150 + 30 + 20"},
					{Name: "row count", Status: gates.Pass, Detail: "1150 rows in the snapshot"}},
				Samples: []gates.SamplePair{{Locator: "inspections_2026-01.csv:2", Match: true,
					Source: map[string]string{"inspection_id": "1001", "lot_qty": "500"}, Lake: map[string]string{"inspection_id": "1001", "lot_qty": "500"}}}},
			{Name: "suppliers", Status: "loaded", LoadID: "load-suppliers", SnapshotID: 12, RowsRead: 400, RowsLoaded: 380, RowsQuarantined: 20, RowsSkipped: 0,
				Balanced: true, Reconciliation: gates.Fail,
				ControlTotals: map[string]gates.ControlTotal{"rating": {Source: "301.5", Target: "300.5", Variance: "1.0", Exact: true}},
				Checks: []gates.Finding{{Name: "conservation", Status: gates.Pass, Detail: "read 400 = 380 + 20 + 0"},
					{Name: "sum rating", Status: gates.Fail, Detail: "source 301.5, lake 300.5", Fix: "re-run with --full-refresh"}},
				Samples: []gates.SamplePair{{Locator: "suppliers.csv:7", Match: false,
					Source: map[string]string{"supplier_id": "0010010015", "name": "Hanil \x1b[31mSteel\u202e"}, Lake: map[string]string{"supplier_id": "0010010015", "name": "Hanil"}}}},
		},
		Marts:      []reports.MartReport{{Name: "by_month", Table: "mart_by_month", Status: "built", Rows: 12, FactRows: 1150, Reconciliation: gates.Pass}},
		Exceptions: reports.Exceptions{Total: 50, ByOwner: map[string]int64{"Ji-woo": 34, "Mateo": 16}},
	}
}

func TestReconciliationBrowser(t *testing.T) {
	// The ledger holds this run's exceptions: 10 for suppliers (load
	// load-suppliers) and 11 for inspections, by the seeding rule of
	// seedLedger (alternating tables, owners in turn).
	st := seedLedger(t, 21)
	wantRule, wantOwner := map[string]int{}, map[string]int{}
	for i := 0; i < 21; i++ {
		if bTables[i%len(bTables)] == "suppliers" {
			wantRule["date"]++
			wantOwner[bOwners[i%len(bOwners)]]++
		}
	}
	var opened atomic.Int32
	d := Deps{
		Run: func(ctx context.Context, o flow.RunOptions) (*flow.Outcome, error) {
			return &flow.Outcome{Report: reconReport(), ReportPath: "reports/r-1/report.json",
				Result: &run.Result{RunID: "r-1", Tables: []*run.TableResult{{Name: "inspections", Status: "loaded", RowsRead: 1200, RowsLoaded: 1150, RowsQuarantined: 30, RowsSkipped: 20}}}}, nil
		},
		OpenLedger: func(context.Context, flow.Workspace, *plan.Plan) (ledger.Store, error) {
			opened.Add(1)
			return nopClose{st}, nil
		},
	}
	h := toRun(t, d)
	h.key("enter")
	h.contains("run r-1: reconciliation_failed", "enter gate 4: reconciliation")
	h.key("enter")
	h.golden("recon_list")
	h.contains("inspections", "1,200", "1,150", "! 50 rows held back as exceptions — owners", "Ji-woo 34, Mateo 16", "✗ 1/2 (1 failed)", "1 off")
	// At 80 columns the counts, the balance and the checks are whole; the
	// table names give way first.
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	h.contains("✗ 1/2 (1 failed)", "1,200", "✓ yes")
	h.send(tea.WindowSizeMsg{Width: 100, Height: 30})
	// The bar chart is to scale: inspections' 1,150 loaded is the longest bar.
	bars := map[string]int{}
	for _, l := range strings.Split(h.screen(), "\n") {
		for _, n := range []string{"inspections", "suppliers"} {
			if strings.HasPrefix(strings.TrimSpace(l), n+" ") && strings.Contains(l, "loaded ·") {
				bars[n] = strings.Count(l, "=")
			}
		}
	}
	if bars["inspections"] == 0 || bars["suppliers"] == 0 || bars["suppliers"] >= bars["inspections"] {
		t.Errorf("bar lengths %v: suppliers (380) should be shorter than inspections (1,150)", bars)
	}
	// Drill into suppliers: the failed check first, the totals, the
	// exceptions by rule and owner from the ledger, the sample side by side.
	h.key("down", "enter")
	h.golden("recon_table")
	h.contains("✗ sum rating", "fix: re-run with --full-refresh", "301.5", "300.5", "suppliers.csv:7")
	h.contains(fmt.Sprintf("by rule:  date %d", wantRule["date"]))
	for o, n := range wantOwner {
		h.contains(fmt.Sprintf("%s %d", o, n))
	}
	// Untrusted sample values show as visible escapes.
	h.contains(`Hanil \e[31mSteel\u202e`)
	if raw := h.m.Render(); strings.Contains(raw, "\x1b[31m") || strings.Contains(raw, "\u202e") {
		t.Error("a raw escape or BiDi override reached the screen")
	}
	// enter opens this table's exceptions in the browser; esc clears the
	// filter, esc again goes back.
	h.key("enter")
	h.contains("Lima exceptions", fmt.Sprintf("exceptions matching table=suppliers: %d", wantRule["date"]))
	h.key("esc")
	h.contains("exceptions: 21")
	h.key("esc")
	h.contains("Gate 4 · suppliers")
	h.key("esc")
	h.contains("Gate 4 · reconciliation")
	h.key("e")
	h.contains("exceptions: 21")
	h.key("esc", "esc")
	h.contains("Run · load, reconcile, report")
	if opened.Load() != 1 {
		t.Errorf("the ledger was opened %d times, want once", opened.Load())
	}
}

// nopClose keeps the test's store open when the wizard closes it.
type nopClose struct{ ledger.Store }

func (nopClose) Close() error { return nil }

func teardownInventory() *gates.Inventory {
	return &gates.Inventory{Prefix: "erp_quality", Namespace: "erp_quality", Warehouse: "lake",
		Catalog: gates.CatalogInventory{Kind: "sqlite", File: ".lima/catalog.db", NamespaceExists: true, DropNamespace: true, DropTables: 2},
		Tables: []gates.TableInventory{
			{Name: "inspections", InPlan: true, Managed: true, Drop: true, RemoveFiles: true, Snapshots: 2, Rows: 1150, DataFiles: 4, DataBytes: 12_000, MetadataFiles: 4, MetadataBytes: 9_000},
			{Name: "suppliers", InPlan: true, Managed: true, Drop: true, RemoveFiles: true, Snapshots: 1, Rows: 380, DataFiles: 1, DataBytes: 2_000, MetadataFiles: 4, MetadataBytes: 8_000},
		},
		Total: gates.InventoryTotals{Tables: 2, Files: 13, Bytes: 31_000}}
}

func TestTeardownScreen(t *testing.T) {
	inv := teardownInventory()
	var confirmed []string
	var shown *gates.Inventory
	var opened atomic.Int32
	st := seedLedger(t, 4)
	d := Deps{
		OpenLedger: func(context.Context, flow.Workspace, *plan.Plan) (ledger.Store, error) {
			opened.Add(1)
			return nopClose{st}, nil
		},
		Run: func(ctx context.Context, o flow.RunOptions) (*flow.Outcome, error) {
			return &flow.Outcome{Report: reconReport(), Result: &run.Result{RunID: "r-1"}}, nil
		},
		TeardownInventory: func(context.Context, flow.TeardownOptions) (*gates.Inventory, error) { return inv, nil },
		Teardown: func(ctx context.Context, o flow.TeardownOptions, confirm string) (*gates.Inventory, *gates.TeardownResult, error) {
			confirmed, shown = append(confirmed, confirm), o.Shown
			return inv, &gates.TeardownResult{Status: gates.Pass, DroppedTables: []string{"erp_quality.inspections", "erp_quality.suppliers"}}, nil
		},
	}
	h := toRun(t, d)
	h.key("enter", "enter")
	h.contains("Gate 4 · reconciliation")
	h.key("T")
	h.golden("teardown_confirm")
	h.contains("the blast radius", "erp_quality.inspections", "Type the prefix erp_quality")
	// q is text here, and enter does nothing until the prefix matches.
	h.typeText("erp_q")
	h.key("enter")
	h.contains("> erp_q", "not removed: type the prefix erp_quality exactly first")
	if len(confirmed) != 0 {
		t.Fatal("teardown ran before the prefix was typed")
	}
	h.typeText("uality")
	h.contains("✓ matches")
	h.golden("teardown_typed")
	h.key("enter")
	if len(confirmed) != 1 || confirmed[0] != "erp_quality" || shown != inv {
		t.Fatalf("teardown called with %q, shown %p (want the inventory shown)", confirmed, shown)
	}
	h.contains("✓ removed")
	h.key("esc")
	h.contains("Gate 4 · reconciliation", "torn down since (gate 5)")
	// The ledger went with the lake: e does not open (or recreate) it.
	before := opened.Load()
	h.key("e")
	h.contains("Gate 4 · reconciliation")
	if before != 1 || opened.Load() != before {
		t.Errorf("the ledger was opened %d time(s) before the teardown and %d after", before, opened.Load()-before)
	}
}

func TestTeardownEscRemovesNothing(t *testing.T) {
	var called atomic.Int32
	d := Deps{
		Run: func(ctx context.Context, o flow.RunOptions) (*flow.Outcome, error) {
			return &flow.Outcome{Report: reconReport(), Result: &run.Result{RunID: "r-1"}}, nil
		},
		TeardownInventory: func(context.Context, flow.TeardownOptions) (*gates.Inventory, error) { return teardownInventory(), nil },
		Teardown: func(context.Context, flow.TeardownOptions, string) (*gates.Inventory, *gates.TeardownResult, error) {
			called.Add(1)
			return nil, nil, nil
		},
	}
	h := toRun(t, d)
	h.key("enter", "enter", "T")
	h.typeText("erp_quality")
	h.key("esc")
	h.contains("Gate 4 · reconciliation")
	if called.Load() != 0 {
		t.Error("esc ran the teardown")
	}
	if strings.Contains(h.screen(), "torn down") {
		t.Error("the reconciliation says torn down after esc")
	}
}

func TestScreensAtCompactSizeStayInside(t *testing.T) {
	h, _ := toGate3(t, Deps{})
	h.send(tea.WindowSizeMsg{Width: 60, Height: 15})
	for i, l := range strings.Split(strings.TrimSuffix(h.screen(), "\n"), "\n") {
		if w := len([]rune(l)); w > 60 {
			t.Errorf("line %d is %d wide at 60×15: %q", i+1, w, l)
		}
	}
	h.contains("Gate 3 · data model")
}

// The list, not only the detail, shows untrusted text as visible escapes:
// a file name, an owner and a failure carrying ESC[31m, \r and U+202E.
func TestBrowserListSanitizes(t *testing.T) {
	evil := "\x1b[31mred\r\u202eevil"
	st := seedLedger(t, 0, ledger.Exception{RunID: "run-1", Level: ledger.LevelRow, File: "in" + evil + ".csv", Line: 2,
		Raw: []byte("1;x\n"), Values: map[string]string{"name": evil},
		Failures: []ledger.Failure{{Column: "name", Value: evil, Rule: "text" + evil, Reason: "bad"}},
		Owner:    "o" + evil})
	h := newBrowserHarness(t, st, ExceptionsOptions{})
	h.send(tea.WindowSizeMsg{Width: 160, Height: 30})
	h.contains(`in\e[31mred\r\u202eevil.csv:2`, `o\e[31mred\r\u202eevil`, `text\e[31mred\r…`)
	raw := h.b.Render()
	for _, bad := range []string{"\x1b[31m", "\r", "\u202e"} {
		if strings.Contains(raw, bad) {
			t.Errorf("the list carries %q raw", bad)
		}
	}
}

// Many tables: the list shows a window around the focused table and every
// shown line fits the screen.
func TestReconciliationManyTables(t *testing.T) {
	r := &reports.Report{RunID: "r-many", Status: reports.StatusOK}
	for i := range 40 {
		r.Tables = append(r.Tables, reports.TableReport{Name: fmt.Sprintf("table_%02d", i), Status: "loaded",
			RowsRead: int64(100 + i), RowsLoaded: int64(100 + i), Balanced: true, Reconciliation: gates.Pass})
	}
	d := Deps{Run: func(ctx context.Context, o flow.RunOptions) (*flow.Outcome, error) {
		return &flow.Outcome{Report: r, Result: &run.Result{RunID: "r-many"}}, nil
	}}
	h := toRun(t, d)
	h.key("enter", "enter")
	h.contains("table_00", "table(s) below")
	for range 25 {
		h.key("down")
	}
	h.contains("> ", "table_25", "table(s) above", "table(s) below")
	if n := strings.Count(h.screen(), "\n"); n != 30 {
		t.Errorf("%d lines, want 30", n)
	}
	for _, l := range strings.Split(h.screen(), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), ">") && !strings.Contains(l, "table_25") {
			t.Errorf("focus on the wrong row: %q", l)
		}
	}
}

// An edit that makes the plan invalid (a summed column turned to string)
// blocks approval with the reason, and nothing is written.
func TestGate3InvalidEditBlocksApproval(t *testing.T) {
	h, pp := toGate3(t, Deps{})
	before, err := plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	g := h.m.gate3
	for i, it := range g.items {
		if it.table == "inspections" && g.work.Tables[it.table].Columns[it.col].Name == "defect_qty" {
			g.cur, g.follow = i, true
		}
	}
	h.key("t", "up", "enter") // int → string
	h.contains("~ inspections.defect_qty type: int → string", "but: ")
	h.key("enter")
	h.contains("Gate 3 · data model", "cannot approve: platform.yaml:")
	h.key("?")
	h.contains("enter approve (disabled: ")
	h.key("?")
	after, err := plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	if after.Hash() != before.Hash() || !after.ModelApproved() {
		t.Error("a blocked approval changed platform.yaml")
	}
	h.key("u", "enter")
	h.contains("Run · load, reconcile, report")
}

func TestGate3Help(t *testing.T) {
	h, _ := toGate3(t, Deps{})
	h.key("?")
	h.contains("Keys", "t type", "k key", "cycles its partition", "x rejects")
	h.golden("gate3_help")
	h.key("esc")
	h.contains("Base tables (6)")
}

// q over unsaved edits of the model asks first: the first q says what
// would be lost, a second q quits; another key keeps working.
func TestGate3QuitAsksOverUnsavedEdits(t *testing.T) {
	h, pp := toGate3(t, Deps{})
	before, err := plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	isQuit := func(k string) bool {
		_, cmd := h.m.Update(keyMsg(k))
		if cmd == nil {
			return false
		}
		_, q := cmd().(tea.QuitMsg)
		return q
	}
	g := h.m.gate3
	g.work.Tables["suppliers"].Columns[0].Description = "edited"
	g.work.Tables["suppliers"].Load.Keys = nil
	if len(g.changes()) == 0 {
		t.Fatal("test setup: no unsaved change")
	}
	if isQuit("q") {
		t.Fatal("the first q quit over unsaved edits")
	}
	h.contains("unsaved edit(s) of the model: q again quits")
	if isQuit("down") {
		t.Fatal("down quit")
	}
	if isQuit("q") {
		t.Fatal("q after another key quit without asking again")
	}
	if !isQuit("q") {
		t.Fatal("the second q did not quit")
	}
	after, err := plan.Load(pp)
	if err != nil || after.Hash() != before.Hash() {
		t.Fatalf("quitting wrote the plan: %v", err)
	}
	// Without edits q quits at once.
	h2, _ := toGate3(t, Deps{})
	if _, cmd := h2.m.Update(keyMsg("q")); cmd == nil {
		t.Fatal("q did nothing without edits")
	} else if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("q did not quit without edits")
	}
}

// A proposal that finds no table leaves nothing to approve: enter is
// refused with the finding's reason and nothing is recorded, as
// `lima-tui approve` refuses it.
func TestGate3RefusesAnEmptyDataModel(t *testing.T) {
	d := Deps{Propose: func(ctx context.Context, ws flow.Workspace, p *plan.Plan) (*gates.Proposal, error) {
		return &gates.Proposal{Plan: &plan.Plan{Tables: map[string]*plan.Table{}}}, nil
	}}
	h := toGate2(t, d)
	h.contains("every check passes")
	h.key("enter")
	h.contains("Gate 3 · data model")
	h.key("enter")
	h.contains("not saved: the plan has no tables")
	p, err := plan.Load(filepath.Join(filepath.Dir(h.m.planPath), "platform.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if p.ModelApproved() {
		t.Fatal("an empty data model was approved")
	}
	if strings.Contains(h.screen(), "Run · load, reconcile, report") {
		t.Fatal("the wizard moved on to the run")
	}
}
