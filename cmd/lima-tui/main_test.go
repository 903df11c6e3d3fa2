package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/flow"
)

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestUsageErrorsExitTwo(t *testing.T) {
	for _, args := range [][]string{{}, {"bogus"}, {"run", "--no-such-flag"}, {"approve", "--gate", "nope", "--by", "x"}, {"run", "extra-arg"}} {
		if code, _, _ := runCLI(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}

func TestDemoJSONThenRerunThenTamperedReconcile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	code, stdout, stderr := runCLI(t, "demo", "--dir", dir, "--headless", "--json")
	if code != exitOK {
		t.Fatalf("demo exit %d: %s", code, stderr)
	}
	var sum struct {
		Status string `json:"status"`
		Report string `json:"report"`
		Tables []struct {
			Name            string `json:"name"`
			RowsRead        int64  `json:"rows_read"`
			RowsLoaded      int64  `json:"rows_loaded"`
			RowsQuarantined int64  `json:"rows_quarantined"`
			RowsSkipped     int64  `json:"rows_skipped"`
		} `json:"tables"`
	}
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("stdout is not one JSON summary: %v\n%s", err, stdout)
	}
	if sum.Status != "ok" || len(sum.Tables) != 6 {
		t.Fatalf("summary %+v", sum)
	}
	// The counts worked out by hand from the sample files (flow_test.go's
	// TestDemo comments): read, loaded, held back, skipped.
	want := map[string][4]int64{"suppliers": {10, 6, 2, 2}, "inspections": {19, 12, 4, 3}, "goods_receipts": {7, 4, 2, 1}}
	for _, tb := range sum.Tables {
		if tb.RowsRead != tb.RowsLoaded+tb.RowsQuarantined+tb.RowsSkipped || tb.RowsRead == 0 {
			t.Errorf("%s does not balance in --json: %+v", tb.Name, tb)
		}
		if w, ok := want[tb.Name]; ok && [4]int64{tb.RowsRead, tb.RowsLoaded, tb.RowsQuarantined, tb.RowsSkipped} != w {
			t.Errorf("%s in --json: %+v, want read/loaded/held/skipped %v", tb.Name, tb, w)
		}
		delete(want, tb.Name)
	}
	if len(want) > 0 {
		t.Errorf("tables missing from --json: %v", want)
	}
	if _, err := os.Stat(sum.Report); err != nil {
		t.Fatalf("report path %q: %v", sum.Report, err)
	}
	if !strings.Contains(stderr, "held back") {
		t.Errorf("stderr lacks the summary: %s", stderr)
	}
	plan := filepath.Join(dir, "platform.yaml")
	// A rerun is "already loaded" and still exits 0.
	code, stdout, _ = runCLI(t, "run", "--force", "--plan", plan)
	if code != exitOK || !strings.HasSuffix(strings.TrimSpace(stdout), "report.json") {
		t.Fatalf("rerun exit %d stdout %q", code, stdout)
	}
	if code, out, _ := runCLI(t, "report", "--plan", plan); code != exitOK || !strings.Contains(out, "already_loaded") {
		t.Fatalf("report exit %d:\n%s", code, out)
	}
	// reconcile proves the lake; after a row is deleted behind Lima's back it exits 3.
	if code, out, _ := runCLI(t, "reconcile", "--plan", plan, "--run", filepath.Base(filepath.Dir(sum.Report))); code != exitOK {
		t.Fatalf("reconcile exit %d:\n%s", code, out)
	}
	ws := flow.Workspace{Dir: dir}
	p, err := flow.LoadPlan(plan)
	if err != nil {
		t.Fatal(err)
	}
	sk, err := flow.OpenSink(context.Background(), ws, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := sk.Catalog().LoadTable(context.Background(), table.Identifier{p.Namespace(), "suppliers"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Delete(context.Background(), iceberg.EqualTo(iceberg.Reference("supplier_id"), "0010010020"), nil); err != nil {
		t.Fatal(err)
	}
	sk.Close()
	code, out, _ := runCLI(t, "reconcile", "--plan", plan, "--run", filepath.Base(filepath.Dir(sum.Report)))
	if code != exitReconcile || !strings.Contains(out, "✗") {
		t.Fatalf("reconcile after tampering: exit %d, want %d:\n%s", code, exitReconcile, out)
	}
}

func TestUnapprovedPlanExitsFourAndWritesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	if code, _, stderr := runCLI(t, "demo", "--dir", dir); code != exitOK {
		t.Fatalf("demo: %s", stderr)
	}
	plan := filepath.Join(dir, "platform.yaml")
	b, err := os.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	// Change a type without approving the change.
	changed := strings.Replace(string(b), "type: int", "type: long", 1)
	if changed == string(b) {
		t.Fatal("test setup: nothing to change")
	}
	if err := os.WriteFile(plan, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadDir(filepath.Join(dir, "reports"))
	code, _, stderr := runCLI(t, "run", "--force", "--plan", plan)
	if code != exitPrecondition || !strings.Contains(stderr, "approve") {
		t.Fatalf("exit %d, want %d: %s", code, exitPrecondition, stderr)
	}
	after, _ := os.ReadDir(filepath.Join(dir, "reports"))
	if len(after) != len(before) {
		t.Fatal("a refused run wrote a report")
	}
	if code, out, _ := runCLI(t, "approve", "--plan", plan, "--gate", "data-model", "--by", "Analyst A"); code != exitOK || !strings.Contains(out, "Analyst A") {
		t.Fatalf("approve: %d %s", code, out)
	}
	// The lake table has defect_qty as int; the approved plan now says
	// long: the run widens the column (Iceberg schema evolution) with the
	// load's commit.
	code, _, stderr = runCLI(t, "run", "--force", "--plan", plan, "--table", "inspections")
	if code != exitOK {
		t.Fatalf("schema change: exit %d: %s", code, stderr)
	}
}

func TestInvalidPlanExitsTwoWithFieldPath(t *testing.T) {
	dir := t.TempDir()
	plan := filepath.Join(dir, "platform.yaml")
	os.WriteFile(plan, []byte("schema_version: 1\nplatform:\n  prefix: demo\n  patern: iceberg\nsources: {}\n"), 0o600)
	code, _, stderr := runCLI(t, "run", "--force", "--plan", plan)
	if code != exitUsage || !strings.Contains(stderr, `did you mean "pattern"`) {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}
