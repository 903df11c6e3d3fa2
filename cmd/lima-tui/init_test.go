package main

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/demo"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/gates"
)

type cmdFunc func(ctx context.Context, args []string, stdout, stderr io.Writer) int

func call(t *testing.T, f cmdFunc, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := f(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// noTTY makes init behave as under a scheduler: no terminal to ask on.
func noTTY(t *testing.T) {
	t.Helper()
	old := initInteractive
	initInteractive = func() bool { return false }
	t.Cleanup(func() { initInteractive = old })
}

// erpData copies the demo's ERP files into dir/data/erp and returns that
// folder.
func erpData(t *testing.T, dir string) string {
	t.Helper()
	dst := filepath.Join(dir, "data", "erp")
	src := filepath.Join("..", "..", "engine", "demo", "data", "erp")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestInitDefaultsWritesThePlan(t *testing.T) {
	noTTY(t)
	ws := t.TempDir()
	src := erpData(t, ws)
	code, out, errs := call(t, cmdInit, "--source", src, "--dir", ws, "--defaults")
	if code != exitOK {
		t.Fatalf("init exit %d: %s", code, errs)
	}
	pp := filepath.Join(ws, "platform.yaml")
	fi, err := os.Stat(pp)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("platform.yaml: %v %v", fi.Mode(), err)
	}
	if !strings.Contains(out, "next: lima-tui propose --plan "+pp+" --write\n") {
		t.Errorf("no next command:\n%s", out)
	}
	p, err := plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	// The source is recorded relative to the workspace; the prefix comes
	// from its folder; no tables yet.
	if s := p.Sources["erp"]; s == nil || s.Kind != "files" || s.Path != "data/erp" || len(p.Sources) != 1 {
		t.Errorf("sources %+v", p.Sources)
	}
	if len(p.Tables) != 0 {
		t.Errorf("tables %v", p.TableNames())
	}
	want := gates.Answers{gates.QSources: "data/erp", gates.QPrefix: "erp", gates.QRegion: "local", gates.QEnvironment: "dev",
		gates.QPattern: "iceberg", gates.QConsumer: "unknown", gates.QVolume: "small", gates.QSchedule: "0 2 * * *",
		gates.QTimezone: "UTC", gates.QPartitioning: "auto", gates.QSensitive: "", gates.QSplitRegion: "no"}
	got := gates.AnswersOf(p)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if p.Gates.Scope != nil {
		t.Error("init recorded an approval; only a person approves (lima-tui approve --gate scope)")
	}
	// A second init refuses to overwrite, and leaves the plan as it was.
	before, _ := os.ReadFile(pp)
	code, _, errs = call(t, cmdInit, "--source", src, "--dir", ws, "--defaults", "--prefix", "other")
	if code != exitError || !strings.Contains(errs, "already exists; init never overwrites a plan") {
		t.Errorf("second init: exit %d: %s", code, errs)
	}
	if after, _ := os.ReadFile(pp); !bytes.Equal(before, after) {
		t.Error("the plan changed")
	}
}

func TestInitWithoutTerminalNamesTheFlags(t *testing.T) {
	noTTY(t)
	ws := t.TempDir()
	src := erpData(t, ws)
	code, _, errs := call(t, cmdInit, "--source", src, "--dir", ws, "--region", "eu-central-1")
	if code != exitUsage {
		t.Fatalf("exit %d, want %d", code, exitUsage)
	}
	for _, want := range []string{"Pass --defaults to accept the recommended answers", "--prefix", "--environment", "--consumer", "--split-region", "--sensitive-columns      (none)"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if strings.Contains(errs, "--region ") {
		t.Errorf("--region was answered, yet named:\n%s", errs)
	}
	if _, err := os.Stat(filepath.Join(ws, "platform.yaml")); !os.IsNotExist(err) {
		t.Error("a plan was written")
	}
	// Every question answered by a flag needs no terminal and no --defaults.
	code, _, errs = call(t, cmdInit, "--source", src, "--dir", ws, "--prefix", "acme", "--region", "eu-central-1", "--environment", "prod",
		"--pattern", "iceberg", "--consumer", "bi", "--volume", "medium", "--schedule", "manual", "--partitioning", "date",
		"--sensitive-columns", "email, *_iban", "--split-region", "no", "--owner", "Ops team", "--owner-deadline", "2bd")
	if code != exitOK {
		t.Fatalf("all flags: exit %d: %s", code, errs)
	}
	p, err := plan.Load(filepath.Join(ws, "platform.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Owners) != 1 || p.Owners[0] != (plan.Owner{Name: "Ops team", Default: true, Deadline: "2bd"}) {
		t.Errorf("owners %+v, want the default owner Ops team with 2bd", p.Owners)
	}
	if p.Platform.Prefix != "acme" || p.Schedule.Cron != "" || p.Scope.Volume != "medium" || strings.Join(p.Scope.SensitiveColumns, "|") != "email|*_iban" {
		t.Errorf("plan %+v scope %+v schedule %+v", p.Platform, p.Scope, p.Schedule)
	}
}

func TestInitRefusals(t *testing.T) {
	noTTY(t)
	ws := t.TempDir()
	src := erpData(t, ws)
	// Nothing listens on port 1: the connection is refused at once.
	t.Setenv("ERP_DSN", "postgres://sap:hunter2@127.0.0.1:1/prod?connect_timeout=5")
	t.Setenv("CRM_DSN", "sap:hunter2@tcp(127.0.0.1:1)/crm?timeout=5s")
	t.Setenv("ODD_DSN", "oracle://sap:hunter2@erp.internal/prod")
	t.Setenv("EMPTY_DSN", "")
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr []string
	}{
		{"no source", []string{"--defaults"}, exitUsage, []string{"--source is required"}},
		{"s3 with a dot segment", []string{"--source", "s3://acme-raw/../erp", "--defaults"}, exitUsage,
			[]string{`"s3://acme-raw/../erp" is not an S3 prefix Lima can read`}},
		{"unreachable postgres", []string{"--source", "env:ERP_DSN", "--defaults"}, exitPrecondition,
			[]string{"lima-tui init: --source env:ERP_DSN: connect: ", "fix: check that the server runs"}},
		{"unreachable mysql", []string{"--source", "env:CRM_DSN", "--defaults"}, exitPrecondition,
			[]string{"lima-tui init: --source env:CRM_DSN: connect: ", "fix: check that the server runs"}},
		{"unknown DSN form", []string{"--source", "env:ODD_DSN", "--defaults"}, exitUsage,
			[]string{"lima-tui init: --source env:ODD_DSN: the value of ODD_DSN is not a DSN Lima recognises: its URL scheme is not one Lima reads", "fix: write a postgres:// URL"}},
		{"unset DSN variable", []string{"--source", "env:EMPTY_DSN", "--defaults"}, exitUsage,
			[]string{"lima-tui init: --source env:EMPTY_DSN: the environment variable EMPTY_DSN is not set", "fix: export the database DSN in EMPTY_DSN"}},
		{"DSN on the command line", []string{"--source", "env:postgres://sap:hunter2@h/db", "--defaults"}, exitUsage,
			[]string{"env: takes the name of an environment variable, not a connection string"}},
		{"missing folder", []string{"--source", filepath.Join(ws, "nope"), "--defaults"}, exitUsage, []string{"nope: no such folder"}},
		{"a file", []string{"--source", filepath.Join(src, "suppliers.csv"), "--defaults"}, exitUsage, []string{"suppliers.csv is a file; give the folder holding the files"}},
		{"unknown pattern", []string{"--source", src, "--defaults", "--pattern", "delta"}, exitUsage,
			[]string{`✗ pattern: platform.pattern = "delta": "delta" is not an answer to this question`, "answer iceberg or hive"}},
		{"bad region", []string{"--source", src, "--defaults", "--region", "eu-frankfurt"}, exitUsage,
			[]string{`✗ region: platform.region = "eu-frankfurt": "eu-frankfurt" is not a region`}},
		{"residency flag without a split", []string{"--source", src, "--defaults", "--catalog-region", "us-east-1"}, exitUsage,
			[]string{"--catalog-region does not apply to these answers"}},
		{"split without driver", []string{"--source", src, "--defaults", "--region", "eu-central-1", "--split-region", "yes", "--catalog-region", "us-east-1"}, exitUsage,
			[]string{"✗ residency_driver: scope.residency.driver = (empty): not answered", "✗ acknowledged"}},
		{"zero-egress mandate", []string{"--source", src, "--defaults", "--region", "eu-central-1", "--split-region", "yes", "--catalog-region", "us-east-1",
			"--residency-driver", "mandate", "--zero-egress", "yes"}, exitPrecondition,
			[]string{"✗ residency: a zero-egress mandate forbids anything to leave eu-central-1", "the build stops here", "fix: put the catalog and the query layer in eu-central-1"}},
		{"unexpected argument", []string{"--source", src, "--defaults", "extra"}, exitUsage, []string{`unexpected argument "extra"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(ws, strings.ReplaceAll(tt.name, " ", "_"))
			code, _, errs := call(t, cmdInit, append(tt.args, "--dir", dir)...)
			if code != tt.code {
				t.Errorf("exit %d, want %d: %s", code, tt.code, errs)
			}
			for _, want := range tt.stderr {
				if !strings.Contains(errs, want) {
					t.Errorf("stderr lacks %q:\n%s", want, errs)
				}
			}
			if strings.Contains(errs, "hunter2") {
				t.Error("the DSN's password was printed")
			}
			if _, err := os.Stat(filepath.Join(dir, "platform.yaml")); !os.IsNotExist(err) {
				t.Error("a refused init wrote a plan")
			}
		})
	}
}

func TestInitAsksOnATerminal(t *testing.T) {
	old, oldIn := initInteractive, initStdin
	t.Cleanup(func() { initInteractive, initStdin = old, oldIn })
	initInteractive = func() bool { return true }
	// prefix: default (erp); region: a typo, then eu-central-1; the rest
	// default, except a split region with a preference driver and every
	// crossing acknowledged.
	initStdin = strings.NewReader(strings.Join([]string{
		"", "eu-frankfurt", "eu-central-1", "prod", "", "bi", "", "", "Europe/Berlin", "", "", "email",
		"yes", "", "us-east-1", "preference", "table_metadata", "table_metadata,column_statistics,data_scans,query_results", ""}, "\n"))
	ws := t.TempDir()
	src := erpData(t, ws)
	code, out, errs := call(t, cmdInit, "--source", src, "--dir", ws)
	if code != exitOK {
		t.Fatalf("exit %d: %s\n%s", code, errs, out)
	}
	for _, want := range []string{
		"In which region is the data stored?", `✗ "eu-frankfurt" is not a region`,
		"Crosses the region boundary:\n    table_metadata: table metadata (table and column names",
		"✗ not acknowledged: column_statistics, data_scans, query_results",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the dialogue lacks %q:\n%s", want, out)
		}
	}
	p, err := plan.Load(filepath.Join(ws, "platform.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r := p.Scope.Residency
	if p.Platform.Region != "eu-central-1" || p.Schedule.Timezone != "Europe/Berlin" || r == nil || r.QueryRegion != "us-east-1" || r.CatalogRegion != "" || len(r.Acknowledged) != 4 {
		t.Fatalf("platform %+v residency %+v", p.Platform, r)
	}
	if failed := gates.FailedFindings(gates.Scope(p)); len(failed) > 0 {
		t.Errorf("gate 1: %+v", failed)
	}
	// Input that ends before every question is answered writes nothing.
	initStdin = strings.NewReader("\n\n")
	ws2 := t.TempDir()
	if code, _, errs := call(t, cmdInit, "--source", src, "--dir", ws2); code != exitUsage || !strings.Contains(errs, "no answer (input ended)") {
		t.Errorf("short input: exit %d: %s", code, errs)
	}
}

// approve --gate scope asks gate 1: an incomplete scope is refused with
// the findings and nothing is recorded.
func TestApproveScopeIsDecidedByGate1(t *testing.T) {
	noTTY(t)
	ws := t.TempDir()
	src := erpData(t, ws)
	if code, _, errs := call(t, cmdInit, "--source", src, "--dir", ws, "--defaults", "--region", "eu-central-1"); code != exitOK {
		t.Fatal(errs)
	}
	pp := filepath.Join(ws, "platform.yaml")
	// Split the region by hand without saying why or acknowledging anything.
	b, _ := os.ReadFile(pp)
	edited := strings.Replace(string(b), "  partitioning: auto\n", "  partitioning: auto\n  residency:\n    split_region: true\n    catalog_region: us-east-1\n", 1)
	if err := os.WriteFile(pp, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(t, "approve", "--plan", pp, "--gate", "scope", "--by", "Consultant C")
	if code != exitPrecondition {
		t.Fatalf("approve incomplete scope: exit %d: %s", code, errs)
	}
	for _, want := range []string{"gate 1 (scope & residency) does not pass; nothing was recorded", "✗ residency_driver", "fix: answer mandate", "✗ acknowledged", "✗ residency"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if after, _ := os.ReadFile(pp); string(after) != edited {
		t.Error("a refused approval changed the plan")
	}
	edited = strings.Replace(edited, "    catalog_region: us-east-1\n", "    catalog_region: us-east-1\n    driver: preference\n    acknowledged: [table_metadata]\n", 1)
	os.WriteFile(pp, []byte(edited), 0o600)
	if code, out, errs := runCLI(t, "approve", "--plan", pp, "--gate", "scope", "--by", "Consultant C"); code != exitOK || !strings.Contains(out, "approved scope by Consultant C") {
		t.Fatalf("approve complete scope: exit %d: %s %s", code, out, errs)
	}
	p, _ := plan.Load(pp)
	if a := p.Gates.Scope; a == nil || a.ApprovedBy != "Consultant C" || a.ApprovedAt == "" {
		t.Fatalf("approval %+v", a)
	}
}

// The path a new user takes: init --defaults, propose --write, approve
// both gates, run.
func TestInitProposeApproveRun(t *testing.T) {
	noTTY(t)
	ws := t.TempDir()
	src := erpData(t, ws)
	if code, _, errs := call(t, cmdInit, "--source", src, "--dir", ws, "--defaults"); code != exitOK {
		t.Fatal(errs)
	}
	pp := filepath.Join(ws, "platform.yaml")
	if code, _, errs := runCLI(t, "propose", "--plan", pp, "--write"); code != exitOK {
		t.Fatalf("propose --write: exit %d: %s", code, errs)
	}
	p, err := plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Tables) == 0 {
		t.Fatal("propose --write created no tables from the files")
	}
	approveAndRun(t, pp)
}

// init's plan, with the demo's tables added by hand (what gate 3 will
// propose), passes gate 1, gate 2 and runs.
func TestInitPlanWithTablesApprovesChecksAndRuns(t *testing.T) {
	noTTY(t)
	ws := t.TempDir()
	src := erpData(t, ws)
	if code, _, errs := call(t, cmdInit, "--source", src, "--dir", ws, "--defaults"); code != exitOK {
		t.Fatal(errs)
	}
	pp := filepath.Join(ws, "platform.yaml")
	p, err := plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	d, err := demo.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if d.Sources["erp"] == nil || p.Sources["erp"] == nil {
		t.Fatalf("test setup: the demo's tables read source erp; init named %v", p.SourceNames())
	}
	p.Tables, p.Owners = d.Tables, d.Owners
	if err := p.Write(pp); err != nil {
		t.Fatal(err)
	}
	approveAndRun(t, pp)
}

func approveAndRun(t *testing.T, pp string) {
	t.Helper()
	for _, g := range []string{"scope", "data-model"} {
		if code, out, errs := runCLI(t, "approve", "--plan", pp, "--gate", g, "--by", "Analyst A"); code != exitOK {
			t.Fatalf("approve %s: exit %d: %s %s", g, code, out, errs)
		}
	}
	if code, out, errs := call(t, cmdCheck, "--plan", pp); code != exitOK {
		t.Fatalf("check: exit %d:\n%s%s", code, out, errs)
	}
	code, out, errs := runCLI(t, "run", "--force", "--plan", pp)
	if code != exitOK {
		t.Fatalf("run: exit %d:\n%s\n%s", code, out, errs)
	}
	if !strings.HasSuffix(strings.TrimSpace(out), "report.json") || !strings.Contains(errs, "✓ ok") {
		t.Errorf("run output:\n%s\n%s", out, errs)
	}
}
