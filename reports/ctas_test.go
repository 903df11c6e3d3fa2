package reports

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/plan"
)

var updateCTAS = flag.Bool("update-ctas", false, "rewrite the CTAS golden files in testdata")

// ctasPlan: inspections joined to suppliers; two marts.
func ctasPlan() *plan.Plan {
	return &plan.Plan{SchemaVersion: 1, Platform: plan.Platform{Prefix: "erp_quality"},
		Tables: map[string]*plan.Table{
			"suppliers": {Columns: []plan.Column{{Name: "supplier_id", Type: "string"}, {Name: "country", Type: "string"},
				{Name: "annual_budget", Type: "long"}}, Load: plan.LoadSpec{Keys: []string{"supplier_id"}}},
			"inspections": {Columns: []plan.Column{{Name: "inspection_id", Type: "long"}, {Name: "supplier_id", Type: "string"},
				{Name: "inspected_on", Type: "date"}, {Name: "lot_qty", Type: "long"}, {Name: "cost", Type: "decimal(18,3)"}},
				Load: plan.LoadSpec{Keys: []string{"inspection_id"}}},
			"receipts": {Columns: []plan.Column{{Name: "receipt_id", Type: "long"}, {Name: "received_at", Type: "timestamptz"},
				{Name: "qty", Type: "long"}}},
			"inspections_by_supplier_month": {Type: plan.TableMart, From: []string{"inspections"},
				Dimensions: []plan.Dimension{{Name: "inspected_month", Column: "inspected_on", Transform: "month"}, {Name: "supplier_id", Column: "supplier_id"}},
				Grain:      []string{"inspected_month", "supplier_id"},
				Measures: []plan.Measure{{Name: "total_lot_qty", Agg: "sum", Column: "lot_qty"}, {Name: "total_cost", Agg: "sum", Column: "cost"},
					{Name: "avg_lot_qty", Agg: "avg", Column: "lot_qty"}, {Name: "row_count", Agg: "count"}},
				Columns: []plan.Column{{Name: "inspected_month", Type: "date"}, {Name: "supplier_id", Type: "string"},
					{Name: "total_lot_qty", Type: "long"}, {Name: "total_cost", Type: "decimal(38,3)"}, {Name: "avg_lot_qty", Type: "decimal(38,6)"},
					{Name: "row_count", Type: "long"}}},
			"quality_by_country": {Type: plan.TableMart, From: []string{"inspections", "suppliers"},
				Joins:      []plan.JoinKey{{Column: "supplier_id", References: "suppliers.supplier_id"}},
				Dimensions: []plan.Dimension{{Name: "country", Column: "suppliers.country"}},
				Grain:      []string{"country"},
				Measures: []plan.Measure{{Name: "total_cost", Agg: "sum", Column: "cost"},
					{Name: "budget", Agg: "sum", Column: "suppliers.annual_budget", PreAggregated: true},
					{Name: "suppliers", Agg: "count", Column: "suppliers.supplier_id", PreAggregated: true}},
				Columns: []plan.Column{{Name: "country", Type: "string"}, {Name: "total_cost", Type: "decimal(38,3)"},
					{Name: "budget", Type: "long"}, {Name: "suppliers", Type: "long"}}},
			"receipts_by_day": {Type: plan.TableMart, From: []string{"receipts"},
				Dimensions: []plan.Dimension{{Name: "received_day", Column: "received_at", Transform: "day"}},
				Grain:      []string{"received_day"},
				Measures:   []plan.Measure{{Name: "total_qty", Agg: "sum", Column: "qty"}}},
		}}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *updateCTAS {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./reports -run TestCTAS -update-ctas)", err)
	}
	if got != string(want) {
		t.Errorf("%s changed:\n%s\nwant:\n%s", name, got, want)
	}
}

func TestCTASGolden(t *testing.T) {
	for _, tc := range []struct{ mart, file string }{
		{"inspections_by_supplier_month", "ctas_monthly.golden.sql"},
		{"quality_by_country", "ctas_pre_aggregated.golden.sql"},
		{"receipts_by_day", "ctas_timestamptz.golden.sql"},
	} {
		t.Run(tc.mart, func(t *testing.T) {
			got, err := CTAS(ctasPlan(), tc.mart, CTASOptions{Location: "s3://acme-lake/erp_quality/mart_" + tc.mart + "/"})
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tc.file, got)
		})
	}
}

// A hostile identifier cannot leave its quotes: names are not validated
// here (the plan would refuse them), so CTAS must escape them itself.
func TestCTASHostileIdentifiers(t *testing.T) {
	evil := `x"; DROP TABLE suppliers; --`
	p := &plan.Plan{Platform: plan.Platform{Prefix: "erp_quality"}, Tables: map[string]*plan.Table{
		"facts": {Columns: []plan.Column{{Name: evil, Type: "string"}, {Name: "v", Type: "long"}}},
		`m"; --`: {Type: plan.TableMart, From: []string{"facts"},
			Dimensions: []plan.Dimension{{Name: `dim"`, Column: evil}},
			Grain:      []string{`dim"`},
			Measures:   []plan.Measure{{Name: "n", Agg: "count"}}},
	}}
	got, err := CTAS(p, `m"; --`, CTASOptions{Database: `db"x`, Location: "s3://b/it's/"})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "ctas_hostile.golden.sql", got)
	// Every double quote is either part of an escaped pair inside an
	// identifier or opens or closes one: outside identifiers and literals
	// the text has no ; at all.
	if strings.Contains(outsideQuotes(got), ";") {
		t.Errorf("a statement separator escaped the quotes:\n%s", got)
	}
	if !strings.Contains(got, `"x""; DROP TABLE suppliers; --"`) || !strings.Contains(got, `"mart_m""; --"`) || !strings.Contains(got, `'s3://b/it''s/'`) {
		t.Errorf("identifiers or literals not escaped:\n%s", got)
	}
}

// outsideQuotes returns the SQL text with quoted identifiers and string
// literals removed (a doubled quote stays inside).
func outsideQuotes(s string) string {
	var b strings.Builder
	var in byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case in == 0 && (c == '"' || c == '\''):
			in = c
		case in != 0 && c == in:
			if i+1 < len(s) && s[i+1] == in {
				i++
				continue
			}
			in = 0
		case in == 0:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func TestCTASRefuses(t *testing.T) {
	p := ctasPlan()
	if _, err := CTAS(p, "suppliers", CTASOptions{Location: "s3://b/x/"}); err == nil {
		t.Error("a base table rendered as a mart")
	}
	if _, err := CTAS(p, "receipts_by_day", CTASOptions{}); err == nil {
		t.Error("no location accepted")
	}
}
