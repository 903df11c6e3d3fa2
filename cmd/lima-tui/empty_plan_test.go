package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/plan"
)

// A data model without tables is refused at approval, and `run` on a plan
// without tables (approved by hand) exits non-zero instead of "ok" having
// loaded nothing.
func TestEmptyDataModelIsRefused(t *testing.T) {
	noTTY(t)
	ws := t.TempDir()
	src := erpData(t, ws)
	if code, _, errs := call(t, cmdInit, "--source", src, "--dir", ws, "--defaults"); code != exitOK {
		t.Fatal(errs)
	}
	pp := filepath.Join(ws, "platform.yaml")
	code, _, errs := runCLI(t, "approve", "--plan", pp, "--gate", "data-model", "--by", "Analyst A")
	if code != exitPrecondition || !strings.Contains(errs, "the plan has no tables") {
		t.Fatalf("approve an empty data model: exit %d: %s", code, errs)
	}
	p, err := plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	if p.Gates.DataModel != nil {
		t.Fatal("a refused approval was recorded")
	}
	// Approved by hand, as an edited file would be.
	p.Gates.DataModel = &plan.Approval{ApprovedBy: "Analyst A", ApprovedAt: "2026-01-01T00:00:00Z", PlanHash: p.Hash()}
	if err := p.Write(pp); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runCLI(t, "run", "--plan", pp)
	if code == exitOK || !strings.Contains(errs, "the plan has no tables") {
		t.Fatalf("run of a plan without tables: exit %d: %s", code, errs)
	}
	code, _, errs = runCLI(t, "run", "--watch", "--plan", pp)
	if code != exitPrecondition || !strings.Contains(errs, "the plan has no tables") {
		t.Fatalf("run --watch of a plan without tables: exit %d: %s", code, errs)
	}
}
