package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/plan"
)

// sharedLakeWorkspace writes an approved one-table plan in a new folder whose
// lake is the warehouse lake, and returns the plan's path.
func sharedLakeWorkspace(t *testing.T, lake, csv string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "in", "a.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Parse([]byte(`schema_version: 1
platform: {prefix: shared}
storage: {warehouse: '`+lake+`'}
sources:
  in: {kind: files, path: in}
tables:
  orders:
    source: {name: in, files: ["*.csv"]}
    columns:
      - {name: id, type: long, required: true}
      - {name: amount, type: long}
    load: {keys: [id]}
`), "platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p.Gates.DataModel = &plan.Approval{ApprovedBy: "test", ApprovedAt: "2026-12-01T00:00:00Z", PlanHash: p.Hash()}
	path := filepath.Join(dir, "platform.yaml")
	if err := p.Write(path); err != nil {
		t.Fatal(err)
	}
	return path
}

func mainCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestAdoptCommand: the second workspace on a lake is refused with exit 4
// by run, check and teardown, each naming the owner and lima-tui adopt;
// adopt shows the owner, refuses a mistyped prefix and then moves the
// ownership, after which the first workspace is refused.
func TestAdoptCommand(t *testing.T) {
	lake := filepath.Join(t.TempDir(), "lake")
	plan1 := sharedLakeWorkspace(t, lake, "id,amount\n1,10\n")
	plan2 := sharedLakeWorkspace(t, lake, "id,amount\n2,20\n")
	dir1, dir2 := filepath.Dir(plan1), filepath.Dir(plan2)
	if code, _, errs := mainCLI("run", "--plan", plan1, "--force"); code != exitOK {
		t.Fatalf("first run: exit %d: %s", code, errs)
	}
	for _, c := range []struct {
		name string
		args []string
		out  string
	}{
		{"run", []string{"run", "--plan", plan2, "--force"}, ""},
		{"check", []string{"check", "--plan", plan2}, "lake ownership"},
		{"teardown", []string{"teardown", "--plan", plan2, "--confirm", "shared"}, ""},
	} {
		code, out, errs := mainCLI(c.args...)
		if code != exitPrecondition || !strings.Contains(out+errs, "owned by the workspace "+dir1) || !strings.Contains(out+errs, "lima-tui adopt --plan") || !strings.Contains(out, c.out) {
			t.Fatalf("%s from the second workspace: exit %d\n%s\n%s", c.name, code, out, errs)
		}
	}
	if code, out, errs := mainCLI("adopt", "--plan", plan2); code != exitUsage || !strings.Contains(out, "owned by the workspace "+dir1) || !strings.Contains(errs, "Nothing was changed") || !strings.Contains(errs, "--confirm shared") {
		t.Fatalf("adopt without --confirm: exit %d\n%s\n%s", code, out, errs)
	}
	if code, _, errs := mainCLI("adopt", "--plan", plan2, "--confirm", "share"); code != exitUsage || !strings.Contains(errs, "not typed exactly") {
		t.Fatalf("adopt with a mistyped prefix: exit %d\n%s", code, errs)
	}
	if code, out, errs := mainCLI("run", "--plan", plan2, "--force"); code != exitPrecondition {
		t.Fatalf("run after the mistyped adopt: exit %d\n%s\n%s", code, out, errs)
	}
	if code, out, errs := mainCLI("adopt", "--plan", plan2, "--confirm", "shared"); code != exitOK || !strings.Contains(out, "is now owned by this workspace") || !strings.Contains(out, dir2) {
		t.Fatalf("adopt: exit %d\n%s\n%s", code, out, errs)
	}
	if code, out, errs := mainCLI("run", "--plan", plan1, "--force"); code != exitPrecondition || !strings.Contains(errs, "owned by the workspace "+dir2) {
		t.Fatalf("the former owner's run: exit %d\n%s\n%s", code, out, errs)
	}
	if code, out, errs := mainCLI("check", "--plan", plan2); code != exitOK || !strings.Contains(out, "owned by this workspace") {
		t.Fatalf("check of the adopter: exit %d\n%s\n%s", code, out, errs)
	}
}
