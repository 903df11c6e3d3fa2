package gates

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/engine/source/files"
)

// col builds the evidence of a column by hand: its inferred type, its
// values (one per row, "" for null) and the exact key set of the non-null
// ones.
func col(name, typ string, values ...string) ColumnEvidence {
	t, err := plan.ParseType(typ)
	if err != nil {
		panic(err)
	}
	ce := ColumnEvidence{Profile: clean.ColumnProfile{Name: name, Count: len(values), Inferred: clean.Inference{Type: t}}}
	keys := map[string]struct{}{}
	distinct := map[string]bool{}
	for _, v := range values {
		ce.Rows = append(ce.Rows, v)
		if v == "" {
			ce.Empty++
			continue
		}
		ce.Profile.NonNull++
		ce.Values = append(ce.Values, v)
		distinct[v] = true
		if _, dup := keys[v]; dup {
			ce.Dups++
			if ce.DupExample == "" {
				ce.DupExample = v
			}
		}
		keys[v] = struct{}{}
	}
	ce.KeySet = keys
	ce.Profile.Distinct = uint64(len(distinct))
	return ce
}

// span sets a date column's observed span.
func span(ce ColumnEvidence, from, to string) ColumnEvidence {
	ce.TimeMin, _ = time.Parse(time.DateOnly, from)
	ce.TimeMax, _ = time.Parse(time.DateOnly, to)
	return ce
}

func evTable(name string, rows int64, cols ...ColumnEvidence) *TableEvidence {
	return &TableEvidence{Name: name, Base: name, Source: "src", Globs: []string{name + ".csv"}, Units: []string{name + ".csv"}, Rows: rows, Columns: cols}
}

// seq returns n values prefix1 … prefixN.
func seq(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strings.Repeat("0", 3-len(itoa3(i+1))) + itoa3(i+1)
	}
	return out
}

func itoa3(i int) string {
	s := ""
	for ; i > 0; i /= 10 {
		s = string(rune('0'+i%10)) + s
	}
	return s
}

func finding(t *testing.T, fs []Finding, name string) Finding {
	t.Helper()
	for _, f := range fs {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no finding %q in %+v", name, fs)
	return Finding{}
}

func TestProposeKey(t *testing.T) {
	ids := seq("A", 100)
	dupIDs := append(slices.Clone(ids[:99]), ids[0]) // A001 twice
	twoDups := append(slices.Clone(ids[:98]), ids[0], ids[1])
	withNull := append(slices.Clone(ids[:99]), "")
	cases := []struct {
		name    string
		ev      *TableEvidence
		key     []string
		status  string
		contain string
	}{
		{"id beats code", evTable("t", 100, col("code", "string", ids...), col("order_id", "string", ids...)),
			[]string{"order_id"}, Pass, "order_id: 100 distinct values = 100 non-null = 100 rows (all rows read)"},
		{"a unique column not named like an identifier is no key", evTable("t", 100, col("name", "string", ids...)),
			nil, Warn, "no column named like an identifier"},
		{"an empty key value does not rule a column out: the row is held back", evTable("t", 100, col("order_id", "string", withNull...)),
			[]string{"order_id"}, Warn, "order_id: 99 distinct values in 100 rows; 1 row has no order_id: they will be held back at load (rule not_null for the empty keys"},
		{"one repeat in 100 rows: a key with a warning", evTable("t", 100, col("order_id", "string", dupIDs...)),
			[]string{"order_id"}, Warn, "order_id: 99 distinct values in 100 rows; 1 row repeats a key seen before (A001): they will be held back at load (rule unique for the repeats)"},
		{"two repeats in 100 rows: no key", evTable("t", 100, col("order_id", "string", twoDups...)), nil, Warn, "no column named like an identifier"},
		{"a double is never a key", evTable("t", 3, col("item_id", "double", "1.5", "2.5", "3.5")), nil, Warn, "no column"},
		{"uniqueness on a sample", func() *TableEvidence {
			ev := evTable("t", 100, col("order_no", "string", ids...))
			ev.Sampled = true
			return ev
		}(), []string{"order_no"}, Warn, "the files hold more, so uniqueness is only observed on this sample"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pr := Propose([]*TableEvidence{tc.ev}, ProposeOptions{})
			if got := pr.Plan.Tables["t"].Load.Keys; !slices.Equal(got, tc.key) {
				t.Errorf("keys %v, want %v", got, tc.key)
			}
			f := finding(t, pr.Findings, "t: key")
			if f.Status != tc.status || !strings.Contains(f.Detail, tc.contain) {
				t.Errorf("%s: %s; want %s containing %q", f.Status, f.Detail, tc.status, tc.contain)
			}
		})
	}
}

