package flow_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/demo"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/engine/sink/icesink"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/reports"
)

func newDemo(t *testing.T) (flow.Workspace, *plan.Plan) {
	t.Helper()
	dir := t.TempDir()
	if _, err := demo.Create(dir, time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	ws := flow.Workspace{Dir: dir}
	p, err := flow.LoadPlan(ws.PlanPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := flow.CheckApproval(p); err != nil {
		t.Fatal(err)
	}
	return ws, p
}

func runOnce(t *testing.T, ws flow.Workspace, p *plan.Plan, o flow.RunOptions) *flow.Outcome {
	t.Helper()
	o.Workspace, o.Plan = ws, p
	o.Force = true // these tests run at any time of day, outside the demo's run window
	out, err := flow.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func tableReport(t *testing.T, r *reports.Report, name string) reports.TableReport {
	t.Helper()
	for _, tr := range r.Tables {
		if tr.Name == name {
			return tr
		}
	}
	t.Fatalf("no table %s in the report", name)
	return reports.TableReport{}
}

// loadIceberg opens a table of the workspace with iceberg-go directly,
// bypassing Lima's sink, as a reader (or tamperer) from outside would.
func loadIceberg(t *testing.T, ws flow.Workspace, p *plan.Plan, name string) (*icesink.Sink, *table.Table) {
	t.Helper()
	sk, err := flow.OpenSink(context.Background(), ws, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sk.Close() })
	tbl, err := sk.Catalog().LoadTable(context.Background(), table.Identifier{p.Namespace(), name})
	if err != nil {
		t.Fatal(err)
	}
	return sk, tbl
}

func countRows(t *testing.T, tbl *table.Table, opts ...table.ScanOption) int64 {
	t.Helper()
	_, it, err := tbl.Scan(opts...).ToArrowRecords(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		n += rec.NumRows()
		rec.Release()
	}
	return n
}

// TestDemoBalancesWithHandCountedTotals loads the bundled demo and checks
// every count and sum against numbers worked out by hand from the files in
// engine/demo/data/erp (not from Lima's own output).
func TestDemoBalancesWithHandCountedTotals(t *testing.T) {
	ws, p := newDemo(t)
	out := runOnce(t, ws, p, flow.RunOptions{})
	r := out.Report
	if r.Status != reports.StatusOK || r.ExitCode() != 0 {
		t.Fatalf("status %s, want ok", r.Status)
	}
	type want struct {
		read, loaded, quarantined, skipped int64
		skippedBy                          map[string]int64
		sums                               map[string]string
	}
	wants := map[string]want{
		// suppliers.csv: 1 header + 1 blank line + 8 records = 10 read.
		// Held back: 10010021 (month 13 in 2024-13-01) and 0010010016
		// (duplicate of 10010016 once zero-padded) = 2. Loaded 6.
		// rating: 4.5 + 3.8 + 4.1 + 4.9 + 3.2 (Osaka is NULL) = 20.5.
		"suppliers": {10, 6, 2, 2, map[string]int64{"header": 1, "blank_line": 1}, map[string]string{"rating": "20.5"}},
		// inspections: Jan 1+6, Feb 1+5, Mar 1+5 (one record spans two
		// lines) = 19 read; Apr is binary (a file exception, 0 rows).
		// Held back: 1009 (2026-02-30), 1010 (cost 12x.50), 1011 (9 fields),
		// 1007 again in March (duplicate) = 4. Loaded 6 + 2 + 4 = 12.
		// lot_qty: 500+1200+800+300+2000+150 + 450+1100 + 700+350+820+400 = 8770.
		// defect_qty: 2+5+0+1+12+0 + 1+3 + 3+0+2+1 = 30.
		// cost: (-150 + 1250.5 + 980.25 - 75.125 + 2400 + 0) + (320 - 210.75)
		//       + (-1000 + 45.5 + 3210.125 - 88) = 4405.625 + 109.25 + 2167.625.
		"inspections": {19, 12, 4, 3, map[string]int64{"header": 3}, map[string]string{"lot_qty": "8770", "defect_qty": "30", "cost": "6682.500"}},
		// goods_receipts.ndjson: 6 JSON lines + 1 blank = 7 read. Held back:
		// receipt 4 ("not a time") and line 5 (invalid JSON) = 2. Loaded 4.
		// qty: 500+1200+800+150 = 2650; amount: 1250.00+3000.50+99.99 = 4350.49.
		"goods_receipts": {7, 4, 2, 1, map[string]int64{"blank_line": 1}, map[string]string{"qty": "2650", "amount": "4350.49"}},
	}
	for name, w := range wants {
		tr := tableReport(t, r, name)
		if tr.RowsRead != w.read || tr.RowsLoaded != w.loaded || tr.RowsQuarantined != w.quarantined || tr.RowsSkipped != w.skipped {
			t.Errorf("%s: read/loaded/quarantined/skipped = %d/%d/%d/%d, want %d/%d/%d/%d", name,
				tr.RowsRead, tr.RowsLoaded, tr.RowsQuarantined, tr.RowsSkipped, w.read, w.loaded, w.quarantined, w.skipped)
		}
		if !tr.Balanced || tr.RowsRead != tr.RowsLoaded+tr.RowsQuarantined+tr.RowsSkipped {
			t.Errorf("%s: does not balance", name)
		}
		for k, v := range w.skippedBy {
			if tr.SkippedBy[k] != v {
				t.Errorf("%s: skipped %s = %d, want %d", name, k, tr.SkippedBy[k], v)
			}
		}
		for col, sum := range w.sums {
			ct, ok := tr.ControlTotals[col]
			if !ok || ct.Source != sum || ct.Target != sum {
				t.Errorf("%s: sum(%s) source %q lake %q, want %q on both sides", name, col, ct.Source, ct.Target, sum)
			}
		}
		if tr.Reconciliation != gates.Pass {
			t.Errorf("%s: gate 4 %s: %+v", name, tr.Reconciliation, tr.Checks)
		}
		_, tbl := loadIceberg(t, ws, p, name)
		if n := countRows(t, tbl); n != w.loaded {
			t.Errorf("%s: the lake holds %d rows, want %d", name, n, w.loaded)
		}
		snap := tbl.CurrentSnapshot()
		if snap.Summary.Properties["lima.load-id"] != tr.LoadID || tr.LoadID == "" {
			t.Errorf("%s: snapshot load id %q, report %q", name, snap.Summary.Properties["lima.load-id"], tr.LoadID)
		}
	}
	// Exceptions: 4 + 2 + 2 rows and one whole file, plus the dirty tables
	// of demo_dirty_test.go: supplier_evaluations 2 (lines 6 and 7),
	// shipments 1 (row 7), gauge_calibrations 1 (G-0105) = 13.
	if r.Exceptions.Total != 13 || r.Exceptions.Files != 1 {
		t.Errorf("exceptions total %d (files %d), want 13 (1)", r.Exceptions.Total, r.Exceptions.Files)
	}
	// type: 1009, 1010, 10010021, receipt 4, shipment 004505 ("12 box"),
	// G-0105 (31/04/2026); malformed: 1011, receipt line 5; unique: 1007,
	// 0010010016; unreadable file: inspections_2026-04.csv; encoding:
	// 협력사평가_2026.csv line 6 (cut EUC-KR character); range: its line 7
	// (score 105.0).
	wantRules := map[string]int64{"type": 6, "malformed_row": 2, "unique": 2, "unreadable_file": 1, "encoding": 1, "range": 1}
	for k, v := range wantRules {
		if r.Exceptions.ByRule[k] != v {
			t.Errorf("exceptions by rule %s = %d, want %d (all: %v)", k, r.Exceptions.ByRule[k], v, r.Exceptions.ByRule)
		}
	}
	// Owners: inspections 5, suppliers 2, supplier_evaluations 2, shipments
	// 1; the default on-call gets goods_receipts 2 + gauge_calibrations 1.
	wantOwners := map[string]int64{"Ji-woo Park (quality)": 5, "Sven Weber (procurement data)": 2, "Data platform on-call": 3,
		"Seo-yeon Han (supplier quality)": 2, "Min-jun Choi (logistics)": 1}
	for k, v := range wantOwners {
		if r.Exceptions.ByOwner[k] != v {
			t.Errorf("exceptions of %s = %d, want %d", k, r.Exceptions.ByOwner[k], v)
		}
	}
	// Every fix, counted on loaded rows only (see the comments in the data).
	wantFixes := map[string]int64{
		"inspections/supplier_id/trim":                        1, // " 10010017" (1003)
		"inspections/supplier_id/zero-padded to 10 digits":    6, // 1002, 1003, 1005, 1008, 1013, 1014
		"inspections/inspected_on/date format yyyy/M/d → ISO": 3, // 1002, 1008, 1013
		"inspections/inspected_on/null token → null (NULL)":   2, // 1004, 1015
		"inspections/lot_qty/thousands separator removed":     3, // 1,200 2,000 1,100
		"inspections/cost/trailing-minus → negative":          5, // 1001, 1004, 1008, 1012, 1015
		"inspections/cost/thousands separator removed":        4, // 1,250.500 2,400.000 1,000.000- 3,210.125
		"suppliers/supplier_id/trim":                          1,
		"suppliers/supplier_id/zero-padded to 10 digits":      3, // 10010016, 10010017, 10010019
		"suppliers/onboarded_on/date format yyyy/M/d → ISO":   1,
		"suppliers/rating/null token → null (NULL)":           1,
		"goods_receipts/supplier_id/zero-padded to 10 digits": 2,
		// The dirty tables (hand counts in demo_dirty_test.go):
		"supplier_evaluations/supplier_id/trim":                          1, // " 10010017 " (line 4)
		"supplier_evaluations/supplier_id/zero-padded to 10 digits":      4, // lines 3, 4, 8, 10
		"shipments/shipment_no/zero-padded to 6 digits":                  1, // 4504 (row 6)
		"shipments/plant/Unicode NFD → NFC":                              1, // row 6
		"gauge_calibrations/deviation_mm/decimal comma → point":          6, // every loaded row
		"gauge_calibrations/calibrated_on/date format dd/MM/yyyy → ISO":  6, // every loaded row
		"supplier_evaluations/evaluated_on/date format dd.MM.yyyy → ISO": 7, // every loaded row
	}
	got := map[string]int64{}
	for _, tr := range r.Tables {
		for _, n := range tr.Normalizations {
			got[tr.Name+"/"+n.Column+"/"+n.Fix] = n.Count
		}
	}
	for k, v := range wantFixes {
		if got[k] != v {
			t.Errorf("fix %s = %d, want %d", k, got[k], v)
		}
	}
	if len(got) != len(wantFixes) {
		t.Errorf("fixes reported: %v, want exactly %d kinds", got, len(wantFixes))
	}
	// The mart: every loaded inspection is its own (month, supplier) group —
	// Jan 15,16,17,19,20; Feb 15,16; Mar 15,16,18; and two with no date
	// (1004 supplier 18, 1015 supplier 17) — so 12 groups from 12 rows.
	if len(r.Marts) != 1 || r.Marts[0].Status != "built" || r.Marts[0].Rows != 12 || r.Marts[0].FactRows != 12 || r.Marts[0].Reconciliation != gates.Pass {
		t.Errorf("marts %+v", r.Marts)
	}
	// The same mart as Athena CTAS, for an AWS deployment.
	if b, err := os.ReadFile(filepath.Join(ws.Dir, "athena", "mart_inspections_by_supplier_month.sql")); err != nil || !strings.Contains(string(b), "CREATE TABLE") || !strings.Contains(string(b), `"total_cost"`) {
		t.Errorf("athena CTAS: %v\n%s", err, b)
	}
	// The watermark of inspections is the latest inspection date loaded.
	if tr := tableReport(t, r, "inspections"); tr.WatermarkAfter != "2026-03-19" {
		t.Errorf("inspections watermark %q, want 2026-03-19", tr.WatermarkAfter)
	}
	// Files outside the warehouse are private.
	for _, path := range []string{out.ReportPath, filepath.Join(filepath.Dir(out.ReportPath), "report.md"), ws.CatalogPath(p)} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v (%v), want 0600", path, fi.Mode().Perm(), err)
		}
	}
	for _, d := range []string{ws.StateDir(), filepath.Dir(out.ReportPath)} {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v, want 0700", d, fi.Mode().Perm())
		}
	}
}

