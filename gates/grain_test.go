package gates

import (
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/plan"
)

// grainPlan: inspections (key inspection_id) joined to suppliers (key
// supplier_id), and a mart per month and supplier.
func grainPlan(measures []plan.Measure, sumSafe []string, dims ...plan.Dimension) *plan.Plan {
	if len(dims) == 0 {
		dims = []plan.Dimension{{Name: "month", Column: "inspected_on", Transform: "month"}, {Name: "supplier_id", Column: "supplier_id"}}
	}
	var grain []string
	for _, d := range dims {
		grain = append(grain, d.Name)
	}
	return &plan.Plan{Tables: map[string]*plan.Table{
		"suppliers":   {Load: plan.LoadSpec{Keys: []string{"supplier_id"}}},
		"inspections": {Load: plan.LoadSpec{Keys: []string{"inspection_id"}}},
		"quality": {Type: plan.TableMart, From: []string{"inspections", "suppliers"},
			Joins:      []plan.JoinKey{{Column: "supplier_id", References: "suppliers.supplier_id"}},
			Dimensions: dims, Grain: grain, Measures: measures, SumSafeColumns: sumSafe},
	}}
}

func TestValidateGrain(t *testing.T) {
	cost := plan.Measure{Name: "total_cost", Agg: "sum", Column: "cost"}
	rating := plan.Measure{Name: "total_rating", Agg: "sum", Column: "suppliers.rating"}
	cases := []struct {
		name string
		p    *plan.Plan
		// want: finding name → status, and a text its detail or fix holds.
		want map[string][2]string
	}{
		{"sums of the fact are safe", grainPlan([]plan.Measure{cost, {Name: "n", Agg: "count"}}, []string{"total_cost", "n"}),
			map[string][2]string{"mart quality: grain": {Pass, "SUM-safe across the grain: total_cost, n"}}},
		{"the overcount: a supplier-level rating summed over inspection rows", grainPlan([]plan.Measure{cost, rating}, []string{"total_cost"}),
			map[string][2]string{"mart quality: measure total_rating": {Fail,
				"sum(suppliers.rating) takes a value of a coarser grain — one per row of suppliers (key supplier_id) — and adds it once per row of inspections joined to it; the grain (month, supplier_id) does not determine inspections's key inspection_id"}}},
		{"the fix names all three ways out", grainPlan([]plan.Measure{rating}, nil),
			map[string][2]string{"mart quality: measure total_rating": {Fail,
				"aggregate it at the grain of suppliers first (pre_aggregated: true adds it once per suppliers row in each group), or use max or avg, or move it to a mart at the grain of suppliers (from: [suppliers])"}}},
		{"an annual budget counted is overcounted too", grainPlan([]plan.Measure{{Name: "budgets", Agg: "count", Column: "suppliers.annual_budget"}}, nil),
			map[string][2]string{"mart quality: measure budgets": {Fail, "count(suppliers.annual_budget)"}}},
		{"pre-aggregated is accepted", grainPlan([]plan.Measure{{Name: "total_rating", Agg: "sum", Column: "suppliers.rating", PreAggregated: true}}, nil),
			map[string][2]string{"mart quality: grain": {Pass, "grain (month, supplier_id)"}}},
		{"max and avg of the coarser grain are accepted", grainPlan([]plan.Measure{{Name: "best", Agg: "max", Column: "suppliers.rating"}, {Name: "mean", Agg: "avg", Column: "suppliers.rating"}}, nil),
			map[string][2]string{"mart quality: grain": {Pass, ""}}},
		{"a grain that determines the fact's key has one fact row per group",
			grainPlan([]plan.Measure{rating}, nil, plan.Dimension{Name: "inspection_id", Column: "inspection_id"}),
			map[string][2]string{"mart quality: grain": {Pass, ""}}},
		{"a transformed key does not determine it",
			grainPlan([]plan.Measure{rating}, nil, plan.Dimension{Name: "inspection_id", Column: "inspection_id", Transform: "day"}),
			map[string][2]string{"mart quality: measure total_rating": {Fail, ""}}},
		{"an average is never SUM-safe", grainPlan([]plan.Measure{{Name: "mean", Agg: "avg", Column: "cost"}}, []string{"mean"}),
			map[string][2]string{"mart quality: sum_safe_columns": {Fail, "mean is avg(cost): adding averages of several rows gives no meaningful total"}}},
		{"an overcounted measure is not SUM-safe", grainPlan([]plan.Measure{rating}, []string{"total_rating"}),
			map[string][2]string{"mart quality: sum_safe_columns": {Fail, "total_rating is overcounted at this grain"}}},
		{"a pre-aggregated value spread over months is not SUM-safe",
			grainPlan([]plan.Measure{{Name: "total_rating", Agg: "sum", Column: "suppliers.rating", PreAggregated: true}}, []string{"total_rating"}),
			map[string][2]string{"mart quality: sum_safe_columns": {Fail, "one suppliers row can fall in several groups of (month, supplier_id)"}}},
		{"a dimension is not SUM-safe", grainPlan([]plan.Measure{cost}, []string{"supplier_id"}),
			map[string][2]string{"mart quality: sum_safe_columns": {Fail, "supplier_id is not a measure of the mart"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ValidateGrain(tc.p)
			for name, want := range tc.want {
				found := false
				for _, f := range got {
					if f.Name != name {
						continue
					}
					found = true
					if f.Status != want[0] || !strings.Contains(f.Detail+" "+f.Fix, want[1]) {
						t.Errorf("%s: %s: %s (fix: %s); want %s containing %q", name, f.Status, f.Detail, f.Fix, want[0], want[1])
					}
				}
				if !found {
					t.Errorf("no finding %q in %+v", name, got)
				}
			}
		})
	}
}

func TestValidateGrainJoinNotOnKey(t *testing.T) {
	p := grainPlan([]plan.Measure{{Name: "n", Agg: "count"}}, nil)
	p.Tables["quality"].Joins[0].References = "suppliers.country"
	fs := ValidateGrain(p)
	if len(fs) != 1 || fs[0].Status != Fail || fs[0].Name != "mart quality: join suppliers" ||
		!strings.Contains(fs[0].Detail, "suppliers is joined on suppliers.country, which is not the key of suppliers (its key is supplier_id)") {
		t.Fatalf("%+v", fs)
	}
}

func TestValidateGrainSkipsMartsBuiltElsewhere(t *testing.T) {
	p := &plan.Plan{Tables: map[string]*plan.Table{"site_scores": {Type: plan.TableMart, Grain: []string{"site"}, WrittenBy: "sql/x.sql"}}}
	fs := ValidateGrain(p)
	if len(fs) != 1 || fs[0].Status != Skip {
		t.Fatalf("%+v", fs)
	}
}
