package flow_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/internal/gluetest"
	"github.com/lima-lake/lima/internal/s3test"
	"github.com/lima-lake/lima/reports"
)

// glueEnv points the AWS SDK at the local Glue endpoint with a throwaway
// key and no profile files.
func glueEnv(t *testing.T) *gluetest.Server {
	t.Helper()
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDLOCALTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "local-test-secret")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_ENDPOINT_URL", "")
	srv := gluetest.New(t)
	t.Setenv("AWS_ENDPOINT_URL_GLUE", srv.URL())
	return srv
}

// TestTeardownHiveGlue runs the hive demo registered in Glue, plants a
// table and a database Lima did not create, tears down, and checks that the
// plan's Glue tables (with their partitions), its table folders and — when
// nothing else is in it — its database are gone, while the planted things
// survive.
func TestTeardownHiveGlue(t *testing.T) {
	for _, sameDB := range []bool{false, true} {
		t.Run(map[bool]string{false: "database dropped", true: "database kept for a foreign table"}[sameDB], func(t *testing.T) {
			srv := glueEnv(t)
			ws, p := hiveDemo(t, plan.CatalogGlue)
			if r := runOnce(t, ws, p, flow.RunOptions{}).Report; r.Status != reports.StatusOK {
				t.Fatalf("status %s", r.Status)
			}
			db := strings.ToLower(p.Namespace())
			registered := srv.Tables(db)
			if len(registered) == 0 {
				t.Fatal("the run registered no Glue table")
			}
			wantParts := map[string]int{}
			for _, tb := range registered {
				wantParts[tb] = len(srv.Partitions(db, tb))
			}
			// Planted: another database with a table, and a file beside the
			// namespace folder; with sameDB, a foreign table in Lima's database.
			srv.PutDatabase(gluetest.Database{Name: "other_db"})
			srv.PutTable("other_db", gluetest.Table{Name: "keep_me"})
			if sameDB {
				srv.PutTable(db, gluetest.Table{Name: "foreign_tbl", StorageDescriptor: &gluetest.StorageDescriptor{Location: "s3://elsewhere/foreign"}})
			}
			other := filepath.Join(ws.Warehouse(p), "other.txt")
			if err := os.WriteFile(other, []byte("not Lima's"), 0o600); err != nil {
				t.Fatal(err)
			}

			inv, err := flow.TeardownInventory(context.Background(), teardownOpts(ws, p))
			if err != nil {
				t.Fatal(err)
			}
			if inv.Blocked() {
				t.Fatalf("blocked:\n%s", inv.Summary())
			}
			var dropped []string
			for _, ti := range inv.Tables {
				switch {
				case ti.Name == "foreign_tbl":
					if ti.Drop {
						t.Error("the foreign table would be dropped")
					}
				case !ti.Drop || !ti.InCatalog || !ti.RemoveFiles:
					t.Errorf("table %s: %+v", ti.Name, ti)
				default:
					dropped = append(dropped, ti.Name)
					if ti.Partitions != wantParts[ti.Name] || ti.Partitions == 0 {
						t.Errorf("table %s: %d partitions listed, Glue holds %d", ti.Name, ti.Partitions, wantParts[ti.Name])
					}
					if ti.DataFiles == 0 || ti.Snapshots == 0 {
						t.Errorf("table %s: %d data files, %d manifests", ti.Name, ti.DataFiles, ti.Snapshots)
					}
				}
			}
			sort.Strings(dropped)
			if !reflect.DeepEqual(dropped, registered) {
				t.Errorf("blast radius tables %v, registered %v", dropped, registered)
			}
			if inv.Catalog.DropNamespace == sameDB || inv.Catalog.DropTables != len(registered) {
				t.Errorf("catalog part %+v", inv.Catalog)
			}
			// The files listed are exactly the files under the table folders.
			var listed int64
			nsListed := false
			for _, a := range inv.Areas {
				if a.Kind == gates.AreaTable || a.Kind == gates.AreaNamespace {
					listed += a.Files
				}
				nsListed = nsListed || a.Kind == gates.AreaNamespace
			}
			if !nsListed && inv.OwnerMarker == filepath.Join(ws.Warehouse(p), p.Namespace(), gates.OwnerMarkerName) {
				listed++ // the ownership marker (outside the kept namespace folder's areas), removed last
			}
			onDisk := 0
			for _, v := range listing(t, filepath.Join(ws.Warehouse(p), p.Namespace())) {
				if strings.HasPrefix(v, "file ") {
					onDisk++
				}
			}
			if listed != int64(onDisk) || onDisk == 0 {
				t.Errorf("the blast radius lists %d lake files, the namespace folder holds %d", listed, onDisk)
			}
			if s := inv.Summary(); !strings.Contains(s, "Glue") && !strings.Contains(s, "glue") {
				t.Errorf("summary does not name Glue:\n%s", s)
			}

			_, res, err := flow.Teardown(context.Background(), teardownOpts(ws, p), p.Platform.Prefix)
			if err != nil {
				t.Fatalf("teardown: %v\n%s", err, res.Summary())
			}
			if got := srv.Tables(db); sameDB && !reflect.DeepEqual(got, []string{"foreign_tbl"}) || !sameDB && len(got) != 0 {
				t.Errorf("Glue tables left in %s: %v", db, got)
			}
			for _, tb := range registered {
				if n := len(srv.Partitions(db, tb)); n != 0 {
					t.Errorf("%s: %d partitions left", tb, n)
				}
			}
			if _, ok := srv.Database(db); ok != sameDB {
				t.Errorf("database %s exists=%v after the teardown", db, ok)
			}
			if res.DroppedNamespace == sameDB {
				t.Errorf("dropped namespace %v", res.DroppedNamespace)
			}
			if _, ok := srv.Table("other_db", "keep_me"); !ok {
				t.Error("the unrelated Glue table was removed")
			}
			// The namespace folder goes; with a foreign table in the database
			// it is kept, but without any file of the plan.
			if nsDir := filepath.Join(ws.Warehouse(p), p.Namespace()); !sameDB {
				if _, err := os.Stat(nsDir); err == nil {
					t.Error("the namespace folder survived")
				}
			} else if _, err := os.Stat(nsDir); err == nil {
				for rel, v := range listing(t, nsDir) {
					if v != "dir" {
						t.Errorf("%s left in the namespace folder", rel)
					}
				}
			}
			if b, err := os.ReadFile(other); err != nil || string(b) != "not Lima's" {
				t.Errorf("the unrelated file: %q %v", b, err)
			}
			for _, f := range []string{"platform.yaml", "README.md"} {
				if _, err := os.Stat(filepath.Join(ws.Dir, f)); err != nil {
					t.Errorf("%s: %v", f, err)
				}
			}
		})
	}
}