func TestRerunAddsNothingAndFullRefreshReplaces(t *testing.T) {
	ws, p := newDemo(t)
	first := runOnce(t, ws, p, flow.RunOptions{})
	second := runOnce(t, ws, p, flow.RunOptions{})
	for _, tr := range second.Report.Tables {
		if tr.Status != "already_loaded" {
			t.Errorf("%s: rerun status %s, want already_loaded", tr.Name, tr.Status)
		}
		if tr.SnapshotID != tableReport(t, first.Report, tr.Name).SnapshotID {
			t.Errorf("%s: rerun moved the snapshot", tr.Name)
		}
	}
	_, tbl := loadIceberg(t, ws, p, "inspections")
	if n := countRows(t, tbl); n != 12 {
		t.Fatalf("after rerun the lake holds %d rows, want 12", n)
	}
	if n := len(tbl.Metadata().Snapshots()); n != 1 {
		t.Fatalf("rerun added snapshots: %d", n)
	}
	// Changed input (a new modification time) is a new load: in full mode it
	// replaces the table in one snapshot, never appends a second copy.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(ws.Dir, "data/erp/inspections_2026-01.csv"), later, later); err != nil {
		t.Fatal(err)
	}
	third := runOnce(t, ws, p, flow.RunOptions{Tables: []string{"inspections"}})
	if tr := tableReport(t, third.Report, "inspections"); tr.Status != "loaded" || tr.Reconciliation != gates.Pass {
		t.Fatalf("changed input: %s / %s", tr.Status, tr.Reconciliation)
	}
	refresh := runOnce(t, ws, p, flow.RunOptions{Tables: []string{"inspections"}, FullRefresh: true})
	if tr := tableReport(t, refresh.Report, "inspections"); tr.Status != "loaded" || tr.Reconciliation != gates.Pass {
		t.Fatalf("full refresh: %s / %s", tr.Status, tr.Reconciliation)
	}
	_, tbl = loadIceberg(t, ws, p, "inspections")
	if n := countRows(t, tbl); n != 12 {
		t.Fatalf("after reload and refresh the lake holds %d rows, want 12", n)
	}
	if n := len(tbl.Metadata().Snapshots()); n != 3 {
		t.Fatalf("snapshots = %d, want 3 (first load, changed input, refresh)", n)
	}
}

