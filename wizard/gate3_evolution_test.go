package wizard

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
)

// Approving in the wizard compares the model with the tables already in
// the lake, as `lima-tui approve` does: narrowing a decimal of an incrementally loaded table is
// refused at approval, with the way to rewrite the table, and nothing is
// recorded in platform.yaml.
func TestGate3ApprovalRefusesAChangeTheLakeCannotFollow(t *testing.T) {
	h, pp := demoHarness(t, Deps{Evolution: DefaultDeps().Evolution})
	p, err := plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	// inspections loaded incrementally: its rows outlive a run, so a
	// narrowed column cannot be rewritten by the next run.
	p.Tables["inspections"].Load.Mode = plan.ModeIncremental
	p.Gates.DataModel.PlanHash = p.Hash()
	if err := p.Write(pp); err != nil {
		t.Fatal(err)
	}
	out, err := flow.Run(context.Background(), flow.RunOptions{Workspace: flow.Workspace{Dir: filepath.Dir(pp)}, Plan: p, Tables: []string{"inspections"}, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Report.Tables) != 1 || out.Report.Tables[0].RowsLoaded == 0 {
		t.Fatalf("test setup: inspections not loaded: %+v", out.Report.Tables)
	}
	h.contains("all questions answered")
	h.key("enter")
	h.contains("every check passes")
	h.key("enter")
	h.contains("Gate 3 · data model", "Base tables (6)")
	before, err := plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	g := h.m.gate3
	cols := g.work.Tables["inspections"].Columns
	found := false
	for i := range cols {
		if cols[i].Name == "cost" {
			cols[i].Type, found = "decimal(10,3)", true
		}
	}
	if !found {
		t.Fatal("test setup: no inspections.cost")
	}
	h.key("enter")
	h.contains("not saved: the lake's inspections cannot follow this model", "--rewrite")
	var fixed bool
	for _, f := range h.m.gate3.findings {
		fixed = fixed || (f.Status == "fail" && strings.Contains(f.Detail, "cost") && strings.Contains(f.Fix, "--rewrite inspections"))
	}
	if !fixed {
		t.Errorf("the refusal is not among the findings with its fix: %+v", h.m.gate3.findings)
	}
	after, err := plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	if after.Hash() != before.Hash() || after.Gates.DataModel.PlanHash != before.Gates.DataModel.PlanHash {
		t.Fatal("a refused approval changed platform.yaml")
	}
	if strings.Contains(h.screen(), "Run · load, reconcile, report") {
		t.Fatal("the wizard moved on past a refused approval")
	}
}
