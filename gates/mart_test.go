package gates

import (
	"context"
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
)

// martPlan: orders (the fact) joined to customers, a monthly mart by
// region.
//
//	customers: C1 north | C2 south
//	orders: order_id customer_id ordered_on amount decimal(9,2) qty
//	  1 C1 2026-01-03 10.00 1
//	  2 C1 2026-01-09  5.25 2
//	  3 C2 2026-01-10  7.00 NULL
//	  4 C2 2026-02-01  1.10 4
//
// By hand: (2026-01-01, north) amount 15.25 rows 2 qty 3;
// (2026-01-01, south) 7.00 1 NULL; (2026-02-01, south) 1.10 1 4.
func martPlan() *plan.Plan {
	return &plan.Plan{SchemaVersion: 1, Platform: plan.Platform{Prefix: "shop"},
		Sources: map[string]*plan.Source{"s": {Kind: "files", Path: "d"}},
		Tables: map[string]*plan.Table{
			"customers": {Source: &plan.TableSource{Name: "s", Files: []string{"c.csv"}},
				Columns: []plan.Column{{Name: "customer_id", Type: "string"}, {Name: "region", Type: "string"}},
				Load:    plan.LoadSpec{Keys: []string{"customer_id"}}},
			"orders": {Source: &plan.TableSource{Name: "s", Files: []string{"o.csv"}},
				Columns: []plan.Column{{Name: "order_id", Type: "long"}, {Name: "customer_id", Type: "string"},
					{Name: "ordered_on", Type: "date"}, {Name: "amount", Type: "decimal(9,2)"}, {Name: "qty", Type: "long"}},
				Load: plan.LoadSpec{Keys: []string{"order_id"}}},
			"sales": {Type: plan.TableMart, From: []string{"orders", "customers"},
				Joins: []plan.JoinKey{{Column: "customer_id", References: "customers.customer_id"}},
				Dimensions: []plan.Dimension{{Name: "month", Column: "ordered_on", Transform: "month"},
					{Name: "region", Column: "customers.region"}},
				Grain: []string{"month", "region"},
				Measures: []plan.Measure{{Name: "total_amount", Agg: "sum", Column: "amount"},
					{Name: "row_count", Agg: "count"}, {Name: "total_qty", Agg: "sum", Column: "qty"},
					{Name: "avg_amount", Agg: "avg", Column: "amount"}},
				Columns: []plan.Column{{Name: "month", Type: "date"}, {Name: "region", Type: "string"},
					{Name: "total_amount", Type: "decimal(38,2)"}, {Name: "row_count", Type: "long"},
					{Name: "total_qty", Type: "long"}, {Name: "avg_amount", Type: "decimal(38,2)"}},
				SumSafeColumns: []string{"total_amount", "row_count", "total_qty"}},
		}}
}

