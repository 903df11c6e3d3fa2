package flow_test

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/sink/hivesink"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/internal/gluetest"
	"github.com/lima-lake/lima/reports"
)

// hiveDemo is the demo workspace with the hive pattern (and catalog),
// approved again as a person would after the change.
func hiveDemo(t *testing.T, catalog string) (flow.Workspace, *plan.Plan) {
	t.Helper()
	ws, p := newDemo(t)
	p.Platform.Pattern = plan.PatternHive
	p.Platform.Catalog = catalog
	if catalog == plan.CatalogGlue {
		p.Platform.Region = "eu-central-1"
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	p.Gates.DataModel.PlanHash = p.Hash()
	return ws, p
}

// partitionFolders lists, per table, the folders under the table that
// hold Parquet files (relative, slash-separated), from the file system.
func partitionFolders(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".parquet") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		segs := strings.Split(filepath.ToSlash(rel), "/")
		tbl, dir := segs[0], strings.Join(segs[1:len(segs)-1], "/")
		if !contains(out[tbl], dir) {
			out[tbl] = append(out[tbl], dir)
		}
		return nil
	})
	for k := range out {
		sort.Strings(out[k])
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// TestHiveDemoMatchesTheIcebergDemo runs the demo twice, once into
// Iceberg and once into Hive-style Parquet, and compares the report
// numbers; gate 4 reads the Hive tables back through their manifests. A
// rerun adds nothing.
func TestHiveDemoMatchesTheIcebergDemo(t *testing.T) {
	iws, ip := newDemo(t)
	ice := runOnce(t, iws, ip, flow.RunOptions{}).Report
	ws, p := hiveDemo(t, "")
	hive := runOnce(t, ws, p, flow.RunOptions{}).Report
	if hive.Status != reports.StatusOK || hive.ExitCode() != 0 || hive.Status != ice.Status {
		t.Fatalf("hive status %s (exit %d), iceberg %s", hive.Status, hive.ExitCode(), ice.Status)
	}
	if len(hive.Tables) != len(ice.Tables) || len(hive.Tables) == 0 {
		t.Fatalf("%d tables, iceberg %d", len(hive.Tables), len(ice.Tables))
	}
	for _, it := range ice.Tables {
		ht := tableReport(t, hive, it.Name)
		if ht.RowsRead != it.RowsRead || ht.RowsLoaded != it.RowsLoaded || ht.RowsQuarantined != it.RowsQuarantined || ht.RowsSkipped != it.RowsSkipped ||
			ht.Status != it.Status || ht.Reconciliation != it.Reconciliation || !ht.Balanced {
			t.Errorf("%s: hive %s %d/%d/%d/%d %s, iceberg %s %d/%d/%d/%d %s", it.Name, ht.Status, ht.RowsRead, ht.RowsLoaded, ht.RowsQuarantined, ht.RowsSkipped, ht.Reconciliation,
				it.Status, it.RowsRead, it.RowsLoaded, it.RowsQuarantined, it.RowsSkipped, it.Reconciliation)
		}
		for col, ct := range it.ControlTotals {
			if hct := ht.ControlTotals[col]; hct.Target != ct.Target {
				t.Errorf("%s.%s: hive total %v, iceberg %v", it.Name, col, hct.Target, ct.Target)
			}
		}
	}
	if len(hive.Marts) != len(ice.Marts) {
		t.Errorf("%d marts, iceberg %d", len(hive.Marts), len(ice.Marts))
	}
	// The layout: every data file under <lake>/<ns>/<table>/load_date=…/.
	root := filepath.Join(ws.Warehouse(p), p.Namespace())
	folders := partitionFolders(t, root)
	insp := folders["inspections"]
	if len(insp) == 0 {
		t.Fatalf("no inspections files under %s: %v", root, folders)
	}
	for _, d := range insp {
		// a row without an inspection date lands in Hive's null partition
		if !strings.HasPrefix(d, "load_date=") || !strings.Contains(d, "/inspected_on_month=2026-") && !strings.HasSuffix(d, "/inspected_on_month="+hivesink.DefaultPartition) {
			t.Errorf("inspections folder %s", d)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "inspections", "_lima", "commits")); err != nil {
		t.Fatal(err)
	}
	// A rerun of the same input adds nothing.
	again := runOnce(t, ws, p, flow.RunOptions{}).Report
	sk, err := hivesink.Open(context.Background(), hivesink.Options{Warehouse: ws.Warehouse(p)})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range ice.Tables {
		if it.RowsLoaded == 0 {
			continue
		}
		has, err := sk.HasLoad(context.Background(), p.Namespace(), it.Name, tableReport(t, hive, it.Name).LoadID)
		if err != nil || !has {
			t.Errorf("%s: load %s not found: %v", it.Name, tableReport(t, hive, it.Name).LoadID, err)
		}
		if tr := tableReport(t, again, it.Name); tr.Status == "loaded" {
			t.Errorf("%s loaded again on a rerun of the same input", it.Name)
		}
	}
	if again.Status != reports.StatusOK {
		t.Errorf("rerun status %s", again.Status)
	}
}

// TestHiveDemoRegistersInGlue runs the demo with catalog glue against the
// local Glue endpoint: each table and each partition folder on disk is
// registered.
func TestHiveDemoRegistersInGlue(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDLOCALTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "local-test-secret")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_ENDPOINT_URL", "")
	srv := gluetest.New(t)
	t.Setenv("AWS_ENDPOINT_URL_GLUE", srv.URL())
	ws, p := hiveDemo(t, plan.CatalogGlue)
	r := runOnce(t, ws, p, flow.RunOptions{}).Report
	if r.Status != reports.StatusOK {
		t.Fatalf("status %s", r.Status)
	}
	root := filepath.Join(ws.Warehouse(p), p.Namespace())
	folders := partitionFolders(t, root)
	if len(folders) == 0 {
		t.Fatal("no data files")
	}
	for tbl, dirs := range folders {
		gt, ok := srv.Table(p.Namespace(), tbl)
		if !ok {
			t.Errorf("table %s not registered", tbl)
			continue
		}
		if want := "file://" + filepath.ToSlash(filepath.Join(root, tbl)); gt.StorageDescriptor.Location != want {
			t.Errorf("%s location %s, want %s", tbl, gt.StorageDescriptor.Location, want)
		}
		var got []string
		for _, part := range srv.Partitions(p.Namespace(), tbl) {
			got = append(got, strings.TrimPrefix(part.StorageDescriptor.Location, "file://"+filepath.ToSlash(filepath.Join(root, tbl))+"/"))
		}
		sort.Strings(got)
		if strings.Join(got, ",") != strings.Join(dirs, ",") {
			t.Errorf("%s partitions %v, folders on disk %v", tbl, got, dirs)
		}
	}
}