// faultyCatalog applies the commit, then reports a failure, as a timeout
// after the catalog accepted the write would.
type faultyCatalog struct {
	inner    table.CatalogIO
	failures atomic.Int32
	apply    bool
}

func (f *faultyCatalog) LoadTable(ctx context.Context, id table.Identifier) (*table.Table, error) {
	return f.inner.LoadTable(ctx, id)
}

func (f *faultyCatalog) CommitTable(ctx context.Context, id table.Identifier, reqs []table.Requirement, ups []table.Update) (table.Metadata, string, error) {
	if f.failures.Load() > 0 {
		f.failures.Add(-1)
		if f.apply {
			if _, _, err := f.inner.CommitTable(ctx, id, reqs, ups); err != nil {
				return nil, "", err
			}
			return nil, "", errors.New("i/o timeout (injected after the commit was applied)")
		}
		return nil, "", table.ErrCommitFailed
	}
	return f.inner.CommitTable(ctx, id, reqs, ups)
}

func TestCommitAppliedButReportedFailedAddsNoDuplicate(t *testing.T) {
	ws, p := newDemo(t)
	fc := &faultyCatalog{apply: true}
	fc.failures.Store(1)
	out := runOnce(t, ws, p, flow.RunOptions{Tables: []string{"inspections"}, SinkOptions: func(o *icesink.Options) {
		o.BaseBackoff = time.Millisecond
		o.WrapCatalog = func(c table.CatalogIO) table.CatalogIO { fc.inner = c; return fc }
	}})
	tr := out.Result.Tables[0]
	if tr.Status != "loaded" || !tr.Commit.AlreadyCommitted || tr.Commit.Attempts != 2 {
		t.Fatalf("status %s, found-after-failure %v, attempts %d; want loaded, true, 2 (err %v)", tr.Status, tr.Commit.AlreadyCommitted, tr.Commit.Attempts, tr.Err)
	}
	_, tbl := loadIceberg(t, ws, p, "inspections")
	if n := countRows(t, tbl); n != 12 {
		t.Fatalf("the lake holds %d rows, want 12 (no duplicate)", n)
	}
	if n := len(tbl.Metadata().Snapshots()); n != 1 {
		t.Fatalf("%d snapshots, want 1", n)
	}
	if tableReport(t, out.Report, "inspections").Reconciliation != gates.Pass {
		t.Fatal("gate 4 did not pass")
	}
}