// bigTable makes a table's evidence a sample of 2 GiB of input and about
// 30 million rows (30 rows of 70 bytes read).
func bigTable(ev *TableEvidence) *TableEvidence {
	ev.Sampled, ev.RowBytes = true, 30*70
	ev.Files = []run.FileResult{{Name: "t.csv", Bytes: 2 << 30, RowsRead: 30, Status: "read"}}
	return ev
}

// TestProposeNoPartitionForSmallTables: a table of a few rows or of little
// input is not partitioned, whatever its dates.
func TestProposeNoPartitionForSmallTables(t *testing.T) {
	days := make([]string, 30)
	for i := range days {
		days[i] = time.Date(2026, 1, 1+i, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
	}
	small := evTable("t", 30, col("event_id", "string", seq("E", 30)...), span(col("occurred_on", "date", days...), "2025-01-01", "2026-04-02"))
	pr := Propose([]*TableEvidence{small}, ProposeOptions{})
	if got := pr.Plan.Tables["t"].Partition; got != nil {
		t.Errorf("partition %v of a 30-row table", got)
	}
	if f := finding(t, pr.Findings, "t: partition"); !strings.Contains(f.Detail, "none: a small table") {
		t.Errorf("detail %q", f.Detail)
	}
}

func TestProposePartition(t *testing.T) {
	ids := seq("E", 30)
	regions := make([]string, 30)
	for i := range regions {
		regions[i] = []string{"north", "south", "east"}[i%3]
	}
	many := seq("X", 30)
	days, stamps := make([]string, 30), make([]string, 30)
	for i := range days {
		days[i] = time.Date(2026, 1, 1+i, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
		stamps[i] = days[i] + "T08:00:00Z"
	}
	cases := []struct {
		name    string
		cols    []ColumnEvidence
		mode    string
		want    []string
		contain string
	}{
		{"span over three months: month", []ColumnEvidence{col("event_id", "string", ids...), span(col("occurred_on", "date", days...), "2026-01-01", "2026-04-02")},
			"", []string{"month(occurred_on)"}, "its values span 2026-01-01 … 2026-04-02, about 3 month(s) of"},
		{"a month of 2 GiB: day", []ColumnEvidence{col("event_id", "string", ids...), span(col("occurred_on", "date", days...), "2026-01-01", "2026-01-30")},
			"", []string{"day(occurred_on)"}, "about 30 day(s) of 68.3 MiB each"},
		{"a business date beats an audit column with a wider span", []ColumnEvidence{
			span(col("updated_at", "timestamptz", stamps...), "2020-01-01", "2030-01-01"), span(col("inspection_date", "date", days...), "2026-01-01", "2026-01-20")},
			"", []string{"day(inspection_date)"}, "inspection_date is the date most likely queried"},
		{"a plain date beats etl_loaded_ts", []ColumnEvidence{
			span(col("etl_loaded_ts", "timestamptz", stamps...), "2020-01-01", "2030-01-01"), span(col("valid_until", "date", days...), "2026-01-01", "2026-06-20")},
			"", []string{"month(valid_until)"}, "valid_until is the date most likely queried"},
		{"between two named dates, the widest span", []ColumnEvidence{
			span(col("shipped_on", "date", days...), "2026-01-01", "2026-01-10"), span(col("ordered_on", "date", days...), "2025-01-01", "2026-01-10")},
			"", []string{"month(ordered_on)"}, "ordered_on"},
		{"no date: a dimension of a few values", []ColumnEvidence{col("event_id", "string", ids...), col("region", "string", regions...)},
			"", []string{"region"}, "region (identity): no date column; region has 3 distinct values"},
		{"no date, no repeating dimension: none", []ColumnEvidence{col("event_id", "string", ids...), col("label", "string", many...)},
			"", nil, "none: no date column"},
		{"gate 1 said none", []ColumnEvidence{span(col("occurred_on", "date", days...), "2026-01-01", "2026-04-02")},
			"none", nil, "gate 1 chose no partitions"},
		{"gate 1 said date: no dimension fallback", []ColumnEvidence{col("region", "string", regions...)},
			"date", nil, "no date column"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pr := Propose([]*TableEvidence{bigTable(evTable("t", 30, tc.cols...))}, ProposeOptions{Partitioning: tc.mode})
			if got := pr.Plan.Tables["t"].Partition; !slices.Equal(got, tc.want) {
				t.Errorf("partition %v, want %v", got, tc.want)
			}
			if f := finding(t, pr.Findings, "t: partition"); !strings.Contains(f.Detail, tc.contain) {
				t.Errorf("detail %q lacks %q", f.Detail, tc.contain)
			}
		})
	}
}

func TestProposeJoins(t *testing.T) {
	custIDs := []string{"C1", "C2", "C3", "C4"}
	customers := evTable("customers", 4, col("customer_id", "string", custIDs...), col("name", "string", "a", "b", "c", "d"))
	cases := []struct {
		name    string
		fact    *TableEvidence
		want    []plan.JoinKey
		status  string
		contain string
	}{
		{"same name, all values found", evTable("orders", 5, col("order_id", "long", "1", "2", "3", "4", "5"), col("customer_id", "string", "C1", "C1", "C2", "C3", "C4")),
			[]plan.JoinKey{{Column: "customer_id", References: "customers.customer_id"}}, Pass,
			"same column name; customer_id is the key of customers; compared as keys (trimmed, NFC, without leading zeros, ignoring case): 5 of 5 rows with a value (100.0%), 4 of 4 distinct values of orders.customer_id are in customers.customer_id; a references check holds back a row whose value is not there"},
		{"same name, three of four found: joined with a warning", evTable("orders", 4, col("order_id", "long", "1", "2", "3", "4"), col("customer_id", "string", "C1", "C2", "C3", "C9")),
			[]plan.JoinKey{{Column: "customer_id", References: "customers.customer_id"}}, Warn, "3 of 4 rows with a value (75.0%), 3 of 4 distinct values of orders.customer_id are in customers.customer_id; 1 row whose customer_id is not in customers.customer_id (C9)"},
		{"same name, under half found: not a join", evTable("orders", 4, col("order_id", "long", "1", "2", "3", "4"), col("customer_id", "string", "C1", "X2", "X3", "X9")),
			nil, "", ""},
		{"another name, every value found", evTable("orders", 4, col("order_id", "long", "1", "2", "3", "4"), col("buyer_code", "string", "C1", "C2", "C3", "C2")),
			[]plan.JoinKey{{Column: "buyer_code", References: "customers.customer_id"}}, Pass, "4 of 4 rows with a value (100.0%), 3 of 3 distinct values"},
		{"another name, padded values found by their key form", evTable("orders", 4, col("order_id", "long", "1", "2", "3", "4"), col("buyer_code", "string", " C1", "C2 ", "C3", "C2")),
			[]plan.JoinKey{{Column: "buyer_code", References: "customers.customer_id"}}, Pass, "(100.0%)"},
		{"another name, 2 of 3 found: no join", evTable("orders", 4, col("order_id", "long", "1", "2", "3", "4"), col("buyer_code", "string", "C1", "C2", "Z3", "C2")),
			nil, "", ""},
		{"a measure that happens to match is no join", evTable("orders", 4, col("order_id", "long", "1", "2", "3", "4"), col("qty", "long", "1", "2", "3", "4")),
			nil, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pr := Propose([]*TableEvidence{customers, tc.fact}, ProposeOptions{})
			if got := pr.Plan.Tables["orders"].JoinKeys; !slices.Equal(got, tc.want) {
				t.Fatalf("join keys %v, want %v", got, tc.want)
			}
			if tc.want == nil {
				return
			}
			f := finding(t, pr.Findings, "orders."+tc.want[0].Column+" → customers.customer_id: join")
			if f.Status != tc.status || !strings.Contains(f.Detail, tc.contain) {
				t.Errorf("%s: %s; want %s containing %q", f.Status, f.Detail, tc.status, tc.contain)
			}
			// A table others join to is a dimension: no partition, no mart.
			if p := pr.Plan.Tables["customers"].Partition; p != nil {
				t.Errorf("customers partition %v", p)
			}
		})
	}
}