// TestHiveKillInsidePublish kills a real lima-tui process inside the hive
// commit — before the first file moves, after it, and after the manifest —
// then reruns: no half-visible load, exceptions settled, the table holds
// the load exactly once.
func TestHiveKillInsidePublish(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "lima-tui")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/lima-tui").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	for _, point := range []string{hivesink.FaultBeforePublish, hivesink.FaultMidPublish, hivesink.FaultAfterManifest} {
		t.Run(point, func(t *testing.T) {
			ws, p := hiveDemo(t, "")
			if err := p.Write(ws.PlanPath()); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, "run", "--force", "--plan", ws.PlanPath(), "--table", "inspections")
			cmd.Env = append(os.Environ(), "LIMA_FAULTPOINT="+point)
			if err := cmd.Run(); err == nil {
				t.Fatal("the process was not killed")
			} else if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != -1 {
				t.Fatalf("the process was not killed: %v", err)
			}
			sk, err := hivesink.Open(context.Background(), hivesink.Options{Warehouse: ws.Warehouse(p)})
			if err != nil {
				t.Fatal(err)
			}
			st := openLedger(t, ws, p)
			pending, err := st.PendingLoads(context.Background())
			if err != nil || len(pending) != 1 {
				t.Fatalf("pending loads after the kill: %v %v", pending, err)
			}
			committed, err := sk.HasLoad(context.Background(), p.Namespace(), "inspections", pending[0].LoadID)
			if err != nil || committed != (point == hivesink.FaultAfterManifest) {
				t.Fatalf("committed after a kill at %s: %v %v", point, committed, err)
			}
			cmd = exec.Command(bin, "run", "--force", "--plan", ws.PlanPath(), "--table", "inspections", "--json")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("rerun: %v\n%s", err, out)
			}
			if pending, _ := st.PendingLoads(context.Background()); len(pending) != 0 {
				t.Fatalf("pending after rerun: %v", pending)
			}
			spec := tableSpecOf(t, p, "inspections")
			tbl, err := sk.OpenTable(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			ht := tbl.(*hivesink.Table)
			files, err := ht.LiveFiles(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var rows int64
			for _, f := range files {
				rows += f.Rows
			}
			if rows != 12 {
				t.Fatalf("lake rows %d, want 12", rows)
			}
			// On disk: only the files the manifests list (nothing half-published
			// left), and no staging folder.
			var onDisk int
			filepath.WalkDir(filepath.Join(ws.Warehouse(p), p.Namespace(), "inspections"), func(path string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() && strings.HasSuffix(path, ".parquet") {
					onDisk++
				}
				return nil
			})
			if onDisk != len(files) {
				t.Fatalf("%d parquet files on disk, the manifests list %d", onDisk, len(files))
			}
			if n, _ := st.Count(context.Background(), ledger.Filter{Table: "inspections"}); n != 5 {
				t.Fatalf("ledger holds %d committed exceptions, want 5", n)
			}
		})
	}
}

