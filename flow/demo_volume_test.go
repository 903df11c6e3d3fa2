package flow_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/lima-lake/lima/engine/demo"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
)

// TestDemoVolumeLandsTheGeneratorsTruth generates `demo --rows` inspection
// rows and checks the load against what the generator recorded while
// writing them (accepted rows, held rows by rule, control sums) on top of
// the sample's hand-counted figures (TestDemoBalancesWithHandCountedTotals):
// the volume file must neither lose nor invent a row, and its deliberately
// bad rows must be held back under the rule that catches them.
func TestDemoVolumeLandsTheGeneratorsTruth(t *testing.T) {
	const n = 30_000
	base, bp := newDemo(t)
	sample := runOnce(t, base, bp, flow.RunOptions{Tables: []string{"inspections"}})

	ws, p := newDemo(t)
	truth, err := demo.WriteVolume(ws.Dir, n)
	if err != nil {
		t.Fatal(err)
	}
	if truth.Accepted+truth.Held["type"]+truth.Held["allowed"]+truth.Held["expression"] != n || len(truth.Held) != 3 {
		t.Fatalf("generator truth does not add up: %+v", truth)
	}
	out := runOnce(t, ws, p, flow.RunOptions{Tables: []string{"inspections"}})
	tr := tableReport(t, out.Report, "inspections")
	// The sample: 19 read, 12 loaded, 4 held, 3 headers skipped; the
	// volume file adds its header and n rows.
	held := int64(0)
	for _, v := range truth.Held {
		held += v
	}
	if tr.RowsRead != 19+1+n || tr.RowsLoaded != 12+truth.Accepted || tr.RowsQuarantined != 4+held || tr.RowsSkipped != 4 {
		t.Errorf("read/loaded/held/skipped = %d/%d/%d/%d, want %d/%d/%d/%d", tr.RowsRead, tr.RowsLoaded, tr.RowsQuarantined, tr.RowsSkipped,
			19+1+n, 12+truth.Accepted, 4+held, 4)
	}
	for rule, v := range truth.Held {
		if got := out.Report.Exceptions.ByRule[rule] - sample.Report.Exceptions.ByRule[rule]; got != v {
			t.Errorf("rule %s: the volume file added %d exceptions, the generator planted %d", rule, got, v)
		}
	}
	milli := 6_682_500 + truth.CostMilli
	sign := ""
	if milli < 0 {
		sign, milli = "-", -milli
	}
	sums := map[string]string{
		"lot_qty":    strconv.FormatInt(8770+truth.LotQty, 10),
		"defect_qty": strconv.FormatInt(30+truth.DefectQty, 10),
		"cost":       fmt.Sprintf("%s%d.%03d", sign, milli/1000, milli%1000),
	}
	for col, want := range sums {
		if ct := tr.ControlTotals[col]; ct.Source != want || ct.Target != want {
			t.Errorf("sum(%s) source %q lake %q, want %q", col, ct.Source, ct.Target, want)
		}
	}
	if tr.Reconciliation != gates.Pass {
		t.Errorf("gate 4 %s: %+v", tr.Reconciliation, tr.Checks)
	}
	_, tbl := loadIceberg(t, ws, p, "inspections")
	if got := countRows(t, tbl); got != 12+truth.Accepted {
		t.Errorf("the lake holds %d rows, want %d", got, 12+truth.Accepted)
	}
	// The same n gives the same bytes: a rerun finds nothing new.
	if _, err := demo.WriteVolume(ws.Dir, n); err != nil {
		t.Fatal(err)
	}
	again := runOnce(t, ws, p, flow.RunOptions{Tables: []string{"inspections"}})
	if tr := tableReport(t, again.Report, "inspections"); tr.RowsLoaded != 0 {
		t.Errorf("rerun over the regenerated volume file loaded %d rows, want 0 (same bytes)", tr.RowsLoaded)
	}
}