func TestProposeTypeRefinement(t *testing.T) {
	twelve := []string{"2026-01-01", "2026-01-02", "2026/1/3", "2026-01-04", "2026-01-05", "2026-01-06", "2026-01-07", "2026-01-08", "2026-01-09", "2026-01-10", "2026-01-11"}
	cases := []struct {
		name    string
		values  []string
		comma   bool
		order   clean.DateDecision
		typ     string
		formats []string
		contain string
	}{
		{"one bad date of twelve: date", append(slices.Clone(twelve), "2026-02-30"), false, clean.DateDecision{}, "date", []string{"yyyy-MM-dd", "yyyy/M/d"},
			`date (yyyy-MM-dd, yyyy/M/d): 11 of 12 values read fit it (91.7%); 1 value ("2026-02-30") does not`},
		{"two bad dates of twelve: text", append(slices.Clone(twelve[:10]), "2026-02-30", "soon"), false, clean.DateDecision{}, "string", nil, ""},
		{"fewer than five values need all to fit", []string{"1", "2", "x"}, false, clean.DateDecision{}, "string", nil, ""},
		{"SAP numbers with a typo: decimal", []string{"150.000-", "1,250.500", "980.250", "75.125-", "0.000", "12x.50"}, false, clean.DateDecision{}, "decimal(18,3)", nil, `("12x.50")`},
		{"decimal comma numbers", []string{"0,02", "-0,01", "1.234,5", "0,00", "bad"}, true, clean.DateDecision{}, "decimal(18,2)", nil, ""},
		{"d/M dates once the order is decided", []string{"15/01/2026", "03/02/2026", "28/02/2026"}, false,
			clean.DateDecision{Order: clean.OrderDayMonth, Patterns: []string{"dd/MM/yyyy"}}, "date", []string{"dd/MM/yyyy"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ce := col("v", "string", tc.values...)
			ce.Profile.NumberStyle.Style.DecimalComma = tc.comma
			ce.Profile.DateOrder = tc.order
			pr := Propose([]*TableEvidence{evTable("t", int64(len(tc.values)), ce)}, ProposeOptions{})
			c := pr.Plan.Tables["t"].Columns[0]
			if c.Type != tc.typ || !slices.Equal(c.Formats, tc.formats) {
				t.Fatalf("type %s %v, want %s %v", c.Type, c.Formats, tc.typ, tc.formats)
			}
			if tc.comma && !slices.Contains(c.Normalize, "decimal_comma") {
				t.Errorf("normalize %v lacks decimal_comma", c.Normalize)
			}
			if tc.contain != "" {
				if f := finding(t, pr.Findings, "t.v: type"); f.Status != Warn || !strings.Contains(f.Detail, tc.contain) {
					t.Errorf("%s: %s; want warn containing %q", f.Status, f.Detail, tc.contain)
				}
			}
		})
	}
}

