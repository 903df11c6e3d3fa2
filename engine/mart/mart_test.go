package mart_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/mart"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/sink/icesink"
	"github.com/lima-lake/lima/gates"
)

// The test lake: suppliers (a dimension) and inspections (the fact).
//
//	suppliers: supplier_id, country, rating decimal(3,1), annual_budget long
//	  S1 KR 4.5 1000 | S2 DE 3.0 2000 | S3 KR 4.0 500
//	inspections: inspection_id, supplier_id, inspected_on, lot_qty, cost decimal(10,3)
//	   1 S1 2026-01-05  100  10.500
//	   2 S1 2026-01-20  200  -2.250
//	   3 S2 2026-01-07   50   1.000
//	   4 S1 2026-02-02  300   0.125
//	   5 S2 2026-02-14  NULL  3.333
//	   6 S9 2026-02-28   10 100.000   (no such supplier: country NULL)
//	   7 S3 NULL         70   7.000   (no date: month NULL)
//	   8 S3 2026-03-01    1   0.001
//	   9 S3 2026-03-15    1   0.001
//	  10 S3 2026-03-20    0   0.000
var (
	supplierCols = []plan.Column{{Name: "supplier_id", Type: "string"}, {Name: "country", Type: "string"},
		{Name: "rating", Type: "decimal(3,1)"}, {Name: "annual_budget", Type: "long"}}
	supplierRows   = [][]string{{"S1", "KR", "4.5", "1000"}, {"S2", "DE", "3.0", "2000"}, {"S3", "KR", "4.0", "500"}}
	inspectionCols = []plan.Column{{Name: "inspection_id", Type: "long"}, {Name: "supplier_id", Type: "string"},
		{Name: "inspected_on", Type: "date"}, {Name: "lot_qty", Type: "long"}, {Name: "cost", Type: "decimal(10,3)"}}
	inspectionRows = [][]string{
		{"1", "S1", "2026-01-05", "100", "10.500"},
		{"2", "S1", "2026-01-20", "200", "-2.250"},
		{"3", "S2", "2026-01-07", "50", "1.000"},
		{"4", "S1", "2026-02-02", "300", "0.125"},
		{"5", "S2", "2026-02-14", "", "3.333"},
		{"6", "S9", "2026-02-28", "10", "100.000"},
		{"7", "S3", "", "70", "7.000"},
		{"8", "S3", "2026-03-01", "1", "0.001"},
		{"9", "S3", "2026-03-15", "1", "0.001"},
		{"10", "S3", "2026-03-20", "0", "0.000"},
	}
)

// testPlan is the plan with both base tables and the mart under test.
func testPlan() *plan.Plan {
	return &plan.Plan{SchemaVersion: 1, Platform: plan.Platform{Prefix: "qa"},
		Sources: map[string]*plan.Source{"s": {Kind: "files", Path: "data"}},
		Tables: map[string]*plan.Table{
			"suppliers": {Source: &plan.TableSource{Name: "s", Files: []string{"s.csv"}}, Columns: supplierCols,
				Load: plan.LoadSpec{Keys: []string{"supplier_id"}}},
			"inspections": {Source: &plan.TableSource{Name: "s", Files: []string{"i.csv"}}, Columns: inspectionCols,
				Load: plan.LoadSpec{Keys: []string{"inspection_id"}}, JoinKeys: []plan.JoinKey{{Column: "supplier_id", References: "suppliers.supplier_id"}}},
			"quality": {Type: plan.TableMart, From: []string{"inspections", "suppliers"},
				Joins: []plan.JoinKey{{Column: "supplier_id", References: "suppliers.supplier_id"}},
				Dimensions: []plan.Dimension{
					{Name: "inspected_month", Column: "inspected_on", Transform: "month"},
					{Name: "country", Column: "suppliers.country"}},
				Grain: []string{"inspected_month", "country"},
				Measures: []plan.Measure{
					{Name: "total_lot", Agg: "sum", Column: "lot_qty"},
					{Name: "total_cost", Agg: "sum", Column: "cost"},
					{Name: "n", Agg: "count"},
					{Name: "lots", Agg: "count", Column: "lot_qty"},
					{Name: "avg_cost", Agg: "avg", Column: "cost"},
					{Name: "avg_lot", Agg: "avg", Column: "lot_qty"},
					{Name: "max_rating", Agg: "max", Column: "suppliers.rating"},
					{Name: "budget", Agg: "sum", Column: "suppliers.annual_budget", PreAggregated: true},
				},
				Columns: []plan.Column{
					{Name: "inspected_month", Type: "date"}, {Name: "country", Type: "string"},
					{Name: "total_lot", Type: "long"}, {Name: "total_cost", Type: "decimal(38,3)"},
					{Name: "n", Type: "long"}, {Name: "lots", Type: "long"},
					{Name: "avg_cost", Type: "decimal(38,3)"}, {Name: "avg_lot", Type: "decimal(38,6)"},
					{Name: "max_rating", Type: "decimal(3,1)"}, {Name: "budget", Type: "long"},
				},
				SumSafeColumns: []string{"total_lot", "total_cost", "n", "lots"},
			},
		}}
}