// tableSpecOf is the sink spec of a plan table, as the loader builds it.
func tableSpecOf(t *testing.T, p *plan.Plan, name string) sink.TableSpec {
	t.Helper()
	tb := p.Tables[name]
	spec := sink.TableSpec{Name: name, Namespace: p.Namespace()}
	for _, c := range tb.Columns {
		typ, err := plan.ParseType(c.Type)
		if err != nil {
			t.Fatal(err)
		}
		spec.Columns = append(spec.Columns, c)
		spec.Types = append(spec.Types, typ)
		spec.Required = append(spec.Required, c.Required || slices.Contains(tb.Load.Keys, c.Name))
	}
	for _, s := range tb.Partition {
		pf, err := plan.ParsePartition(s)
		if err != nil {
			t.Fatal(err)
		}
		spec.Partition = append(spec.Partition, pf)
	}
	return spec
}

// hiveRows sums the rows of the live files of a hive table (from its
// manifests).
func hiveRows(t *testing.T, ws flow.Workspace, p *plan.Plan, name string) int64 {
	t.Helper()
	sk, err := hivesink.Open(context.Background(), hivesink.Options{Warehouse: ws.Warehouse(p)})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := sk.OpenTable(context.Background(), tableSpecOf(t, p, name))
	if err != nil {
		t.Fatal(err)
	}
	files, err := tbl.(*hivesink.Table).LiveFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, f := range files {
		n += f.Rows
	}
	// No file outside the manifests' live set stays in a partition folder
	// (a full refresh deletes the superseded ones).
	onDisk := 0
	filepath.WalkDir(filepath.Join(ws.Warehouse(p), p.Namespace(), name), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".parquet") {
			onDisk++
		}
		return nil
	})
	if onDisk != len(files) {
		t.Fatalf("%s: %d parquet files on disk, %d live", name, onDisk, len(files))
	}
	return n
}

// TestHiveReplayAndFullRefresh: fixed exceptions replay into a hive table
// once, gate 4 of the original load accounts for them, and a full refresh
// replaces the table.
func TestHiveReplayAndFullRefresh(t *testing.T) {
	ws, p := hiveDemo(t, "")
	runOnce(t, ws, p, flow.RunOptions{})
	st := openLedger(t, ws, p)
	ctx := context.Background()
	e1009 := findException(t, st, "inspections", "inspections_2026-02.csv", 4)
	e1010 := findException(t, st, "inspections", "inspections_2026-02.csv", 5)
	if err := st.Resolve(ctx, e1009.ID, map[string]string{"inspected_on": "2026-02-28"}, "ops", ""); err != nil {
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
	if tr.RowsLoaded != 2 || tr.Reconciliation != "pass" {
		t.Fatalf("replay: %+v", tr)
	}
	if n := hiveRows(t, ws, p, "inspections"); n != 14 {
		t.Fatalf("after replay %d rows, want 12 + 2", n)
	}
	recs, err := flow.Reconcile(ctx, ws, p, filepath.Base(filepath.Dir(mustLatestLoad(t, ws))))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Status != "pass" {
			t.Errorf("%s after replay: %+v", r.Table, r.Checks)
		}
		if r.Table == "inspections" && r.ControlTotals["cost"].Target != "6795.000" {
			t.Errorf("cost after replay %+v, want 6795.000 (6682.500 + 100.000 + 12.500)", r.ControlTotals["cost"])
		}
	}
	refresh := runOnce(t, ws, p, flow.RunOptions{Tables: []string{"inspections"}, FullRefresh: true})
	rt := tableReport(t, refresh.Report, "inspections")
	if rt.RowsLoaded != 14 || rt.Reconciliation != "pass" {
		t.Fatalf("refresh: loaded %d (%s)", rt.RowsLoaded, rt.Reconciliation)
	}
	if n := hiveRows(t, ws, p, "inspections"); n != 14 {
		t.Fatalf("after the full refresh %d rows, want 14", n)
	}
}