func TestProposeDefaultMart(t *testing.T) {
	suppliers := evTable("suppliers", 3, col("supplier_id", "string", "S1", "S2", "S3"), col("rating", "decimal(3,1)", "4.5", "3.0", "4.0"))
	ins := evTable("inspections", 4,
		col("inspection_id", "long", "1", "2", "3", "4"),
		col("supplier_id", "string", "S1", "S1", "S2", "S3"),
		span(col("inspected_on", "date", "2026-01-05", "2026-01-20", "2026-02-07", "2026-03-02"), "2026-01-05", "2026-03-02"),
		col("cost", "decimal(10,3)", "1.000", "2.000", "3.000", "4.000"),
		col("defect_rate", "decimal(5,4)", "0.0100", "0.0200", "0.0300", "0.0400"),
		col("batch_no", "long", "7", "8", "9", "10"))
	pr := Propose([]*TableEvidence{suppliers, ins}, ProposeOptions{})
	m := pr.Plan.Tables["inspections_by_supplier_month"]
	if m == nil {
		t.Fatalf("no mart; tables %v", pr.Plan.TableNames())
	}
	if !slices.Equal(m.From, []string{"inspections"}) || !slices.Equal(m.Grain, []string{"inspected_month", "supplier_id"}) {
		t.Errorf("from %v grain %v", m.From, m.Grain)
	}
	want := []plan.Measure{{Name: "total_cost", Agg: "sum", Column: "cost"}, {Name: "avg_defect_rate", Agg: "avg", Column: "defect_rate"}, {Name: "row_count", Agg: "count"}}
	if !slices.Equal(m.Measures, want) {
		t.Errorf("measures %+v, want %+v", m.Measures, want)
	}
	if !slices.Equal(m.SumSafeColumns, []string{"total_cost", "row_count"}) {
		t.Errorf("sum-safe %v", m.SumSafeColumns)
	}
	var types []string
	for _, c := range m.Columns {
		types = append(types, c.Name+" "+c.Type)
	}
	if got := strings.Join(types, ", "); got != "inspected_month date, supplier_id string, total_cost decimal(38,3), avg_defect_rate decimal(38,4), row_count long" {
		t.Errorf("columns: %s", got)
	}
	if pr.Plan.Tables["suppliers_by_supplier_month"] != nil || len(pr.Plan.TableNames()) != 3 {
		t.Errorf("tables %v: only the fact table gets a mart", pr.Plan.TableNames())
	}
	for _, f := range ValidateGrain(pr.Plan) {
		if f.Status == Fail {
			t.Errorf("the proposed mart fails the grain check: %+v", f)
		}
	}
	// With a question, the mart answers it.
	pr = Propose([]*TableEvidence{suppliers, ins}, ProposeOptions{Questions: []string{"What does inspection cost per supplier and year?"}})
	q := pr.Plan.Tables["inspections_by_supplier_year"]
	if q == nil || q.Dimensions[0].Transform != "year" || !slices.Equal(q.Grain, []string{"inspected_year", "supplier_id"}) ||
		len(q.Measures) != 2 || q.Measures[0].Column != "cost" {
		t.Fatalf("question mart: %v %+v", pr.Plan.TableNames(), q)
	}
}

