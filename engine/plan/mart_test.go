package plan

import (
	"slices"
	"testing"
)

// martFixture: the fixture plus a mart Lima builds from inspections and
// sites (both declared in testdata/valid.yaml).
func martFixture(t *testing.T) *Plan {
	t.Helper()
	p := loadFixture(t)
	p.Tables["monthly"] = &Table{Type: TableMart, From: []string{"inspections", "sites"},
		Joins:      []JoinKey{{Column: "site_code", References: "sites.site_code"}},
		Dimensions: []Dimension{{Name: "month", Column: "inspected_at", Transform: "month"}, {Name: "site_code", Column: "site_code"}},
		Grain:      []string{"month", "site_code"},
		Measures:   []Measure{{Name: "total_score", Agg: "sum", Column: "score"}, {Name: "n", Agg: "count"}},
		Columns: []Column{{Name: "month", Type: "date"}, {Name: "site_code", Type: "string"},
			{Name: "total_score", Type: "decimal(38,2)"}, {Name: "n", Type: "long"}},
		SumSafeColumns: []string{"total_score", "n"}}
	return p
}

func TestValidateMartDefinition(t *testing.T) {
	if err := martFixture(t).Validate(); err != nil {
		t.Fatalf("the mart fixture should be valid:\n%v", err)
	}
	tests := []struct {
		name string
		mut  func(m *Table, p *Plan)
		want []string
	}{
		{"unknown from table", func(m *Table, p *Plan) { m.From[1] = "site" },
			[]string{`tables.monthly.from[1]: no table "site" in tables; did you mean "sites"?`,
				`tables.monthly.joins: site is in from but not joined; add {column: <column of inspections>, references: site.<its key>}`,
				`tables.monthly.joins[0].references: "sites.site_code": table sites is not in from (inspections, site)`}},
		{"a mart built from a mart", func(m *Table, p *Plan) { m.From = []string{"site_scores"}; m.Joins = nil },
			[]string{`tables.monthly.dimensions[0].column: no column "inspected_at" in table site_scores; columns: site_code, month, total_score`,
				"tables.monthly.from[0]: site_scores is a mart; Lima builds marts from base tables",
				`tables.monthly.measures[0].column: no column "score" in table site_scores; columns: site_code, month, total_score`}},
		{"a from table not joined", func(m *Table, p *Plan) { m.Joins = nil },
			[]string{"tables.monthly.joins: sites is in from but not joined; add {column: <column of inspections>, references: sites.<its key>}"}},
		{"bad transform and a month of text", func(m *Table, p *Plan) {
			m.Dimensions[0].Transform = "week"
			m.Dimensions[1].Transform = "month"
		}, []string{`tables.monthly.dimensions[0].transform: "week" is not a transform; use year, month or day, or leave it empty for the value itself`,
			`tables.monthly.dimensions[1].column: inspections.site_code is string; month needs a date, timestamp or timestamptz column`}},
		{"grain is not the dimensions", func(m *Table, p *Plan) { m.Grain = []string{"month"} },
			[]string{"tables.monthly.grain: the grain of a mart Lima builds is its dimensions (month, site_code)"}},
		{"unknown aggregate, sum of text, missing column", func(m *Table, p *Plan) {
			m.Measures = append(m.Measures, Measure{Name: "x", Agg: "summ", Column: "score"}, Measure{Name: "y", Agg: "sum", Column: "site_code"}, Measure{Name: "z", Agg: "max"})
			m.Columns = append(m.Columns, Column{Name: "x", Type: "long"}, Column{Name: "y", Type: "long"}, Column{Name: "z", Type: "long"})
		}, []string{`tables.monthly.measures[2].agg: "summ" is not an aggregate; did you mean "sum"? use sum, count, min, max or avg`,
			`tables.monthly.measures[3].column: inspections.site_code is string; sum needs a numeric column (int, long, decimal or double)`,
			`tables.monthly.measures[4].column: required for max: the column to aggregate`}},
		{"a column that is neither", func(m *Table, p *Plan) { m.Columns = append(m.Columns, Column{Name: "extra", Type: "long"}) },
			[]string{`tables.monthly.columns[4].name: "extra" is neither a dimension nor a measure of the mart`}},
		{"a measure not among the columns", func(m *Table, p *Plan) { m.Columns = m.Columns[:3] },
			[]string{`tables.monthly.measures[1].name: "n" is not one of the mart's columns; declare it under columns`,
				`tables.monthly.sum_safe_columns[1]: no column "n" in this table; columns: month, site_code, total_score`}},
		{"pre-aggregated fact column", func(m *Table, p *Plan) { m.Measures[0].PreAggregated = true },
			[]string{"tables.monthly.measures[0].pre_aggregated: inspections.score is a column of inspections, whose rows the mart groups: it is aggregated once per row already"}},
		{"mart fields on a base table", func(m *Table, p *Plan) { p.Tables["sites"].Measures = []Measure{{Name: "n", Agg: "count"}} },
			[]string{"tables.sites.measures: applies only to a mart (type: mart)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := martFixture(t)
			tt.mut(p.Tables["monthly"], p)
			got := problems(t, p.Validate())
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("got:\n  %s\nwant:\n  %s", join(got), join(want))
			}
		})
	}
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += "\n  "
		}
		out += x
	}
	return out
}

func TestMeasureType(t *testing.T) {
	dec := Type{Kind: Decimal, Precision: 10, Scale: 3}
	for _, tc := range []struct {
		agg  string
		in   Type
		want string
	}{
		{AggCount, Type{}, "long"},
		{AggSum, Type{Kind: Int}, "long"},
		{AggSum, Type{Kind: Long}, "long"},
		{AggSum, dec, "decimal(38,3)"},
		{AggSum, Type{Kind: Double}, "double"},
		{AggAvg, Type{Kind: Long}, "decimal(38,6)"},
		{AggAvg, dec, "decimal(38,3)"},
		{AggMin, Type{Kind: Date}, "date"},
		{AggMax, dec, "decimal(10,3)"},
	} {
		got, err := MeasureType(tc.agg, tc.in)
		if err != nil || got.String() != tc.want {
			t.Errorf("MeasureType(%s, %s) = %s, %v; want %s", tc.agg, tc.in, got, err, tc.want)
		}
	}
	if _, err := MeasureType(AggSum, Type{Kind: String}); err == nil {
		t.Error("sum of string accepted")
	}
}