// TestS3DemoTeardown runs the S3 demo — Iceberg and Hive-style Parquet —
// into a warehouse on the loopback S3 server, compares the report numbers
// with the local demo's, plants objects the plan did not create, tears
// down, and checks that nothing of the plan remains under the warehouse
// while the planted objects and the source objects survive.
func TestS3DemoTeardown(t *testing.T) {
	cl := s3test.Client(t)
	s3test.SetEnv(t)
	ctx := context.Background()
	lws, lp := newDemo(t)
	local := runOnce(t, lws, lp, flow.RunOptions{})
	want, _ := readReportNumbers(t, local.ReportPath)

	for _, v := range []struct{ pattern, catalog string }{{plan.PatternIceberg, ""}, {plan.PatternHive, ""}, {plan.PatternIceberg, plan.CatalogGlue}} {
		pattern := v.pattern
		t.Run(pattern+"/"+v.catalog, func(t *testing.T) {
			var srv *gluetest.Server
			if v.catalog == plan.CatalogGlue {
				srv = gluetest.New(t)
				t.Setenv("AWS_ENDPOINT_URL_GLUE", srv.URL())
			}
			bucket := s3test.Bucket(t, cl)
			dir := t.TempDir()
			root := "s3://" + bucket + "/erp_quality"
			if _, err := flow.CreateDemoS3(ctx, dir, root, time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)); err != nil {
				t.Fatal(err)
			}
			ws := flow.Workspace{Dir: dir}
			p, err := flow.LoadPlan(ws.PlanPath())
			if err != nil {
				t.Fatal(err)
			}
			if pattern == plan.PatternHive || v.catalog != "" {
				p.Platform.Pattern = pattern
				if v.catalog != "" {
					// The loopback server signs for its own region.
					p.Platform.Catalog, p.Platform.Region = v.catalog, s3test.Config().Region
				}
				if err := p.Validate(); err != nil {
					t.Fatal(err)
				}
				p.Gates.DataModel.PlanHash = p.Hash()
			}
			out := runOnce(t, ws, p, flow.RunOptions{})
			got, _ := readReportNumbers(t, out.ReportPath)
			if out.Report.Status != reports.StatusOK {
				for _, tr := range out.Report.Tables {
					t.Logf("%s: %s %s", tr.Name, tr.Status, tr.Error)
				}
			}
			if len(got) != len(want) || len(want) < 6 {
				t.Fatalf("%d tables on S3, %d locally", len(got), len(want))
			}
			for name, w := range want {
				if g := got[name]; !reflect.DeepEqual(g, w) {
					t.Errorf("table %s:\n  S3    %+v\n  local %+v", name, g, w)
				}
			}
			whPrefix := "erp_quality/lake/"
			if pattern == plan.PatternHive {
				objs, err := cl.List(ctx, bucket, whPrefix+p.Namespace()+"/")
				if err != nil {
					t.Fatal(err)
				}
				var manifests, parquet, staged int
				for _, o := range objs {
					switch {
					case strings.Contains(o.Key, "/_staging/"):
						staged++
					case strings.Contains(o.Key, "/_lima/commits/"):
						manifests++
					case strings.HasSuffix(o.Key, ".parquet") && strings.Contains(o.Key, "/load_date="):
						parquet++
					}
				}
				if manifests == 0 || parquet == 0 || staged != 0 {
					t.Errorf("hive on S3: %d manifests, %d data files, %d staged objects left", manifests, parquet, staged)
				}
				again := runOnce(t, ws, p, flow.RunOptions{})
				c, _ := readReportNumbers(t, again.ReportPath)
				for name, tn := range c {
					if tn.Status != "already_loaded" {
						t.Errorf("rerun: %s is %s, want already_loaded", name, tn.Status)
					}
				}
			}

			// Planted: beside the plan's folders in the warehouse, and beside
			// the warehouse in the bucket.
			for _, k := range []string{whPrefix + "other/keep.txt", "erp_quality/keep.txt", whPrefix + p.Namespace() + "x/keep.txt"} {
				if err := cl.Put(ctx, bucket, k, strings.NewReader("keep"), nil); err != nil {
					t.Fatal(err)
				}
			}
			before, err := cl.List(ctx, bucket, "")
			if err != nil {
				t.Fatal(err)
			}
			// What the plan created, computed here from the listing: the
			// namespace folder, raw/ and history/ of the warehouse.
			nsFolder := whPrefix + p.Namespace() + "/"
			if pattern == plan.PatternIceberg {
				nsFolder = whPrefix + p.Namespace() + ".db/"
			}
			plans := map[string]bool{}
			var planBytes int64
			for _, o := range before {
				if strings.HasPrefix(o.Key, nsFolder) || strings.HasPrefix(o.Key, whPrefix+"raw/") || strings.HasPrefix(o.Key, whPrefix+"history/") {
					plans[o.Key] = true
					planBytes += o.Size
				}
			}
			if len(plans) == 0 {
				t.Fatal("the plan created nothing in the warehouse")
			}

			inv, err := flow.TeardownInventory(ctx, teardownOpts(ws, p))
			if err != nil {
				t.Fatal(err)
			}
			if inv.Blocked() {
				t.Fatalf("blocked:\n%s", inv.Summary())
			}
			listed := map[string]bool{}
			for _, px := range inv.Prefixes {
				for _, k := range px.Keys {
					if listed[k] {
						t.Errorf("%s listed twice", k)
					}
					listed[k] = true
				}
			}
			if !reflect.DeepEqual(listed, plans) || inv.Total.Bytes < planBytes {
				t.Errorf("the blast radius lists %d objects, the plan created %d (bytes %d ≥ %d?)", len(listed), len(plans), inv.Total.Bytes, planBytes)
			}
			if s := inv.Summary(); !strings.Contains(s, "s3://"+bucket+"/"+nsFolder) {
				t.Errorf("summary does not show %s:\n%s", nsFolder, s)
			}

			if srv != nil {
				// Every base table of the report and the marts Lima built.
				if n := len(srv.Tables(p.Namespace())); n < len(want) || inv.Catalog.DropTables != n || !inv.Catalog.DropNamespace {
					t.Errorf("Glue holds %v; the blast radius drops %d tables (namespace %v)", srv.Tables(p.Namespace()), inv.Catalog.DropTables, inv.Catalog.DropNamespace)
				}
				srv.PutDatabase(gluetest.Database{Name: "other_db"})
				srv.PutTable("other_db", gluetest.Table{Name: "keep_me"})
			}
			_, res, err := flow.Teardown(ctx, teardownOpts(ws, p), p.Platform.Prefix)
			if err != nil {
				t.Fatalf("teardown: %v\n%s", err, res.Summary())
			}
			if srv != nil {
				if _, ok := srv.Database(p.Namespace()); ok {
					t.Errorf("the Glue database %s survived with %v", p.Namespace(), srv.Tables(p.Namespace()))
				}
				if _, ok := srv.Table("other_db", "keep_me"); !ok {
					t.Error("the unrelated Glue table was removed")
				}
			}
			after, err := cl.List(ctx, bucket, "")
			if err != nil {
				t.Fatal(err)
			}
			left := map[string]bool{}
			for _, o := range after {
				left[o.Key] = true
				if plans[o.Key] {
					t.Errorf("%s survived the teardown", o.Key)
				}
			}
			for _, o := range before {
				if !plans[o.Key] && !left[o.Key] {
					t.Errorf("%s was not the plan's and was removed", o.Key)
				}
			}
			var removed int64
			for _, px := range inv.Prefixes {
				removed += px.Objects
			}
			if removed != int64(len(plans)) || res.RemovedFiles < removed {
				t.Errorf("removed %d objects (%d files in all), the plan had %d", removed, res.RemovedFiles, len(plans))
			}
			// A second teardown finds nothing.
			inv2, err := flow.TeardownInventory(ctx, teardownOpts(ws, p))
			if err != nil || len(inv2.Prefixes) != 0 {
				t.Errorf("second inventory: %v, %d prefixes", err, len(inv2.Prefixes))
			}
		})
	}
}

