package main

import (
	"os"
	"path/filepath"
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
	if code, _, _ := runCLI(t, "run", "--plan", pp); code != exitPrecondition {
		t.Fatalf("run after propose --write: exit %d, want %d", code, exitPrecondition)
	}
	if _, err := os.Stat(pp); err != nil {
		t.Fatal(err)
	}
}
