package gates

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lima-lake/lima/engine/plan"
)

// ValidateGrain checks, for every mart Lima builds, that its measures are
// aggregated at its grain without counting anything twice, and that the
// columns it calls SUM-safe are:
//
//   - A mart groups the rows of its first table (the fact), joined many to
//     one to the others. A sum or count of a joined table's column — a
//     coarser grain, such as suppliers.rating or an annual budget joined
//     onto inspection rows — adds each value once per fact row joined to
//     it: an overcount, unless the grain determines the fact's key (one
//     fact row per group) or the measure is pre_aggregated (once per row
//     of its own table in each group). It fails, with the fixes: aggregate
//     at the coarser grain first, use max or avg, or move the measure to a
//     mart at that grain.
//   - A join must reach the key of the joined table, or it multiplies the
//     fact rows and every measure with them.
//   - SUM-safe columns must be sums or counts that are not overcounted; an
//     average, minimum or maximum never is, nor a pre-aggregated value of a
//     table whose rows spread over several groups.
//
// Marts without from (built outside Lima) are skipped.
func ValidateGrain(p *plan.Plan) []Finding {
	var out []Finding
	for _, name := range p.TableNames() {
		t := p.Tables[name]
		if t == nil || !t.IsMart() {
			continue
		}
		if !t.Built() {
			out = append(out, Finding{Name: "mart " + name + ": grain", Status: Skip,
				Detail: "built outside Lima (no from): its measures cannot be checked against its grain"})
			continue
		}
		out = append(out, grainOf(p, name, t)...)
	}
	return out
}

func grainOf(p *plan.Plan, name string, t *plan.Table) []Finding {
	var out []Finding
	fail := func(what, detail, fix string) {
		out = append(out, Finding{Name: "mart " + name + ": " + what, Status: Fail, Detail: detail, Fix: fix})
	}
	fact := t.From[0]
	ft := p.Tables[fact]
	if ft == nil {
		fail("from", fmt.Sprintf("no table %s", fact), "build the mart from a table of the plan")
		return out
	}
	keyOf := func(table string) []string {
		if tt := p.Tables[table]; tt != nil {
			return tt.Load.Keys
		}
		return nil
	}
	// dimsOf: the untransformed dimension columns of a table.
	dimsOf := func(table string) []string {
		var cols []string
		for _, d := range t.Dimensions {
			if r, err := t.Ref(d.Column); err == nil && r.Table == table && d.Transform == "" {
				cols = append(cols, r.Column)
			}
		}
		return cols
	}
	determines := func(table string) bool {
		k := keyOf(table)
		if len(k) == 0 {
			return false
		}
		dims := dimsOf(table)
		for _, c := range k {
			if !slices.Contains(dims, c) {
				return false
			}
		}
		return true
	}
	grain := "(" + strings.Join(t.Grain, ", ") + ")"
	factGrain := determines(fact)
	factKey := "no declared key"
	if k := keyOf(fact); len(k) > 0 {
		factKey = "key " + strings.Join(k, ", ")
	}
	for _, j := range t.Joins {
		r, err := t.Ref(j.References)
		if err != nil {
			continue // plan validation reports it
		}
		if k := keyOf(r.Table); !slices.Equal(k, []string{r.Column}) {
			have := "it declares no key"
			if len(k) > 0 {
				have = "its key is " + strings.Join(k, ", ")
			}
			fail("join "+r.Table, fmt.Sprintf("%s is joined on %s, which is not the key of %s (%s): one row of %s may match several, and every measure is multiplied with them", r.Table, r, r.Table, have, fact),
				fmt.Sprintf("join on the key of %s (declare load.keys: [%s] if it is unique), or aggregate %s at that column first", r.Table, r.Column, r.Table))
		}
	}
	measures := map[string]plan.Measure{}
	overcounted := map[string]bool{}
	for _, m := range t.Measures {
		measures[m.Name] = m
		if m.Column == "" {
			continue
		}
		r, err := t.Ref(m.Column)
		if err != nil || r.Table == fact {
			continue
		}
		additive := m.Agg == plan.AggSum || m.Agg == plan.AggCount
		if !additive || m.PreAggregated || factGrain {
			continue
		}
		overcounted[m.Name] = true
		coarse := "one per row of " + r.Table
		if k := keyOf(r.Table); len(k) > 0 {
			coarse += " (key " + strings.Join(k, ", ") + ")"
		}
		fail("measure "+m.Name,
			fmt.Sprintf("%s(%s) takes a value of a coarser grain — %s — and adds it once per row of %s joined to it; the grain %s does not determine %s's %s, so a group with n rows of %s counts it n times",
				m.Agg, r, coarse, fact, grain, fact, factKey, fact),
			fmt.Sprintf("aggregate it at the grain of %s first (pre_aggregated: true adds it once per %s row in each group), or use max or avg, or move it to a mart at the grain of %s (from: [%s])",
				r.Table, r.Table, r.Table, r.Table))
	}
	for _, c := range t.SumSafeColumns {
		m, ok := measures[c]
		switch {
		case !ok:
			if len(t.Measures) > 0 {
				fail("sum_safe_columns", fmt.Sprintf("%s is not a measure of the mart: a dimension is never summed", c), "remove it from sum_safe_columns")
			}
		case m.Agg == plan.AggAvg || m.Agg == plan.AggMin || m.Agg == plan.AggMax:
			fail("sum_safe_columns", fmt.Sprintf("%s is %s(%s): adding %ss of several rows gives no meaningful total", c, m.Agg, m.Column, aggNoun(m.Agg)),
				"remove it from sum_safe_columns; to total it, add a sum measure")
		case overcounted[c]:
			fail("sum_safe_columns", fmt.Sprintf("%s is overcounted at this grain (see its measure finding), so no sum of it is safe", c), "fix the measure first")
		case m.PreAggregated:
			r, _ := t.Ref(m.Column)
			all := true
			for _, d := range t.Dimensions {
				if dr, err := t.Ref(d.Column); err != nil || dr.Table != r.Table {
					all = false
				}
			}
			if !all {
				fail("sum_safe_columns", fmt.Sprintf("%s adds each %s row once per group, but one %s row can fall in several groups of %s: summing %s across them counts it again",
					c, r.Table, r.Table, grain, c), "remove it from sum_safe_columns")
			}
		}
	}
	if len(out) == 0 {
		var safe []string
		safe = append(safe, t.SumSafeColumns...)
		detail := fmt.Sprintf("grain %s over the rows of %s (%s)", grain, fact, factKey)
		if len(safe) > 0 {
			detail += "; SUM-safe across the grain: " + strings.Join(safe, ", ")
		}
		out = append(out, Finding{Name: "mart " + name + ": grain", Status: Pass, Detail: detail})
	}
	return out
}

func aggNoun(agg string) string {
	switch agg {
	case plan.AggAvg:
		return "average"
	case plan.AggMin:
		return "minimum"
	}
	return "maximum"
}
