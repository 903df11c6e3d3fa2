package gates

import (
	"errors"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/plan"
)

// renamePlan names orders.ordered_on, customers.customer_id and the
// table orders in every field of a plan that can name a column or a
// table.
const renamePlan = `schema_version: 1
platform: {prefix: acme}
sources:
  crm: {kind: files, path: data}
tables:
  orders:
    source: {name: crm, files: ["orders_*.csv"]}
    columns:
      - {name: order_id, type: long}
      - {name: customer_id, type: string}
      - {name: ordered_on, type: date}
      - {name: shipped_on, type: date}
      - {name: amount, type: "decimal(18,2)"}
      - {name: geomsabulryangsangse, type: string, source_name: 검사불량상세}
    partition: ["month(ordered_on)"]
    load: {mode: incremental, keys: [order_id], watermark: ordered_on}
    join_keys: [{column: customer_id, references: customers.customer_id}]
    checks:
      - {rule: not_null, column: ordered_on}
      - {rule: references, column: customer_id, references: customers.customer_id}
      - {rule: expression, expr: "ordered_on <= shipped_on or shipped_on = null"}
    control_columns: [amount]
  customers:
    source: {name: crm, files: [customers.csv]}
    columns:
      - {name: customer_id, type: string}
      - {name: region, type: string}
    load: {keys: [customer_id]}
  lines:
    source: {name: crm, files: [lines.csv]}
    columns:
      - {name: order_id, type: long}
      - {name: qty, type: long}
    join_keys: [{column: order_id, references: orders.order_id}]
    checks:
      - {rule: references, column: order_id, references: orders.order_id}
  sales_by_month:
    type: mart
    from: [orders, customers]
    joins: [{column: orders.customer_id, references: customers.customer_id}]
    dimensions:
      - {name: month, column: ordered_on, transform: month}
      - {name: region, column: customers.region}
    measures:
      - {name: total, agg: sum, column: orders.amount}
    columns:
      - {name: month, type: date}
      - {name: region, type: string}
      - {name: total, type: "decimal(38,2)"}
    grain: [month, region]
data_quality_issues:
  - {table: orders, column: ordered_on, issue: "two date orders"}
  - {table: customers, column: customer_id, issue: "padded ids"}
owners:
  - {name: Kim, table: orders, column: ordered_on}
  - {name: Lee, table: customers}
  - {name: Ops, default: true}
`

func loadRenamePlan(t *testing.T) *plan.Plan {
	t.Helper()
	p, err := plan.Parse([]byte(renamePlan), "platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err != nil {
		t.Fatalf("test setup: %v", err)
	}
	return p
}