func TestCommitConflictIsRetried(t *testing.T) {
	ws, p := newDemo(t)
	fc := &faultyCatalog{apply: false}
	fc.failures.Store(2)
	out := runOnce(t, ws, p, flow.RunOptions{Tables: []string{"suppliers"}, SinkOptions: func(o *icesink.Options) {
		o.BaseBackoff = time.Millisecond
		o.WrapCatalog = func(c table.CatalogIO) table.CatalogIO { fc.inner = c; return fc }
	}})
	tr := out.Result.Tables[0]
	if tr.Status != "loaded" || tr.Commit.Attempts != 3 || tr.Commit.AlreadyCommitted {
		t.Fatalf("status %s attempts %d found %v, want loaded after 3 attempts", tr.Status, tr.Commit.Attempts, tr.Commit.AlreadyCommitted)
	}
	_, tbl := loadIceberg(t, ws, p, "suppliers")
	if n := countRows(t, tbl); n != 6 {
		t.Fatalf("the lake holds %d rows, want 6", n)
	}
}

func TestCommitThatNeverSucceedsLeavesNothingVisible(t *testing.T) {
	ws, p := newDemo(t)
	fc := &faultyCatalog{apply: false}
	fc.failures.Store(1000)
	out := runOnce(t, ws, p, flow.RunOptions{Tables: []string{"suppliers"}, SinkOptions: func(o *icesink.Options) {
		o.BaseBackoff = time.Millisecond
		o.MaxAttempts = 3
		o.WrapCatalog = func(c table.CatalogIO) table.CatalogIO { fc.inner = c; return fc }
	}})
	if out.Report.ExitCode() != 1 || out.Result.Tables[0].Status != "failed" {
		t.Fatalf("exit %d status %s, want 1 / failed", out.Report.ExitCode(), out.Result.Tables[0].Status)
	}
	_, tbl := loadIceberg(t, ws, p, "suppliers")
	if tbl.CurrentSnapshot() != nil {
		t.Fatal("a failed commit left a snapshot")
	}
	// No staged data file is left behind.
	var files []string
	filepath.WalkDir(ws.Warehouse(p), func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".parquet") {
			files = append(files, path)
		}
		return nil
	})
	if len(files) != 0 {
		t.Fatalf("orphaned data files: %v", files)
	}
}