// TestTeardownHiveLocal: without a catalog, the hive tables are the
// folders under <lake>/<namespace>/. The plan's table folders (and their
// manifests) go; a folder Lima did not create (no _lima/, not in the plan)
// stays, and with it the namespace folder.
func TestTeardownHiveLocal(t *testing.T) {
	ws, p := hiveDemo(t, "")
	if r := runOnce(t, ws, p, flow.RunOptions{}).Report; r.Status != reports.StatusOK {
		t.Fatalf("status %s", r.Status)
	}
	nsDir := filepath.Join(ws.Warehouse(p), p.Namespace())
	planFiles := 0
	for _, v := range listing(t, nsDir) {
		if strings.HasPrefix(v, "file ") {
			planFiles++
		}
	}
	foreign := filepath.Join(nsDir, "foreign", "part.parquet")
	if err := os.MkdirAll(filepath.Dir(foreign), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(foreign, []byte("not Lima's"), 0o600); err != nil {
		t.Fatal(err)
	}
	inv, err := flow.TeardownInventory(context.Background(), teardownOpts(ws, p))
	if err != nil {
		t.Fatal(err)
	}
	var listed int64
	tables := 0
	for _, a := range inv.Areas {
		if a.Kind == gates.AreaTable {
			listed += a.Files
			tables++
		}
		if a.Kind == gates.AreaNamespace {
			t.Errorf("the namespace folder is in the blast radius though it holds a foreign folder")
		}
	}
	if inv.OwnerMarker == filepath.Join(nsDir, gates.OwnerMarkerName) {
		listed++ // the ownership marker, removed last
	}
	if listed != int64(planFiles) || planFiles == 0 || tables != len(p.Tables) || inv.Total.Tables != len(p.Tables) {
		t.Errorf("blast radius: %d files in %d table folders (%d tables in all); the plan wrote %d files for %d tables", listed, tables, inv.Total.Tables, planFiles, len(p.Tables))
	}
	_, res, err := flow.Teardown(context.Background(), teardownOpts(ws, p), p.Platform.Prefix)
	if err != nil {
		t.Fatalf("teardown: %v\n%s", err, res.Summary())
	}
	left := listing(t, nsDir)
	for rel, v := range left {
		if v != "dir" && rel != filepath.Join("foreign", "part.parquet") {
			t.Errorf("%s survived", rel)
		}
	}
	if b, err := os.ReadFile(foreign); err != nil || string(b) != "not Lima's" {
		t.Errorf("the foreign folder: %q %v", b, err)
	}
}

// TestBlastRadiusGrewCountsNewObjects: an object that appeared under a
// shown prefix, or a prefix not shown, makes the fresh blast radius larger
// than what the person confirmed.
func TestBlastRadiusGrewCountsNewObjects(t *testing.T) {
	shown := &gates.Inventory{Prefixes: []gates.PrefixInventory{{URI: "s3://b/lake/ns/", Keys: []string{"lake/ns/a", "lake/ns/b"}}}}
	same := &gates.Inventory{Prefixes: []gates.PrefixInventory{{URI: "s3://b/lake/ns/", Keys: []string{"lake/ns/a"}}}}
	if got := flow.BlastRadiusGrew(shown, same); len(got) != 0 {
		t.Errorf("a smaller radius grew: %v", got)
	}
	more := &gates.Inventory{Prefixes: []gates.PrefixInventory{{URI: "s3://b/lake/ns/", Keys: []string{"lake/ns/a", "lake/ns/c"}}, {URI: "s3://b/lake/raw/", Keys: []string{"lake/raw/x"}}}}
	got := flow.BlastRadiusGrew(shown, more)
	if strings.Join(got, "|") != "1 new object(s) under s3://b/lake/ns/|s3://b/lake/raw/" {
		t.Errorf("grew %v", got)
	}
}
