package gates

import (
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
)

func TestSourceTotals(t *testing.T) {
	dec, _ := plan.ParseType("decimal(18,3)")
	dbl, _ := plan.ParseType("double")
	cols, types := []string{"amount", "rate"}, []plan.Type{dec, dbl}
	st := &run.SourceTotals{Unit: "s.t", Rows: 10, RowsRead: 10, RowsHeld: 1,
		Sums: map[string]string{"amount": "100.500", "rate": "2.5"}, HeldSums: map[string]string{"amount": "0.500", "rate": "0.5"}}
	status := func(fs []Finding) map[string]string {
		m := map[string]string{}
		for _, f := range fs {
			m[f.Name] = f.Status
		}
		return m
	}
	// lake 100.000 + held 0.500 = source 100.500: pass.
	got := status(SourceTotals(st, cols, types, map[string]string{"amount": "100.000", "rate": "2"}, true))
	if got["source count"] != Pass || got["source sum(amount)"] != Pass || got["source sum(rate)"] != Pass {
		t.Errorf("balanced: %v", got)
	}
	// A cent missing: fail.
	got = status(SourceTotals(st, cols, types, map[string]string{"amount": "99.990", "rate": "2"}, true))
	if got["source sum(amount)"] != Fail {
		t.Errorf("unbalanced: %v", got)
	}
	// A held-back value that is not a number: warn, not pass or fail.
	st.Unaccounted = []string{"amount"}
	got = status(SourceTotals(st, cols, types, map[string]string{"amount": "99.990", "rate": "2"}, true))
	if got["source sum(amount)"] != Warn {
		t.Errorf("unaccounted: %v", got)
	}
	st.Unaccounted = nil
	// The database summed in floating point (SQLite): warn.
	st.Sums["amount"] = "100.50000000000001"
	fs := SourceTotals(st, cols, types, map[string]string{"amount": "100.000", "rate": "2"}, true)
	if got := status(fs); got["source sum(amount)"] != Warn || !strings.Contains(fs[1].Detail, "floating point") {
		t.Errorf("float sum: %+v", fs)
	}
	// Count mismatch.
	st.RowsRead = 9
	if got := status(SourceTotals(st, cols, types, nil, true)); got["source count"] != Fail {
		t.Errorf("count: %v", got)
	}
}