func TestMonthPartitionPrunesFiles(t *testing.T) {
	ws, p := newDemo(t)
	runOnce(t, ws, p, flow.RunOptions{Tables: []string{"inspections"}})
	_, tbl := loadIceberg(t, ws, p, "inspections")
	all, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Partitions: 2026-01, 2026-02, 2026-03 and the null date (1004, 1015).
	if len(all) != 4 {
		t.Fatalf("%d data files, want 4 (three months and the null partition)", len(all))
	}
	march := iceberg.GreaterThanEqual(iceberg.Reference("inspected_on"), iceberg.Date(20513)) // 2026-03-01
	pruned, err := tbl.Scan(table.WithRowFilter(march)).PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(pruned) != 1 {
		t.Fatalf("a filter on March planned %d files, want 1", len(pruned))
	}
	// 1012, 1013 and 1014 were inspected in March.
	if n := countRows(t, tbl, table.WithRowFilter(march)); n != 3 {
		t.Fatalf("March rows %d, want 3", n)
	}
}

func TestGate4FailsWhenARowIsRemovedBehindLimasBack(t *testing.T) {
	ws, p := newDemo(t)
	runOnce(t, ws, p, flow.RunOptions{Tables: []string{"inspections"}})
	_, tbl := loadIceberg(t, ws, p, "inspections")
	if _, err := tbl.Delete(context.Background(), iceberg.EqualTo(iceberg.Reference("inspection_id"), int64(1003)), nil); err != nil {
		t.Fatal(err)
	}
	recs, err := flow.Reconcile(context.Background(), ws, p, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Status != gates.Fail {
		t.Fatalf("gate 4 after a deleted row: %+v", recs)
	}
	failed := map[string]bool{}
	for _, c := range recs[0].Checks {
		if c.Status == gates.Fail {
			failed[c.Name] = true
		}
	}
	// 1003 had lot_qty 800 and cost 980.250: count and both sums differ.
	for _, n := range []string{"row count", "sum(lot_qty)", "sum(cost)"} {
		if !failed[n] {
			t.Errorf("check %q did not fail: %+v", n, recs[0].Checks)
		}
	}
	if ct := recs[0].ControlTotals["cost"]; ct.Variance != "-980.250" {
		t.Errorf("cost variance %q, want -980.250", ct.Variance)
	}
}

func TestGate4FailsWhenADecimalChangesByOneThousandth(t *testing.T) {
	ws, p := newDemo(t)
	runOnce(t, ws, p, flow.RunOptions{Tables: []string{"inspections"}})
	_, tbl := loadIceberg(t, ws, p, "inspections")
	ctx := context.Background()
	// Replace inspection 1013 (cost 45.500) by the same row with 45.501.
	tx := tbl.NewTransaction()
	if err := tx.Delete(ctx, iceberg.EqualTo(iceberg.Reference("inspection_id"), int64(1013)), nil); err != nil {
		t.Fatal(err)
	}
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).Append(1013)
	b.Field(1).(*array.StringBuilder).Append("0010010018")
	b.Field(2).(*array.Date32Builder).Append(arrow.Date32(20522)) // 2026-03-10
	b.Field(3).(*array.Int64Builder).Append(350)
	b.Field(4).(*array.Int32Builder).Append(0)
	b.Field(5).(*array.Decimal128Builder).Append(decimalOf(45501))
	b.Field(6).(*array.StringBuilder).Append("PASS")
	b.Field(7).(*array.StringBuilder).Append("M. Weber")
	rec := b.NewRecordBatch()
	defer rec.Release()
	rdr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Append(ctx, rdr, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	recs, err := flow.Reconcile(ctx, ws, p, "")
	if err != nil {
		t.Fatal(err)
	}
	r := recs[0]
	if r.Status != gates.Fail {
		t.Fatalf("gate 4 passed after a changed decimal: %+v", r.Checks)
	}
	if ct := r.ControlTotals["cost"]; ct.Variance != "0.001" || ct.Source != "6682.500" || ct.Target != "6682.501" {
		t.Fatalf("cost control total %+v, want 6682.500 → 6682.501, variance 0.001", ct)
	}
	for _, c := range r.Checks {
		if c.Name == "row count" && c.Status != gates.Pass {
			t.Fatalf("row count should still match: %+v", c)
		}
	}
}

func decimalOf(unscaled int64) (n decimal128Num) { return decimal128FromI64(unscaled) }

func TestRunRefusesAPlanChangedSinceApproval(t *testing.T) {
	ws, p := newDemo(t)
	p.Tables["inspections"].Columns[3].Type = "int"
	if err := p.Write(ws.PlanPath()); err != nil {
		t.Fatal(err)
	}
	p2, err := flow.LoadPlan(ws.PlanPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := flow.CheckApproval(p2); !errors.Is(err, flow.ErrPrecondition) {
		t.Fatalf("changed plan: %v, want a precondition error", err)
	}
}

func TestOverlappingRunsAreRefused(t *testing.T) {
	ws, _ := newDemo(t)
	unlock, err := flow.Lock(context.Background(), ws, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if _, err := flow.Lock(context.Background(), ws, 300*time.Millisecond); !errors.Is(err, flow.ErrPrecondition) {
		t.Fatalf("second lock: %v, want a precondition error", err)
	}
	// --wait ends at ctrl+c (the context), not only at its deadline.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	if _, err := flow.Lock(ctx, ws, time.Minute); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v, want context.Canceled", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the wait went on %v after the cancellation", took)
	}
}

var _ = run.StatusLoaded
