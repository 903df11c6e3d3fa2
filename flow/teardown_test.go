package flow_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
)

// listing is every path under root (links not followed) with its size for
// files and its target for links: two equal listings mean nothing was
// added, removed or replaced.
func listing(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "link→" + target
		case d.IsDir():
			out[rel] = "dir"
		default:
			info, err := d.Info()
			if err != nil {
				return err
			}
			out[rel] = fmt.Sprintf("file %d", info.Size())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameListing compares two listings. The state database may grow when it
// is opened (the state store refreshes its planner statistics), so only
// its presence is compared.
func sameListing(t *testing.T, before, after map[string]string) {
	t.Helper()
	for p, v := range before {
		if p == filepath.Join(".lima", "state.db") && strings.HasPrefix(after[p], "file ") {
			continue
		}
		if after[p] != v {
			t.Errorf("%s: was %q, now %q", p, v, after[p])
		}
	}
	for p, v := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s appeared (%q)", p, v)
		}
	}
}

func teardownOpts(ws flow.Workspace, p *plan.Plan) flow.TeardownOptions {
	return flow.TeardownOptions{Workspace: ws, Plan: p}
}

func TestTeardownRefusesUnlessThePrefixIsTypedExactly(t *testing.T) {
	ws, p := newDemo(t)
	runOnce(t, ws, p, flow.RunOptions{})
	prefix := p.Platform.Prefix // erp_quality
	before := listing(t, ws.Dir)
	cases := []struct {
		name, typed, detail string
	}{
		{"nothing typed", "", "no confirmation was typed"},
		{"upper case", strings.ToUpper(prefix), "letter case or surrounding spaces"},
		{"trailing space", prefix + " ", "letter case or surrounding spaces"},
		{"leading space", " " + prefix, "letter case or surrounding spaces"},
		{"one letter more", prefix + "s", "typed exactly"},
		{"a prefix of it", prefix[:3], "typed exactly"},
		{"another project", "sales_eu", "typed exactly"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inv, res, err := flow.Teardown(context.Background(), teardownOpts(ws, p), c.typed)
			if !errors.Is(err, gates.ErrNotConfirmed) {
				t.Fatalf("err %v, want ErrNotConfirmed", err)
			}
			if inv == nil || inv.Empty() {
				t.Fatalf("the inventory should still list the lake: %+v", inv)
			}
			if res.Status != gates.Fail || len(res.Findings) != 1 {
				t.Fatalf("result %+v", res)
			}
			f := res.Findings[0]
			if f.Status != gates.Fail || !strings.Contains(f.Detail, "nothing was removed") || !strings.Contains(f.Detail, c.detail) {
				t.Errorf("finding detail %q, want it to say nothing was removed and %q", f.Detail, c.detail)
			}
			if f.Fix != "type the project prefix exactly: erp_quality" {
				t.Errorf("fix %q", f.Fix)
			}
			if len(res.DroppedTables) != 0 || len(res.Removed) != 0 {
				t.Errorf("something was removed: %+v", res)
			}
			sameListing(t, before, listing(t, ws.Dir))
		})
	}
	// The catalog still has every table (marts as mart_<name>).
	for _, name := range p.TableNames() {
		if p.Tables[name].Built() {
			name = "mart_" + name
		}
		loadIceberg(t, ws, p, name)
	}
}