func TestSnakeName(t *testing.T) {
	for in, want := range map[string]string{
		"InspectionID":    "inspection_id",
		"Order Date":      "order_date",
		"customerName":    "customer_name",
		"HTTPServer":      "http_server",
		"Métrologie":      "metrologie",
		"Straße":          "strasse",
		"2026 sales":      "t_2026_sales",
		"협력사코드":           "hyeopryeoksakodeu",
		"CJ대한통운":          "cj_daehantongun",
		"  __x__  ":       "x",
		"注文":              "",
		"shipments2026Q1": "shipments2026_q1",
	} {
		if got := SnakeName(in, "t"); got != want {
			t.Errorf("SnakeName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDiscoverGroupsFiles(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"inspections_2026-01.csv", "inspections_2026-02.csv", "suppliers.csv", "budget_2026.csv",
		"part_1.csv", "sales_001.csv", "orders_2026-01.csv", "orders_2026-02.csv", "orders_archive.csv", "notes.txt", ".hidden.csv", "sub/a.ndjson"} {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("id\n1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cands, fs, err := discover(context.Background(), files.New(dir), "src")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cands {
		got = append(got, c.Name+": "+strings.Join(c.Files, " "))
	}
	want := []string{
		"budget: budget_*.csv",                          // one file with a year: a periodic export
		"inspections: inspections_*.csv",                // two months
		"orders: orders_2026-01.csv orders_2026-02.csv", // orders_*.csv would also take orders_archive.csv
		"orders_archive: orders_archive.csv",
		"part_1: part_1.csv", // a lone bare number is part of the name
		"sales: sales_*.csv", // a zero-padded sequence: the first of a series
		"a: sub/a.ndjson",
		"suppliers: suppliers.csv",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("candidates:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// notes.txt is of no data format; .hidden.csv is hidden: both named.
	if len(fs) != 2 || fs[0].Name != "source src: hidden files left out" || !strings.Contains(fs[0].Detail, "1 hidden file(s)") || !strings.Contains(fs[0].Detail, ".hidden.csv") ||
		!strings.Contains(fs[1].Detail, "notes.txt") {
		t.Errorf("findings %+v", fs)
	}
}

func TestProposeMarksSensitiveColumns(t *testing.T) {
	ev := evTable("customers", 2, col("customer_id", "string", "C1", "C2"), col("Contact E-Mail", "string", "a@x.io", "b@x.io"), col("city", "string", "Seoul", "Lyon"))
	pr := Propose([]*TableEvidence{ev}, ProposeOptions{Sensitive: []string{"*_e_mail", "CITY"}})
	var got []string
	for _, c := range pr.Plan.Tables["customers"].Columns {
		if c.Sensitive {
			got = append(got, c.Name)
		}
	}
	if !slices.Equal(got, []string{"contact_e_mail", "city"}) {
		t.Errorf("sensitive columns %v", got)
	}
}
