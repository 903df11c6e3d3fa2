package flow_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lima-lake/lima/engine/demo"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink/hivesink"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/internal/fileuri"
	"github.com/lima-lake/lima/reports"
)

// demoAt creates the demo workspace in dir (which must not exist), with
// the pattern given, approved as a person would after the change.
func demoAt(t *testing.T, dir, pattern string) (flow.Workspace, *plan.Plan) {
	t.Helper()
	if _, err := demo.Create(dir, time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	ws := flow.Workspace{Dir: dir}
	p, err := flow.LoadPlan(ws.PlanPath())
	if err != nil {
		t.Fatal(err)
	}
	if pattern == plan.PatternHive {
		p.Platform.Pattern = plan.PatternHive
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
		p.Gates.DataModel.PlanHash = p.Hash()
	}
	if err := flow.CheckApproval(p); err != nil {
		t.Fatal(err)
	}
	return ws, p
}

// rowText renders row i of rec as "col=value|…" over the columns given.
func rowText(rec arrow.RecordBatch, i int, cols []string) string {
	var b strings.Builder
	for _, c := range cols {
		idx := rec.Schema().FieldIndices(c)
		v := "<missing>"
		if len(idx) == 1 {
			col := rec.Column(idx[0])
			if col.IsNull(i) {
				v = "<null>"
			} else {
				v = col.ValueStr(i)
			}
		}
		fmt.Fprintf(&b, "%s=%s|", c, v)
	}
	return b.String()
}

// demoLakeRows reads every table of the plan back (Iceberg through iceberg-go,
// Hive base tables through their manifests' live Parquet files) as sorted
// row texts over every column.
func demoLakeRows(t *testing.T, ws flow.Workspace, p *plan.Plan) map[string][]string {
	t.Helper()
	ctx := context.Background()
	out := map[string][]string{}
	names := p.TableNames()
	for i, n := range names {
		if p.Tables[n].Built() {
			names[i] = "mart_" + n
		}
	}
	collect := func(name string, rec arrow.RecordBatch) {
		var cols []string
		for _, f := range rec.Schema().Fields() {
			cols = append(cols, f.Name)
		}
		slices.Sort(cols)
		for i := 0; i < int(rec.NumRows()); i++ {
			out[name] = append(out[name], rowText(rec, i, cols))
		}
	}
	if p.Pattern() == plan.PatternHive {
		sk, err := hivesink.Open(ctx, hivesink.Options{Warehouse: ws.Warehouse(p)})
		if err != nil {
			t.Fatal(err)
		}
		defer sk.Close()
		for _, name := range p.TableNames() {
			if p.Tables[name].Built() {
				continue // a mart's rows are compared through the report
			}
			tbl, err := sk.OpenTable(ctx, tableSpecOf(t, p, name))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			files, err := tbl.(*hivesink.Table).LiveFiles(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range files {
				readParquet(t, filepath.Join(sk.TableLocation(p.Namespace(), name), filepath.FromSlash(f.Path)), func(rec arrow.RecordBatch) { collect(name, rec) })
			}
			slices.Sort(out[name])
		}
		return out
	}
	for _, name := range names {
		_, tbl := loadIceberg(t, ws, p, name)
		_, it, err := tbl.Scan().ToArrowRecords(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for rec, err := range it {
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			collect(name, rec)
			rec.Release()
		}
		slices.Sort(out[name])
		// Every location iceberg-go recorded resolves inside the workspace.
		for _, loc := range []string{tbl.Location(), tbl.MetadataLocation()} {
			if !fileuri.Is(loc) || !strings.HasPrefix(localPath(loc), ws.Dir+string(filepath.Separator)) {
				t.Errorf("%s: location %s is not under the workspace %s", name, loc, ws.Dir)
			}
		}
	}
	return out
}

// outside lists every path under parent that is not the workspace or
// under it.
func outside(t *testing.T, parent, ws string) map[string]string {
	t.Helper()
	all := listing(t, parent)
	rel, _ := filepath.Rel(parent, ws)
	for p := range all {
		if p == rel || strings.HasPrefix(p, rel+string(filepath.Separator)) {
			delete(all, p)
		}
	}
	return all
}

// TestDemoInHostileFolderNames runs the demo, Iceberg and Hive, in
// workspace folders whose names a hand-built file:// URI misreads (% as an
// escape, # as a fragment, ? as a query) or that need escaping (a space,
// non-ASCII): every file lands inside the workspace, gate 4 passes, the
// rows read back equal the demo's in a plain folder, and teardown removes
// the lake and nothing else.
func TestDemoInHostileFolderNames(t *testing.T) {
	for _, pattern := range []string{plan.PatternIceberg, plan.PatternHive} {
		t.Run(pattern, func(t *testing.T) {
			// The reference: the same demo in a plain folder.
			refWS, refP := demoAt(t, filepath.Join(t.TempDir(), "plain"), pattern)
			ref := runOnce(t, refWS, refP, flow.RunOptions{}).Report
			if ref.Status != reports.StatusOK {
				t.Fatalf("reference demo: status %s", ref.Status)
			}
			refRows := demoLakeRows(t, refWS, refP)
			if len(refRows) == 0 {
				t.Fatal("the reference demo has no tables")
			}
			// The reference rows are the rows the report says were loaded.
			for _, tr := range ref.Tables {
				if got := int64(len(refRows[tr.Name])); got != tr.RowsLoaded || got == 0 {
					t.Fatalf("reference %s: %d rows read back, report loaded %d", tr.Name, got, tr.RowsLoaded)
				}
			}
			if _, res, err := flow.Teardown(context.Background(), teardownOpts(refWS, refP), refP.Platform.Prefix); err != nil || res.Status != gates.Pass {
				t.Fatalf("reference teardown: %v %+v", err, res)
			}
			refLeft := listing(t, refWS.Dir)

			for i, name := range []string{"pct%41", "hash#lake", "what?lake", "space lake", "데모 lake"} {
				// The subtest's own name (and so t.TempDir's) stays plain: a
				// path misread at a # or ? must still land inside parent,
				// where the walk below sees it.
				t.Run(fmt.Sprintf("folder%d", i), func(t *testing.T) {
					t.Logf("workspace folder %q", name)
					parent := t.TempDir()
					// A neighbour holding what a misread name points at
					// (pct%41 read as pctA, hash#lake cut to hash).
					for _, n := range []string{"pctA", "hash", "what", "neighbour"} {
						if err := os.MkdirAll(filepath.Join(parent, n), 0o755); err != nil {
							t.Fatal(err)
						}
						if err := os.WriteFile(filepath.Join(parent, n, "keep.txt"), []byte("not Lima's"), 0o644); err != nil {
							t.Fatal(err)
						}
					}
					before := listing(t, parent)
					ws, p := demoAt(t, filepath.Join(parent, name), pattern)
					out := runOnce(t, ws, p, flow.RunOptions{}).Report
					sameListing(t, before, outside(t, parent, ws.Dir))
					if out.Status != reports.StatusOK || out.ExitCode() != 0 {
						var errs []string
						for _, tr := range out.Tables {
							if tr.Error != "" {
								errs = append(errs, tr.Name+": "+tr.Error)
							}
						}
						t.Fatalf("status %s (exit %d), want ok\n%s", out.Status, out.ExitCode(), strings.Join(errs, "\n"))
					}
					for _, tr := range out.Tables {
						if tr.Reconciliation != gates.Pass || !tr.Balanced {
							t.Errorf("%s: gate 4 %s, balanced %v", tr.Name, tr.Reconciliation, tr.Balanced)
						}
						rt := tableReport(t, ref, tr.Name)
						if tr.RowsRead != rt.RowsRead || tr.RowsLoaded != rt.RowsLoaded || tr.RowsQuarantined != rt.RowsQuarantined {
							t.Errorf("%s: read/loaded/quarantined %d/%d/%d, plain folder %d/%d/%d", tr.Name,
								tr.RowsRead, tr.RowsLoaded, tr.RowsQuarantined, rt.RowsRead, rt.RowsLoaded, rt.RowsQuarantined)
						}
					}
					for i, m := range out.Marts {
						if i >= len(ref.Marts) || m.Table != ref.Marts[i].Table || m.Rows != ref.Marts[i].Rows || m.Reconciliation != ref.Marts[i].Reconciliation {
							t.Errorf("mart %+v, plain folder %+v", m, ref.Marts)
						}
					}
					if len(out.Marts) != len(ref.Marts) {
						t.Errorf("%d marts, plain folder %d", len(out.Marts), len(ref.Marts))
					}
					if _, err := os.Stat(ws.Warehouse(p)); err != nil {
						t.Fatalf("no lake in the workspace: %v", err)
					}
					rows := demoLakeRows(t, ws, p)
					for tbl, want := range refRows {
						if !slices.Equal(rows[tbl], want) {
							t.Errorf("%s: %d rows read back, plain folder %d:\n got %q\nwant %q", tbl, len(rows[tbl]), len(want), rows[tbl], want)
						}
					}
					if len(rows) != len(refRows) {
						t.Errorf("%d tables read back, plain folder %d", len(rows), len(refRows))
					}

					_, res, err := flow.Teardown(context.Background(), teardownOpts(ws, p), p.Platform.Prefix)
					if err != nil || res.Status != gates.Pass {
						t.Fatalf("teardown: %v\n%s", err, res.Summary())
					}
					sameListing(t, before, outside(t, parent, ws.Dir))
					// What teardown leaves is what it leaves in a plain folder.
					left := listing(t, ws.Dir)
					for p := range left {
						if _, ok := refLeft[p]; !ok {
							t.Errorf("%s is left after teardown (not in a plain folder's)", p)
						}
					}
					for p := range refLeft {
						if _, ok := left[p]; !ok {
							t.Errorf("%s is gone after teardown (kept in a plain folder)", p)
						}
					}
				})
			}
		})
	}
}