// writeRows commits rows (text, "" for null) to a table, replacing or
// appending.
func writeRows(t *testing.T, tbl sink.Table, types []plan.Type, loadID string, replace bool, rows [][]string) {
	t.Helper()
	ctx := context.Background()
	var specs []clean.ColumnSpec
	for i, f := range tbl.Schema().Fields() {
		specs = append(specs, clean.ColumnSpec{Name: f.Name, Type: types[i]})
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
	if _, err := tbl.Commit(ctx, staged, sink.CommitProps{LoadID: loadID, Replace: replace}); err != nil {
		t.Fatal(err)
	}
}

func openBaseTable(t *testing.T, sk sink.Sink, p *plan.Plan, name string) (sink.Table, []plan.Type) {
	t.Helper()
	spec, err := mart.Spec(p, name)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := sk.OpenTable(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	return tbl, spec.Types
}

func TestReconcileMart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	sk, err := icesink.Open(ctx, icesink.Options{CatalogPath: filepath.Join(dir, "catalog.db"), Warehouse: filepath.Join(dir, "lake")})
	if err != nil {
		t.Fatal(err)
	}
	defer sk.Close()
	p := martPlan()
	cust, ct := openBaseTable(t, sk, p, "customers")
	writeRows(t, cust, ct, "ld-c", true, [][]string{{"C1", "north"}, {"C2", "south"}})
	ord, ot := openBaseTable(t, sk, p, "orders")
	writeRows(t, ord, ot, "ld-o", true, [][]string{
		{"1", "C1", "2026-01-03", "10.00", "1"}, {"2", "C1", "2026-01-09", "5.25", "2"},
		{"3", "C2", "2026-01-10", "7.00", ""}, {"4", "C2", "2026-02-01", "1.10", "4"}})
	res, err := mart.Build(ctx, p, sk, "sales", map[string]mart.Input{"orders": {LoadID: "ld-o", Table: ord}, "customers": {LoadID: "ld-c", Table: cust}}, mart.Options{})
	if err != nil {
		t.Fatal(err)
	}
	bases := map[string]sink.Table{"orders": ord, "customers": cust}

	rec, err := ReconcileMart(ctx, p, "sales", res.Handle, bases)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != Pass || rec.LakeRows != 3 {
		t.Fatalf("untouched mart: %s, %d rows: %+v", rec.Status, rec.LakeRows, rec.Checks)
	}
	if got := rec.Checks[1].Detail; !strings.HasPrefix(got, "sum(amount), count(*), sum(qty) recomputed for 3 groups from 4 rows of orders") || !strings.HasSuffix(got, "not recomputed: avg_amount") {
		t.Errorf("ground truth detail: %s", got)
	}
	// Totals by hand: 10.00 + 5.25 + 7.00 + 1.10 = 23.35; 4 rows; 1+2+4 = 7.
	for col, want := range map[string]string{"total_amount": "23.35", "row_count": "4", "total_qty": "7"} {
		if ct := rec.ControlTotals[col]; ct.Source != want || ct.Target != want || ct.Variance != "0" && ct.Variance != "0.00" {
			t.Errorf("control total %s: %+v, want %s on both sides", col, ct, want)
		}
	}

	// Tampered: one mart row's total changed by a cent, committed as a
	// new snapshot of the mart.
	types := res.Types
	writeRows(t, res.Handle, types, "ld-tampered", true, [][]string{
		{"2026-01-01", "north", "15.26", "2", "3", "7.63"},
		{"2026-01-01", "south", "7.00", "1", "", "7.00"},
		{"2026-02-01", "south", "1.10", "1", "4", "1.10"}})
	rec, err = ReconcileMart(ctx, p, "sales", res.Handle, bases)
	if err != nil {
		t.Fatal(err)
	}
	gt := rec.Checks[1]
	if rec.Status != Fail || gt.Status != Fail || !strings.Contains(gt.Detail, "(2026-01-01, north) total_amount: mart 15.26, base tables 15.25") {
		t.Fatalf("tampered mart: %s; ground truth %s: %s", rec.Status, gt.Status, gt.Detail)
	}
	if ct := rec.ControlTotals["total_amount"]; ct.Source != "23.35" || ct.Target != "23.36" || ct.Variance != "0.01" {
		t.Errorf("control total after tampering: %+v", ct)
	}

	// A group written twice: the grain is no longer unique.
	writeRows(t, res.Handle, types, "ld-dup", false, [][]string{{"2026-02-01", "south", "1.10", "1", "4", "1.10"}})
	rec, err = ReconcileMart(ctx, p, "sales", res.Handle, bases)
	if err != nil {
		t.Fatal(err)
	}
	if g := rec.Checks[0]; g.Status != Fail || g.Detail != "4 rows, 3 distinct grain values; repeated: (2026-02-01, south)" {
		t.Fatalf("duplicate group: %s: %s", g.Status, g.Detail)
	}

	// A missing group.
	writeRows(t, res.Handle, types, "ld-missing", true, [][]string{
		{"2026-01-01", "north", "15.25", "2", "3", "7.63"},
		{"2026-01-01", "south", "7.00", "1", "", "7.00"}})
	rec, err = ReconcileMart(ctx, p, "sales", res.Handle, bases)
	if err != nil {
		t.Fatal(err)
	}
	if gt := rec.Checks[1]; gt.Status != Fail || !strings.Contains(gt.Detail, "1 group(s) missing from the mart") || !strings.Contains(gt.Detail, "missing: (2026-02-01, south)") {
		t.Fatalf("missing group: %s: %s", gt.Status, gt.Detail)
	}
}
