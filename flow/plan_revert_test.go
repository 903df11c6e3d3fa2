package flow_test

import (
	"testing"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
)

// TestPlanChangedBackReloadsUnderTheFirstPlan: plan A loads, plan B (a
// column added) reloads, plan A again must reload too — same plan and files
// as the first load, so the same load id; the commit must not take the first
// load's snapshot for its own (it reported "loaded" with the old snapshot id
// while the table kept plan B's column). Found by TestLifecycle (seed 11,
// sequence 9: add-column then drop-column).
func TestPlanChangedBackReloadsUnderTheFirstPlan(t *testing.T) {
	const planA = `schema_version: 1
platform: {prefix: rev}
sources:
  in: {kind: files, path: in}
tables:
  t:
    source: {name: in, files: ["*.csv"]}
    columns:
      - {name: id, type: long, required: true}
      - {name: name, type: string}
    load: {keys: [id]}
`
	planB := planA[:len(planA)-len("    load: {keys: [id]}\n")] + "      - {name: memo, type: string}\n    load: {keys: [id]}\n"
	ws, pa := workspace(t, map[string][]byte{"p.csv": []byte("id,name,memo\n1,a,m1\n2,b,m2\n")}, planA)
	first := tableReport(t, runOnce(t, ws, pa, flow.RunOptions{}).Report, "t")
	pb := reparse(t, planB)
	runOnce(t, ws, pb, flow.RunOptions{})
	pa2 := reparse(t, planA)
	back := tableReport(t, runOnce(t, ws, pa2, flow.RunOptions{}).Report, "t")
	if back.SnapshotID == first.SnapshotID {
		t.Fatalf("plan A again reports the first load's snapshot %d: nothing was committed", back.SnapshotID)
	}
	_, tbl := loadIceberg(t, ws, pa2, "t")
	if cur := tbl.CurrentSnapshot(); cur == nil || cur.SnapshotID != back.SnapshotID {
		t.Fatalf("the report's snapshot %d is not the table's current one", back.SnapshotID)
	}
	var names []string
	for _, f := range tbl.Schema().Fields() {
		names = append(names, f.Name)
	}
	if len(names) != 2 || names[0] != "id" || names[1] != "name" {
		t.Fatalf("columns %v after plan A again, want [id name]", names)
	}
}

func reparse(t *testing.T, yaml string) *plan.Plan {
	t.Helper()
	p, err := plan.Parse([]byte(yaml), "platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	p.Gates.DataModel = &plan.Approval{ApprovedBy: "test", ApprovedAt: "2026-11-30T00:00:00Z", PlanHash: p.Hash()}
	return p
}