func TestTeardownRemovesEverythingThenFindsNothing(t *testing.T) {
	ws, p := newDemo(t)
	out := runOnce(t, ws, p, flow.RunOptions{})
	sourceBefore := listing(t, filepath.Join(ws.Dir, "data"))
	planBytes, err := os.ReadFile(ws.PlanPath())
	if err != nil {
		t.Fatal(err)
	}
	// The user's docs are never removed.
	for _, f := range []string{"README.md", "ARCHITECTURE.md"} {
		if err := os.WriteFile(filepath.Join(ws.Dir, f), []byte("# mine\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	inv, err := flow.TeardownInventory(context.Background(), teardownOpts(ws, p))
	if err != nil {
		t.Fatal(err)
	}
	if inv.Blocked() || inv.Empty() {
		t.Fatalf("inventory blocked=%v empty=%v:\n%s", inv.Blocked(), inv.Empty(), inv.Summary())
	}
	// Every table of the plan is in the catalog, with one snapshot (one
	// run, one commit per table), its loaded rows, data and metadata files.
	if len(inv.Tables) != len(p.Tables) || inv.Catalog.DropTables != len(p.Tables) || !inv.Catalog.DropNamespace || !inv.Catalog.RemoveFile {
		t.Fatalf("catalog part %+v, tables %d", inv.Catalog, len(inv.Tables))
	}
	for _, ti := range inv.Tables {
		var loaded int64
		if strings.HasPrefix(ti.Name, "mart_") {
			for _, m := range out.Report.Marts {
				if m.Table == ti.Name {
					loaded = m.Rows
				}
			}
		} else {
			loaded = tableReport(t, out.Report, ti.Name).RowsLoaded
		}
		tr := struct{ RowsLoaded int64 }{loaded}
		if !ti.InPlan || !ti.Managed || !ti.Drop || !ti.RemoveFiles || ti.Snapshots != 1 || ti.Rows != tr.RowsLoaded ||
			ti.DataFiles < 1 || ti.DataBytes <= 0 || ti.MetadataFiles < 1 || ti.Symlinks != 0 {
			t.Errorf("table %+v (report: %d rows loaded)", ti, tr.RowsLoaded)
		}
	}
	// raw/ and history/ do not exist yet: shown with 0 files.
	if len(inv.Layers) != 2 || inv.Layers[0].Exists || inv.Layers[1].Exists || inv.Layers[0].Files != 0 {
		t.Errorf("layers %+v", inv.Layers)
	}
	// The state: one run, every exception of the run, as SQLite files.
	if !inv.State.Open || !inv.State.RowsRemoved || inv.State.Runs != 1 || inv.State.Exceptions != out.Report.Exceptions.Total || inv.State.PendingLoads != 0 {
		t.Errorf("state %+v, report exceptions %d", inv.State, out.Report.Exceptions.Total)
	}
	kinds := map[string]int{}
	for _, a := range inv.Areas {
		kinds[a.Kind]++
	}
	if kinds[gates.AreaTable] != len(p.Tables) || kinds[gates.AreaNamespace] != 1 || kinds[gates.AreaReports] != 1 || kinds[gates.AreaState] < 2 {
		t.Errorf("areas by kind %v", kinds)
	}
	sum := inv.Summary()
	for _, want := range []string{"erp_quality.inspections", "namespace erp_quality — dropped", "raw/", "0 files (not there)",
		"1 run(s)", "platform.yaml — the plan", "README.md — your platform's documentation", "data/erp — the source data"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}

	ctasInfo, err := os.Stat(filepath.Join(ws.Dir, "athena", "mart_inspections_by_supplier_month.sql"))
	if err != nil {
		t.Fatal(err)
	}
	ctasSize := ctasInfo.Size()
	_, res, err := flow.Teardown(context.Background(), teardownOpts(ws, p), "erp_quality")
	if err != nil {
		t.Fatalf("teardown: %v\n%s", err, res.Summary())
	}
	if res.Status != gates.Pass || len(res.DroppedTables) != len(p.Tables) || !res.DroppedNamespace || res.RemovedFiles == 0 {
		t.Fatalf("result %+v", res)
	}
	// What is left, by hand: the plan, the docs, the source data and the
	// state folder holding only the (empty) run lock.
	want := map[string]string{
		".":                                "dir",
		"platform.yaml":                    fmt.Sprintf("file %d", len(planBytes)),
		"README.md":                        "file 7",
		"ARCHITECTURE.md":                  "file 7",
		".lima":                            "dir",
		filepath.Join(".lima", "run.lock"): "file 0",
	}
	for p, v := range sourceBefore {
		want[filepath.Join("data", p)] = v
	}
	// The Athena CTAS files are deployment artifacts generated from the plan,
	// like the docs: kept.
	want["athena"] = "dir"
	want[filepath.Join("athena", "mart_inspections_by_supplier_month.sql")] = fmt.Sprintf("file %d", ctasSize)
	sameListing(t, want, listing(t, ws.Dir))
	if b, _ := os.ReadFile(ws.PlanPath()); string(b) != string(planBytes) {
		t.Error("platform.yaml changed")
	}
	// The catalog, opened afresh, knows no namespace.
	sk, err := flow.OpenSink(context.Background(), ws, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	nss, err := sk.Catalog().ListNamespaces(context.Background(), nil)
	sk.Close()
	if err != nil || len(nss) != 0 {
		t.Errorf("namespaces after teardown: %v %v", nss, err)
	}
	os.RemoveAll(filepath.Join(ws.Dir, "lake"))
	os.Remove(ws.CatalogPath(p))

	// Idempotent: a second teardown finds nothing and succeeds.
	after := listing(t, ws.Dir)
	inv2, res2, err := flow.Teardown(context.Background(), teardownOpts(ws, p), "erp_quality")
	if err != nil {
		t.Fatalf("second teardown: %v", err)
	}
	if !inv2.Empty() || res2.Status != gates.Pass || len(res2.Removed) != 0 || len(res2.DroppedTables) != 0 {
		t.Errorf("second teardown found %+v / did %+v", inv2, res2)
	}
	sameListing(t, after, listing(t, ws.Dir))
}

func TestTeardownDoesNotFollowLinksOutOfTheLake(t *testing.T) {
	ws, p := newDemo(t)
	runOnce(t, ws, p, flow.RunOptions{})
	outside := t.TempDir()
	precious := filepath.Join(outside, "precious.txt")
	if err := os.WriteFile(precious, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(outside, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "sub", "also.txt"), []byte("and me"), 0o600); err != nil {
		t.Fatal(err)
	}
	ns := p.Namespace()
	links := []string{
		filepath.Join(ws.Dir, "lake", ns+".db", "inspections", "data", "evil"), // inside a table folder
		filepath.Join(ws.Dir, "lake", ns+".db", "stray"),                       // in the namespace folder
		filepath.Join(ws.Dir, "lake", "raw"),                                   // raw/ itself is a link
		filepath.Join(ws.Dir, "reports", "elsewhere"),                          // in reports/
		filepath.Join(ws.Dir, ".lima", "quarantine"),                           // in the state folder
	}
	for _, l := range links {
		if err := os.Symlink(outside, l); err != nil {
			t.Fatal(err)
		}
	}
	fileLink := filepath.Join(ws.Dir, "lake", "history")
	if err := os.Symlink(precious, fileLink); err != nil {
		t.Fatal(err)
	}
	outsideBefore := listing(t, outside)

	inv, err := flow.TeardownInventory(context.Background(), teardownOpts(ws, p))
	if err != nil {
		t.Fatal(err)
	}
	if inv.Total.Symlinks != int64(len(links)+1) {
		t.Errorf("inventory counts %d links, want %d:\n%s", inv.Total.Symlinks, len(links)+1, inv.Summary())
	}
	for _, l := range inv.Layers {
		if !l.Exists || l.Symlinks != 1 || l.Files != 0 {
			t.Errorf("layer %+v: a link, not followed", l)
		}
	}
	if _, res, err := flow.Teardown(context.Background(), teardownOpts(ws, p), "erp_quality"); err != nil {
		t.Fatalf("teardown: %v\n%s", err, res.Summary())
	}
	for _, l := range append(links, fileLink) {
		if _, err := os.Lstat(l); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("link %s is still there: %v", l, err)
		}
	}
	sameListing(t, outsideBefore, listing(t, outside))
	if b, err := os.ReadFile(precious); err != nil || string(b) != "keep me" {
		t.Errorf("the link's target was touched: %q %v", b, err)
	}
}

func TestTeardownBlocksWhenTheLakeWouldReachProtectedFiles(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, ws flow.Workspace, p *plan.Plan)
		want  string
	}{
		{"source data inside raw/", func(t *testing.T, ws flow.Workspace, p *plan.Plan) {
			dir := filepath.Join(ws.Dir, "lake", "raw", "erp")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "x.csv"), []byte("a\n1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			p.Sources["erp"].Path = "lake/raw/erp"
		}, "the source data"},
		{"warehouse is the workspace", func(t *testing.T, ws flow.Workspace, p *plan.Plan) {
			p.Storage.Warehouse = "."
		}, "the workspace folder or one of its parents"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws, p := newDemo(t)
			runOnce(t, ws, p, flow.RunOptions{})
			c.setup(t, ws, p)
			before := listing(t, ws.Dir)
			inv, res, err := flow.Teardown(context.Background(), teardownOpts(ws, p), "erp_quality")
			if !errors.Is(err, gates.ErrTeardownBlocked) {
				t.Fatalf("err %v, want ErrTeardownBlocked", err)
			}
			if !inv.Blocked() || len(res.DroppedTables) != 0 || len(res.Removed) != 0 {
				t.Fatalf("inventory blocked=%v, result %+v", inv.Blocked(), res)
			}
			found := slices.ContainsFunc(res.Findings, func(f gates.Finding) bool { return strings.Contains(f.Detail, c.want) })
			if !found {
				t.Errorf("no finding mentions %q: %+v", c.want, res.Findings)
			}
			sameListing(t, before, listing(t, ws.Dir))
		})
	}
}

func TestTeardownRefusesWhenTheBlastRadiusGrewSinceShown(t *testing.T) {
	ws, p := newDemo(t)
	runOnce(t, ws, p, flow.RunOptions{})
	shown, err := flow.TeardownInventory(context.Background(), teardownOpts(ws, p))
	if err != nil {
		t.Fatal(err)
	}
	// A table appears after the person looked.
	sk, tbl := loadIceberg(t, ws, p, "suppliers")
	if _, err := sk.Catalog().CreateTable(context.Background(), table.Identifier{p.Namespace(), "late_arrival"}, tbl.Schema(),
		catalog.WithProperties(iceberg.Properties{"lima.managed": "true"})); err != nil {
		t.Fatal(err)
	}
	sk.Close()
	before := listing(t, ws.Dir)
	o := teardownOpts(ws, p)
	o.Shown = shown
	_, res, err := flow.Teardown(context.Background(), o, "erp_quality")
	if !errors.Is(err, gates.ErrNotConfirmed) || !strings.Contains(res.Findings[0].Detail, "table late_arrival") {
		t.Fatalf("err %v, result %+v", err, res)
	}
	sameListing(t, before, listing(t, ws.Dir))
}
