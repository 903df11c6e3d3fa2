package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/plan"
)

func TestProposeProfilesAndRecordsFindings(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	if code, _, stderr := runCLI(t, "demo", "--dir", dir); code != exitOK {
		t.Fatalf("demo: %s", stderr)
	}
	pp := filepath.Join(dir, "platform.yaml")
	code, out, _ := runCLI(t, "propose", "--plan", pp)
	if code != exitOK {
		t.Fatalf("propose exit %d", code)
	}
	// The SAP trailing minus of cost: 150.000-, 75.125-, 210.750-,
	// 1,000.000- and 88.000- in the three readable files = 5 values.
	if !strings.Contains(out, "5 values use SAP trailing minus") {
		t.Errorf("propose does not report the trailing minus:\n%s", out)
	}
	if !strings.Contains(out, "inspections_2026-04.csv") {
		t.Errorf("the unreadable file is not reported:\n%s", out)
	}
	before, err := plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	if code, _, _ := runCLI(t, "propose", "--plan", pp, "--write"); code != exitOK {
		t.Fatal("propose --write failed")
	}
	after, err := plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	if len(after.DataQualityIssues) <= len(before.DataQualityIssues) {
		t.Fatalf("no findings recorded: %d → %d", len(before.DataQualityIssues), len(after.DataQualityIssues))
	}
	// Writing twice records nothing twice.
	runCLI(t, "propose", "--plan", pp, "--write")
	again, _ := plan.Load(pp)
	if len(again.DataQualityIssues) != len(after.DataQualityIssues) {
		t.Fatalf("findings duplicated: %d → %d", len(after.DataQualityIssues), len(again.DataQualityIssues))
	}
	// The plan changed: it must be approved again before it runs.
	if code, _, _ := runCLI(t, "run", "--force", "--plan", pp); code != exitPrecondition {
		t.Fatalf("run after propose --write: exit %d, want %d", code, exitPrecondition)
	}
	if _, err := os.Stat(pp); err != nil {
		t.Fatal(err)
	}
}

// A plan with only sources (after lima-tui init) gets the proposed data
// model; a plan with tables keeps them.
func TestProposeWritesTheModelOnlyIntoAPlanWithoutTables(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	if code, _, stderr := runCLI(t, "demo", "--dir", dir); code != exitOK {
		t.Fatalf("demo: %s", stderr)
	}
	pp := filepath.Join(dir, "platform.yaml")
	minimal := "schema_version: 1\nplatform:\n  prefix: erp_quality\nsources:\n  erp:\n    kind: files\n    path: data/erp\n"
	if err := os.WriteFile(pp, []byte(minimal), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI(t, "propose", "--plan", pp)
	if code != exitOK {
		t.Fatalf("propose exit %d", code)
	}
	for _, want := range []string{"gate 3 — proposed data model", "inspections ← erp: inspections_*.csv (4 file(s), 15 rows read)",
		"key inspection_id · join supplier_id → suppliers.supplier_id", // 15 rows: no partition
		"mart inspections_by_supplier_month ← inspections", "! inspections: key: inspection_id: named for the rows of inspections; 14 distinct values in 15 rows"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if b, _ := os.ReadFile(pp); string(b) != minimal {
		t.Fatal("propose without --write changed the plan")
	}
	if code, _, stderr := runCLI(t, "propose", "--plan", pp, "--write"); code != exitOK {
		t.Fatalf("propose --write: %s", stderr)
	}
	p, err := plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	ins, m := p.Tables["inspections"], p.Tables["inspections_by_supplier_month"]
	if ins == nil || m == nil || !m.Built() || len(ins.Columns) != 8 || len(p.DataQualityIssues) == 0 {
		t.Fatalf("tables %v, %d issues", p.TableNames(), len(p.DataQualityIssues))
	}
	// The analyst edits; proposing again keeps the edit and adds nothing twice.
	ins.Description = "edited by the analyst"
	delete(p.Tables, "goods_receipts_by_supplier_month")
	p.DataQualityIssues = slices.DeleteFunc(p.DataQualityIssues, func(q plan.QualityIssue) bool { return q.Table == "goods_receipts_by_supplier_month" })
	if err := p.Write(pp); err != nil {
		t.Fatal(err)
	}
	issues := len(p.DataQualityIssues)
	if code, _, stderr := runCLI(t, "propose", "--plan", pp, "--write"); code != exitOK {
		t.Fatalf("propose --write again: %s", stderr)
	}
	again, err := plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	if again.Tables["inspections"].Description != "edited by the analyst" || again.Tables["goods_receipts_by_supplier_month"] != nil {
		t.Fatal("propose --write replaced what the analyst wrote")
	}
	if len(again.DataQualityIssues) != issues {
		t.Errorf("issues %d → %d", issues, len(again.DataQualityIssues))
	}
}

// With tables, the marts are checked against their grain: the overcount
// of a supplier-level value summed over inspections is reported and
// recorded.
func TestProposeReportsAnOvercountingMart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	if code, _, stderr := runCLI(t, "demo", "--dir", dir); code != exitOK {
		t.Fatalf("demo: %s", stderr)
	}
	pp := filepath.Join(dir, "platform.yaml")
	p, err := plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	p.Tables["supplier_quality"] = &plan.Table{Type: plan.TableMart, From: []string{"inspections", "suppliers"},
		Joins:      []plan.JoinKey{{Column: "supplier_id", References: "suppliers.supplier_id"}},
		Dimensions: []plan.Dimension{{Name: "inspected_month", Column: "inspected_on", Transform: "month"}, {Name: "supplier_id", Column: "supplier_id"}},
		Grain:      []string{"inspected_month", "supplier_id"},
		Measures:   []plan.Measure{{Name: "total_cost", Agg: "sum", Column: "cost"}, {Name: "total_rating", Agg: "sum", Column: "suppliers.rating"}},
		Columns: []plan.Column{{Name: "inspected_month", Type: "date"}, {Name: "supplier_id", Type: "string"},
			{Name: "total_cost", Type: "decimal(38,3)"}, {Name: "total_rating", Type: "decimal(38,1)"}},
		SumSafeColumns: []string{"total_cost", "total_rating"}}
	if err := p.Write(pp); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI(t, "propose", "--plan", pp, "--write")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(out, "✗ mart supplier_quality: measure total_rating: sum(suppliers.rating) takes a value of a coarser grain") {
		t.Errorf("the overcount is not reported:\n%s", out)
	}
	after, err := plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, q := range after.DataQualityIssues {
		found = found || (q.Table == "supplier_quality" && strings.Contains(q.Issue, "sum(suppliers.rating)"))
	}
	if !found {
		t.Error("the overcount is not recorded in data_quality_issues")
	}
}