func openSink(t *testing.T) *icesink.Sink {
	t.Helper()
	dir := t.TempDir()
	sk, err := icesink.Open(context.Background(), icesink.Options{CatalogPath: filepath.Join(dir, ".lima", "catalog.db"), Warehouse: filepath.Join(dir, "lake")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sk.Close() })
	return sk
}

// loadBase writes rows (text, "" for null) into a base table and commits
// them under loadID.
func loadBase(t *testing.T, sk sink.Sink, p *plan.Plan, name, loadID string, rows [][]string) sink.Table {
	t.Helper()
	ctx := context.Background()
	spec, err := mart.Spec(p, name)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := sk.OpenTable(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	var specs []clean.ColumnSpec
	for i, c := range spec.Columns {
		specs = append(specs, clean.ColumnSpec{Name: c.Name, Type: spec.Types[i]})
	}
	c, err := clean.NewCaster(specs, tbl.Schema(), memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	for _, r := range rows {
		if errs := c.Cast(r, nil); errs != nil {
			t.Fatalf("%v: %v", r, errs)
		}
		c.Accept()
	}
	b := c.NewBatch()
	staged, err := tbl.Stage(ctx, func(yield func(arrow.RecordBatch, error) bool) { yield(b, nil) })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Commit(ctx, staged, sink.CommitProps{LoadID: loadID, Replace: true}); err != nil {
		t.Fatal(err)
	}
	return tbl
}

// readBack returns the rows of a lake table as text, "|"-joined, in
// stored order.
func readBack(t *testing.T, tbl sink.Table) []string {
	t.Helper()
	it, err := tbl.(sink.Scanner).Scan(context.Background(), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		for r := 0; r < int(rec.NumRows()); r++ {
			var cells []string
			for c := 0; c < int(rec.NumCols()); c++ {
				cells = append(cells, gates.FormatValue(rec.Column(c), r))
			}
			out = append(out, strings.Join(cells, "|"))
		}
		rec.Release()
	}
	return out
}

func TestBuildHandComputed(t *testing.T) {
	ctx := context.Background()
	sk := openSink(t)
	p := testPlan()
	sup := loadBase(t, sk, p, "suppliers", "ld-sup-1", supplierRows)
	ins := loadBase(t, sk, p, "inspections", "ld-ins-1", inspectionRows)
	inputs := map[string]mart.Input{"suppliers": {LoadID: "ld-sup-1", Table: sup}, "inspections": {LoadID: "ld-ins-1", Table: ins}}
	res, err := mart.Build(ctx, p, sk, "quality", inputs, mart.Options{RunID: "run-1"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != mart.StatusBuilt || res.Table != "mart_quality" || res.Rows != 7 || res.FactRows != 10 {
		t.Fatalf("status %s table %s rows %d fact rows %d; want built mart_quality 7 10", res.Status, res.Table, res.Rows, res.FactRows)
	}
	// Worked out by hand from the rows above; groups ordered by month then
	// country, nulls first.
	//
	// month|country|total_lot|total_cost|n|lots|avg_cost|avg_lot|max_rating|budget
	want := []string{
		// row 7: S3, no date.
		"NULL|KR|70|7.000|1|1|7.000|70.000000|4.0|500",
		// row 3: S2.
		"2026-01-01|DE|50|1.000|1|1|1.000|50.000000|3.0|2000",
		// rows 1, 2: S1 twice; its budget counts once (pre-aggregated).
		// cost 10.500 - 2.250 = 8.250, avg 4.125; lot avg 300/2.
		"2026-01-01|KR|300|8.250|2|2|4.125|150.000000|4.5|1000",
		// row 6: S9 matches no supplier.
		"2026-02-01|NULL|10|100.000|1|1|100.000|10.000000|NULL|NULL",
		// row 5: lot_qty NULL: its sum and average are NULL, count(lot_qty) 0.
		"2026-02-01|DE|NULL|3.333|1|0|3.333|NULL|3.0|2000",
		// row 4.
		"2026-02-01|KR|300|0.125|1|1|0.125|300.000000|4.5|1000",
		// rows 8, 9, 10: S3 three times; cost 0.002/3 = 0.000667 → 0.001,
		// lots 2/3 = 0.6666667 → 0.666667 (half away from zero).
		"2026-03-01|KR|2|0.002|3|3|0.001|0.666667|4.0|500",
	}
	got := readBack(t, res.Handle)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("mart rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	c, _, err := res.Handle.Current(ctx)
	if err != nil || c.LoadID != res.LoadID || c.Props[mart.PropInputs] == "" {
		t.Fatalf("commit %+v (%v): want load id %s and the inputs recorded", c, err, res.LoadID)
	}
	if !strings.Contains(c.Props[mart.PropInputs], "inspections=ld-ins-1@") || !strings.Contains(c.Props[mart.PropInputs], "suppliers=ld-sup-1@") {
		t.Errorf("inputs property %q", c.Props[mart.PropInputs])
	}

	// The same inputs again: nothing is written.
	again, err := mart.Build(ctx, p, sk, "quality", inputs, mart.Options{RunID: "run-2"})
	if err != nil {
		t.Fatal(err)
	}
	if again.Status != mart.StatusAlreadyBuilt || again.LoadID != res.LoadID || again.Commit.SnapshotID != res.Commit.SnapshotID {
		t.Fatalf("rebuild: %s %s snapshot %d; want already_built with the same load id and snapshot", again.Status, again.LoadID, again.Commit.SnapshotID)
	}

	// A new load of the fact table: a new load id, and the mart is
	// replaced, not appended to. Only rows 1 and 3 remain.
	ins = loadBase(t, sk, p, "inspections", "ld-ins-2", [][]string{inspectionRows[0], inspectionRows[2]})
	inputs["inspections"] = mart.Input{LoadID: "ld-ins-2", Table: ins}
	third, err := mart.Build(ctx, p, sk, "quality", inputs, mart.Options{RunID: "run-3"})
	if err != nil {
		t.Fatal(err)
	}
	if third.Status != mart.StatusBuilt || third.LoadID == res.LoadID {
		t.Fatalf("after a new load: %s %s", third.Status, third.LoadID)
	}
	want = []string{
		"2026-01-01|DE|50|1.000|1|1|1.000|50.000000|3.0|2000",
		"2026-01-01|KR|100|10.500|1|1|10.500|100.000000|4.5|1000",
	}
	if got := readBack(t, third.Handle); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("after a new load:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestBuildRejects(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		change func(p *plan.Plan)
		want   string
	}{
		{"declared type differs", func(p *plan.Plan) { p.Tables["quality"].Columns[3].Type = "decimal(18,2)" },
			"total_cost is declared decimal(18,2) but the mart computes decimal(38,3); declare type decimal(38,3)"},
		{"not a built mart", func(p *plan.Plan) { p.Tables["quality"].From = nil }, "not a mart Lima builds"},
		{"join on a non-unique column", func(p *plan.Plan) {
			p.Tables["quality"].Joins[0] = plan.JoinKey{Column: "supplier_id", References: "suppliers.country"}
		}, "suppliers.country is not unique in suppliers"},
		{"sum of text", func(p *plan.Plan) { p.Tables["quality"].Measures[0].Column = "supplier_id" },
			"measure total_lot: sum needs a numeric column"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sk := openSink(t)
			p := testPlan()
			sup := loadBase(t, sk, p, "suppliers", "ld-sup-1", supplierRows)
			ins := loadBase(t, sk, p, "inspections", "ld-ins-1", inspectionRows)
			tc.change(p)
			_, err := mart.Build(ctx, p, sk, "quality", map[string]mart.Input{"suppliers": {LoadID: "a", Table: sup}, "inspections": {LoadID: "b", Table: ins}}, mart.Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v; want it to contain %q", err, tc.want)
			}
			if tc.name == "not a built mart" && !errors.Is(err, mart.ErrNotBuilt) {
				t.Errorf("not ErrNotBuilt: %v", err)
			}
		})
	}
}

func TestBuildOpensInputsFromThePlan(t *testing.T) {
	ctx := context.Background()
	sk := openSink(t)
	p := testPlan()
	loadBase(t, sk, p, "suppliers", "ld-sup-1", supplierRows)
	loadBase(t, sk, p, "inspections", "ld-ins-1", inspectionRows)
	res, err := mart.Build(ctx, p, sk, "quality", map[string]mart.Input{"suppliers": {LoadID: "ld-sup-1"}, "inspections": {LoadID: "ld-ins-1"}}, mart.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != 7 {
		t.Fatalf("%d rows, want 7", res.Rows)
	}
}

// An empty fact table: nothing to commit on a first build; a mart that had
// rows is replaced by an empty snapshot.
func TestBuildEmptyFact(t *testing.T) {
	ctx := context.Background()
	sk := openSink(t)
	p := testPlan()
	sup := loadBase(t, sk, p, "suppliers", "ld-sup-1", supplierRows)
	build := func(loadID string, rows [][]string) *mart.Result {
		t.Helper()
		ins := loadBase(t, sk, p, "inspections", loadID, rows)
		res, err := mart.Build(ctx, p, sk, "quality", map[string]mart.Input{"suppliers": {LoadID: "ld-sup-1", Table: sup}, "inspections": {LoadID: loadID, Table: ins}}, mart.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := build("ld-ins-empty", nil); res.Status != mart.StatusEmpty || res.Rows != 0 {
		t.Fatalf("first build of nothing: %s %d", res.Status, res.Rows)
	}
	if res := build("ld-ins-one", inspectionRows[:1]); res.Status != mart.StatusBuilt || len(readBack(t, res.Handle)) != 1 {
		t.Fatalf("one row: %s", res.Status)
	}
	if res := build("ld-ins-empty-again", nil); res.Status != mart.StatusBuilt || len(readBack(t, res.Handle)) != 0 {
		t.Fatalf("emptied: %s %v", res.Status, readBack(t, res.Handle))
	}
}