// yamlOf is the plan as platform.yaml, for comparing whole plans.
func yamlOf(t *testing.T, p *plan.Plan) string {
	t.Helper()
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRenameColumnMovesEveryReference: renaming orders.ordered_on and
// customers.customer_id gives the plan written out by hand below (the
// source plan with each reference edited), which validates; the source
// headers are kept in source_name, and no renamed_from is recorded (no
// table is in the lake).
func TestRenameColumnMovesEveryReference(t *testing.T) {
	p := loadRenamePlan(t)
	if _, err := ApplyEditsIn(p, []string{"orders.ordered_on.name=order_date", "customers.customer_id.name=cust_no",
		"orders.geomsabulryangsangse.name=defect_detail"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err != nil {
		t.Fatalf("the renamed plan does not validate: %v", err)
	}
	want := renamePlan
	for _, r := range [][2]string{
		{"{name: ordered_on, type: date}", "{name: order_date, type: date, source_name: ordered_on}"},
		{"month(ordered_on)", "month(order_date)"},
		{"watermark: ordered_on", "watermark: order_date"},
		{"{rule: not_null, column: ordered_on}", "{rule: not_null, column: order_date}"},
		{"ordered_on <= shipped_on or shipped_on = null", "order_date <= shipped_on or shipped_on = null"},
		{"{name: month, column: ordered_on, transform: month}", "{name: month, column: order_date, transform: month}"},
		{"{table: orders, column: ordered_on, issue", "{table: orders, column: order_date, issue"},
		{"{name: Kim, table: orders, column: ordered_on", "{name: Kim, table: orders, column: order_date"},
		{"    columns:\n      - {name: customer_id, type: string}\n      - {name: region", "    columns:\n      - {name: cust_no, type: string, source_name: customer_id}\n      - {name: region"},
		{"references: customers.customer_id", "references: customers.cust_no"},
		{"load: {keys: [customer_id]}", "load: {keys: [cust_no]}"},
		{"{table: customers, column: customer_id, issue", "{table: customers, column: cust_no, issue"},
		{"{name: geomsabulryangsangse, type: string, source_name: 검사불량상세}", "{name: defect_detail, type: string, source_name: 검사불량상세}"},
	} {
		if !strings.Contains(want, r[0]) {
			t.Fatalf("test setup: %q is not in the plan", r[0])
		}
		want = strings.ReplaceAll(want, r[0], r[1])
	}
	wp, err := plan.Parse([]byte(want), "want.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got, w := yamlOf(t, p), yamlOf(t, wp); got != w {
		t.Errorf("renamed plan:\n%s\nwant:\n%s", got, w)
	}
	// orders.customer_id (not renamed) still names its own column.
	if o := p.Tables["orders"]; o.JoinKeys[0].Column != "customer_id" || o.Checks[1].Column != "customer_id" {
		t.Errorf("orders.customer_id's references moved: %+v %+v", o.JoinKeys, o.Checks)
	}
}

// TestRenameColumnInTheLakeRecordsRenamedFrom: when the table is in the
// lake with the column, the rename records the lake's name so the next
// commit renames the Iceberg column; a second rename keeps the lake's
// name, and renaming back to it clears both renamed_from and the
// redundant source_name. A column the lake does not have yet records
// nothing.
func TestRenameColumnInTheLakeRecordsRenamedFrom(t *testing.T) {
	p := loadRenamePlan(t)
	lake := Lake{"orders": {"order_id", "customer_id", "ordered_on", "shipped_on", "amount", "geomsabulryangsangse"}}
	col := func(n string) plan.Column {
		c, ok := p.Tables["orders"].Column(n)
		if !ok {
			t.Fatalf("no column %s", n)
		}
		return *c
	}
	steps := []struct {
		edit, name string
		want       plan.Column
	}{
		{"orders.geomsabulryangsangse.name=defect_detail", "defect_detail",
			plan.Column{Name: "defect_detail", Type: "string", SourceName: "검사불량상세", RenamedFrom: "geomsabulryangsangse"}},
		{"orders.defect_detail.name=defect", "defect",
			plan.Column{Name: "defect", Type: "string", SourceName: "검사불량상세", RenamedFrom: "geomsabulryangsangse"}},
		{"orders.defect.name=geomsabulryangsangse", "geomsabulryangsangse",
			plan.Column{Name: "geomsabulryangsangse", Type: "string", SourceName: "검사불량상세"}},
		{"orders.ordered_on.name=order_date", "order_date",
			plan.Column{Name: "order_date", Type: "date", SourceName: "ordered_on", RenamedFrom: "ordered_on"}},
		{"orders.order_date.name=ordered_on", "ordered_on", plan.Column{Name: "ordered_on", Type: "date"}},
	}
	for _, s := range steps {
		what, err := ApplyEditsIn(p, []string{s.edit}, lake)
		if err != nil {
			t.Fatalf("%s: %v", s.edit, err)
		}
		if got := col(s.name); got.Name != s.want.Name || got.SourceName != s.want.SourceName || got.RenamedFrom != s.want.RenamedFrom || got.Type != s.want.Type {
			t.Errorf("%s: %+v, want %+v", s.edit, got, s.want)
		}
		if s.want.RenamedFrom != "" && !strings.Contains(what[0], "lake's column "+s.want.RenamedFrom) {
			t.Errorf("%s: %q does not say the lake's column is renamed", s.edit, what[0])
		}
		if err := p.Validate(); err != nil {
			t.Errorf("%s: %v", s.edit, err)
		}
	}
	// A column the lake's table does not have is new there: nothing to
	// rename in the lake.
	lake["orders"] = []string{"order_id"}
	if _, err := ApplyEditsIn(p, []string{"orders.amount.name=total_amount"}, lake); err != nil {
		t.Fatal(err)
	}
	if c := col("total_amount"); c.RenamedFrom != "" || c.SourceName != "amount" {
		t.Errorf("a column not in the lake: %+v", c)
	}
}

// TestRenameTableMovesEveryReference: orders renamed sales keeps its
// source (the same files) and every reference to it moves; the plan is
// the source plan with each reference edited by hand, and validates.
func TestRenameTableMovesEveryReference(t *testing.T) {
	p := loadRenamePlan(t)
	what, err := ApplyEditsIn(p, []string{"orders.name=sales"}, Lake{"customers": {"customer_id", "region"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(what[0], "orders_*.csv") {
		t.Errorf("%q does not say where the rows still come from", what[0])
	}
	if err := p.Validate(); err != nil {
		t.Fatalf("the renamed plan does not validate: %v", err)
	}
	want := renamePlan
	for _, r := range [][2]string{
		{"  orders:\n", "  sales:\n"},
		{"references: orders.order_id", "references: sales.order_id"},
		{"from: [orders, customers]", "from: [sales, customers]"},
		{"{column: orders.customer_id, references", "{column: sales.customer_id, references"},
		{"column: orders.amount}", "column: sales.amount}"},
		{"{table: orders, column: ordered_on, issue", "{table: sales, column: ordered_on, issue"},
		{"{name: Kim, table: orders,", "{name: Kim, table: sales,"},
	} {
		if !strings.Contains(want, r[0]) {
			t.Fatalf("test setup: %q is not in the plan", r[0])
		}
		want = strings.ReplaceAll(want, r[0], r[1])
	}
	wp, err := plan.Parse([]byte(want), "want.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got, w := yamlOf(t, p), yamlOf(t, wp); got != w {
		t.Errorf("renamed plan:\n%s\nwant:\n%s", got, w)
	}
}

// TestRenameRefusesAndChangesNothing: each refusal is ErrEdit with the
// way forward, and the plan is as it was.
func TestRenameRefusesAndChangesNothing(t *testing.T) {
	inLake := Lake{"orders": {"order_id"}, "archive": {"x"}}
	for _, c := range []struct {
		set  string
		lake Lake
		says string
	}{
		{"orders.ordered_on.name=Order Date", nil, "lower-case letters"},
		{"orders.ordered_on.name=9th", nil, "lower-case letters"},
		{"orders.ordered_on.name=" + strings.Repeat("a", 129), nil, "longer than 128"},
		{"orders.ordered_on.name=amount", nil, "taken by column amount"},
		{"orders.ordered_on.name=", nil, "empty"},
		{"orders.nope.name=x", nil, "no column"},
		{"sales_by_month.month.name=m", nil, "no base table"},
		{"sales_by_month.name=monthly", nil, "no base table"},
		{"orders.name=customers", nil, "already exists in the plan"},
		{"orders.name=Sales", nil, "lower-case letters"},
		{"orders.name=sales", inLake, "already in the lake"},
		{"orders.name=sales", Lake{"orders_history": nil}, "already in the lake"},
		{"customers.name=archive", inLake, "the lake already has a table archive"},
	} {
		p := loadRenamePlan(t)
		before := yamlOf(t, p)
		_, err := ApplyEditsIn(p, []string{c.set}, c.lake)
		if !errors.Is(err, ErrEdit) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want ErrEdit saying %q", c.set, err, c.says)
		}
		if yamlOf(t, p) != before {
			t.Errorf("%s changed the plan", c.set)
		}
	}
	// In the lake: the way forward is named.
	_, err := ApplyEditsIn(loadRenamePlan(t), []string{"orders.name=sales"}, inLake)
	if err == nil || !strings.Contains(err.Error(), "keep the name") || !strings.Contains(err.Error(), "lima-tui teardown") {
		t.Errorf("in the lake: %v, want the ways forward", err)
	}
	// A Hive-style table in the lake cannot rename a column in place.
	p := loadRenamePlan(t)
	p.Platform.Pattern = plan.PatternHive
	if _, err := ApplyEditsIn(p, []string{"orders.ordered_on.name=order_date"}, inLake); !errors.Is(err, ErrEdit) || !strings.Contains(err.Error(), "Hive-style") {
		t.Errorf("hive column rename: %v", err)
	}
	if _, err := ApplyEditsIn(p, []string{"customers.customer_id.name=cust_no"}, inLake); err != nil {
		t.Errorf("hive: a table not in the lake refused a column rename: %v", err)
	}
	// A history table's name is taken.
	p = loadRenamePlan(t)
	p.Tables["customers"].History = true
	if _, err := ApplyEditsIn(p, []string{"orders.name=customers_history"}, nil); !errors.Is(err, ErrEdit) || !strings.Contains(err.Error(), "history table of customers") {
		t.Errorf("history name: %v", err)
	}
	// A mart written outside Lima that names the table: its SQL cannot move.
	p = loadRenamePlan(t)
	p.Tables["ext"] = &plan.Table{Type: plan.TableMart, WrittenBy: "dbt model marts/ext.sql (select … from acme.orders)",
		Columns: []plan.Column{{Name: "n", Type: "long"}}, Grain: []string{"n"}}
	before := yamlOf(t, p)
	if _, err := ApplyEditsIn(p, []string{"orders.name=sales"}, nil); !errors.Is(err, ErrEdit) || !strings.Contains(err.Error(), "mart ext is written outside Lima") {
		t.Errorf("external mart: %v", err)
	}
	if yamlOf(t, p) != before {
		t.Error("the refused rename changed the plan")
	}
	// orders_lines is not orders: the word must match whole.
	p.Tables["ext"].WrittenBy = "dbt (from acme.orders_lines)"
	if _, err := ApplyEditsIn(p, []string{"orders.name=sales"}, nil); err != nil {
		t.Errorf("a mart naming another table refused the rename: %v", err)
	}
	// ApplyEdit without the lake cannot rename.
	if _, err := ApplyEdit(loadRenamePlan(t), Edit{Table: "orders", Field: "name", Value: "sales"}); !errors.Is(err, ErrEdit) {
		t.Errorf("ApplyEdit renamed without knowing the lake: %v", err)
	}
}
