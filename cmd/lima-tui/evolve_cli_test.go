package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"
)

// Plan evolution, end to end through the CLI as a user drives it: load,
// change the plan, approve, run; then the table's Iceberg metadata and rows
// are read back with iceberg-go directly (not through Lima's sink) and
// compared with values written down by hand, and the generated README.md /
// ARCHITECTURE.md are compared with the metadata.

// evoHeader is every file's header; the plans declare a subset.
const evoHeader = "id,qty,amount,d,u,note,saengsanbeonho,grade\n"

// evoFirst is the first file: 4 rows in January/February (d) and
// March/April (u).
const evoFirst = evoHeader +
	"1,10,100.50,2026-01-05,2026-03-01,n1,P-1,A\n" +
	"2,20,200.25,2026-01-20,2026-03-02,n2,P-2,B\n" +
	"3,30,300.00,2026-02-03,2026-04-01,n3,P-3,A\n" +
	"4,40,400.75,2026-02-14,2026-04-02,n4,P-4,C\n"

// evoCols are the columns of the first plan, one YAML line each.
var evoCols = []string{
	`{name: id, type: long, required: true}`,
	`{name: qty, type: int}`,
	`{name: amount, type: "decimal(9,2)"}`,
	`{name: d, type: date}`,
	`{name: u, type: date}`,
	`{name: note, type: string}`,
	`{name: saengsanbeonho, type: string}`,
}

func evoPlan(mode string, cols []string, partition string) string {
	var b strings.Builder
	b.WriteString("schema_version: 1\nplatform: {prefix: evo}\nsources: {in: {kind: files, path: in}}\ntables:\n  insp:\n")
	b.WriteString("    source: {name: in, files: [\"insp-*.csv\"]}\n    columns:\n")
	for _, c := range cols {
		b.WriteString("      - " + c + "\n")
	}
	if partition != "" {
		b.WriteString("    partition: [\"" + partition + "\"]\n")
	}
	if mode == "incremental" {
		b.WriteString("    load: {mode: incremental, keys: [id], watermark: id}\n")
	} else {
		b.WriteString("    load: {keys: [id]}\n")
	}
	return b.String()
}

// evoWorkspace writes the first file and plan, approves and loads it.
func evoWorkspace(t *testing.T, mode string) (dir, planPath string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "ws")
	if err := os.MkdirAll(filepath.Join(dir, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	evoFile(t, dir, "insp-1.csv", evoFirst)
	planPath = filepath.Join(dir, "platform.yaml")
	evoChangePlan(t, planPath, evoPlan(mode, evoCols, "month(u)"))
	evoRun(t, planPath, exitOK)
	return dir, planPath
}

func evoFile(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "in", name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// evoChangePlan writes a new plan and approves it through the CLI.
func evoChangePlan(t *testing.T, planPath, yaml string, approveArgs ...string) {
	t.Helper()
	if err := os.WriteFile(planPath, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"approve", "--plan", planPath, "--gate", "data-model", "--by", "Analyst A"}, approveArgs...)
	if code, out, stderr := runCLI(t, args...); code != exitOK {
		t.Fatalf("approve: exit %d: %s%s", code, out, stderr)
	}
}

func evoRun(t *testing.T, planPath string, want int, extra ...string) string {
	t.Helper()
	args := append([]string{"run", "--force", "--plan", planPath}, extra...)
	code, out, stderr := runCLI(t, args...)
	if code != want {
		t.Fatalf("run %v: exit %d, want %d:\n%s%s", extra, code, want, out, stderr)
	}
	return stderr
}

// evoTable loads the table with iceberg-go's SQL catalog on the
// workspace's catalog file, as an outside reader would.
func evoTable(t *testing.T, dir string) *table.Table {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, ".lima", "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	cat, err := sqlcat.NewCatalog("lima", db, sqlcat.SQLite, iceberg.Properties{"warehouse": "file://" + filepath.Join(dir, "lake")})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.LoadTable(context.Background(), table.Identifier{"evo", "insp"})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// evoField is one schema field as the test expects it.
type evoField struct {
	id       int
	name     string
	typ      string
	required bool
}

func evoCheckSchema(t *testing.T, tbl *table.Table, want []evoField) {
	t.Helper()
	var got []evoField
	for _, f := range tbl.Schema().Fields() {
		got = append(got, evoField{f.ID, f.Name, f.Type.String(), f.Required})
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("table schema:\n got %v\nwant %v", got, want)
	}
}

// evoSpec is the default spec as "transform(source id)".
func evoSpec(tbl *table.Table) string {
	spec := tbl.Spec()
	var out []string
	for _, f := range spec.Fields() {
		out = append(out, fmt.Sprintf("%s(%d)", f.Transform, f.SourceID()))
	}
	return strings.Join(out, ", ")
}

// evoRows reads the current snapshot: id → column → text.
func evoRows(t *testing.T, tbl *table.Table) map[int64]map[string]string {
	t.Helper()
	_, it, err := tbl.Scan().ToArrowRecords(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]map[string]string{}
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		ids := rec.Column(rec.Schema().FieldIndices("id")[0]).(*array.Int64)
		for r := 0; r < int(rec.NumRows()); r++ {
			row := map[string]string{}
			for c, f := range rec.Schema().Fields() {
				row[f.Name] = evoCell(rec.Column(c), r)
			}
			if _, dup := out[ids.Value(r)]; dup {
				t.Fatalf("id %d twice in the table", ids.Value(r))
			}
			out[ids.Value(r)] = row
		}
		rec.Release()
	}
	return out
}

func evoCell(a arrow.Array, r int) string {
	if a.IsNull(r) {
		return "null"
	}
	switch v := a.(type) {
	case *array.Int32:
		return fmt.Sprint(v.Value(r))
	case *array.Int64:
		return fmt.Sprint(v.Value(r))
	case *array.Float32:
		return fmt.Sprint(v.Value(r))
	case *array.Float64:
		return fmt.Sprint(v.Value(r))
	case *array.Decimal128:
		return v.Value(r).ToString(v.DataType().(*arrow.Decimal128Type).Scale)
	case *array.Date32:
		return v.Value(r).FormattedString()
	case *array.String:
		return v.Value(r)
	case *array.LargeString:
		return v.Value(r)
	}
	return a.ValueStr(r)
}

// evoCheckRows compares the rows with the expected cells of one column.
func evoCheckRows(t *testing.T, rows map[int64]map[string]string, col string, want map[int64]string) {
	t.Helper()
	if len(rows) != len(want) {
		t.Fatalf("%d rows in the table, want %d", len(rows), len(want))
	}
	for id, w := range want {
		row, ok := rows[id]
		if !ok {
			t.Fatalf("id %d missing", id)
		}
		if got, ok := row[col]; !ok || got != w {
			t.Errorf("id %d: %s = %q (present %v), want %q", id, col, got, ok, w)
		}
	}
}

// evoTypeName spells an Iceberg type as the docs do (the plan's names);
// written here, independently of the code under test.
func evoTypeName(t iceberg.Type) string {
	switch t.String() {
	case "int", "long", "double", "date", "string", "boolean", "timestamp", "timestamptz", "binary":
		return t.String()
	case "float":
		return "float"
	}
	if d, ok := t.(iceberg.DecimalType); ok {
		return fmt.Sprintf("decimal(%d,%d)", d.Precision(), d.Scale())
	}
	return t.String()
}

// evoCheckDocs: README.md and ARCHITECTURE.md describe the table's
// metadata — every column with its type, the partitioning — and no
// column the metadata does not have.
func evoCheckDocs(t *testing.T, dir string, tbl *table.Table, partition string, gone ...string) {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	arch, err := os.ReadFile(filepath.Join(dir, "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range tbl.Schema().Fields() {
		req := ""
		if f.Required {
			req = "yes"
		}
		row := fmt.Sprintf("| %s | %s | %s |", f.Name, evoTypeName(f.Type), req)
		for name, doc := range map[string]string{"README.md": string(readme), "ARCHITECTURE.md": string(arch)} {
			if !strings.Contains(doc, row) {
				t.Errorf("%s has no row %q for the table's column", name, row)
			}
		}
	}
	for _, g := range gone {
		for name, doc := range map[string]string{"README.md": string(readme), "ARCHITECTURE.md": string(arch)} {
			if strings.Contains(doc, "| "+g+" |") {
				t.Errorf("%s still describes column %s, which the table no longer has", name, g)
			}
		}
	}
	if !strings.Contains(string(readme), "- Partitioned by: "+partition+"\n") {
		t.Errorf("README.md does not say the table is partitioned by %s", partition)
	}
	if !strings.Contains(string(arch), "| partitioning of insp | "+partition+" |") {
		t.Errorf("ARCHITECTURE.md does not record the partitioning %s", partition)
	}
}

// the first plan's schema, ids 1..7.
var evoV1 = []evoField{{1, "id", "long", true}, {2, "qty", "int", false}, {3, "amount", "decimal(9, 2)", false},
	{4, "d", "date", false}, {5, "u", "date", false}, {6, "note", "string", false}, {7, "saengsanbeonho", "string", false}}

func replaceCol(cols []string, i int, c string) []string {
	out := append([]string(nil), cols...)
	out[i] = c
	return out
}

func TestEvolveAddColumn(t *testing.T) {
	dir, planPath := evoWorkspace(t, "incremental")
	// grade is added between qty and amount.
	cols := append(append(append([]string(nil), evoCols[:2]...), `{name: grade, type: string}`), evoCols[2:]...)
	evoChangePlan(t, planPath, evoPlan("incremental", cols, "month(u)"))
	evoFile(t, dir, "insp-2.csv", evoHeader+"5,50,500.00,2026-05-06,2026-06-01,n5,P-5,B\n")
	before := evoTable(t, dir)
	evoRun(t, planPath, exitOK)
	tbl := evoTable(t, dir)
	evoCheckOneCommit(t, before, tbl)
	evoCheckSchema(t, tbl, []evoField{{1, "id", "long", true}, {2, "qty", "int", false}, {8, "grade", "string", false},
		{3, "amount", "decimal(9, 2)", false}, {4, "d", "date", false}, {5, "u", "date", false}, {6, "note", "string", false}, {7, "saengsanbeonho", "string", false}})
	rows := evoRows(t, tbl)
	evoCheckRows(t, rows, "grade", map[int64]string{1: "null", 2: "null", 3: "null", 4: "null", 5: "B"})
	evoCheckRows(t, rows, "qty", map[int64]string{1: "10", 2: "20", 3: "30", 4: "40", 5: "50"})
	evoCheckDocs(t, dir, tbl, "month(u)")
}

func TestEvolveDropColumn(t *testing.T) {
	dir, planPath := evoWorkspace(t, "incremental")
	cols := append(append([]string(nil), evoCols[:5]...), evoCols[6])
	evoChangePlan(t, planPath, evoPlan("incremental", cols, "month(u)"))
	evoFile(t, dir, "insp-2.csv", evoHeader+"5,50,500.00,2026-05-06,2026-06-01,n5,P-5,B\n")
	evoRun(t, planPath, exitOK)
	tbl := evoTable(t, dir)
	evoCheckSchema(t, tbl, append(append([]evoField(nil), evoV1[:5]...), evoV1[6]))
	rows := evoRows(t, tbl)
	if _, ok := rows[1]["note"]; ok {
		t.Error("the dropped column is still read")
	}
	evoCheckRows(t, rows, "saengsanbeonho", map[int64]string{1: "P-1", 2: "P-2", 3: "P-3", 4: "P-4", 5: "P-5"})
	evoCheckDocs(t, dir, tbl, "month(u)", "note")
}

// The case: the column keeps its header (source_name) and gets a
// new name; the field id and the values already loaded are kept.
func TestEvolveRenameBySourceName(t *testing.T) {
	dir, planPath := evoWorkspace(t, "incremental")
	evoChangePlan(t, planPath, evoPlan("incremental", replaceCol(evoCols, 6, `{name: production_id, type: string, source_name: saengsanbeonho}`), "month(u)"))
	evoFile(t, dir, "insp-2.csv", evoHeader+"5,50,500.00,2026-05-06,2026-06-01,n5,P-5,B\n")
	evoRun(t, planPath, exitOK)
	tbl := evoTable(t, dir)
	want := append([]evoField(nil), evoV1...)
	want[6].name = "production_id"
	evoCheckSchema(t, tbl, want)
	evoCheckRows(t, evoRows(t, tbl), "production_id", map[int64]string{1: "P-1", 2: "P-2", 3: "P-3", 4: "P-4", 5: "P-5"})
	evoCheckDocs(t, dir, tbl, "month(u)", "saengsanbeonho")
}

// A full refresh of a renamed table (it failed on every run before).
func TestEvolveRenameFullRefresh(t *testing.T) {
	dir, planPath := evoWorkspace(t, "full")
	evoChangePlan(t, planPath, evoPlan("full", replaceCol(evoCols, 6, `{name: production_id, type: string, source_name: saengsanbeonho}`), "month(u)"))
	evoRun(t, planPath, exitOK, "--full-refresh")
	tbl := evoTable(t, dir)
	want := append([]evoField(nil), evoV1...)
	want[6].name = "production_id"
	evoCheckSchema(t, tbl, want)
	evoCheckRows(t, evoRows(t, tbl), "production_id", map[int64]string{1: "P-1", 2: "P-2", 3: "P-3", 4: "P-4"})
	evoCheckDocs(t, dir, tbl, "month(u)", "saengsanbeonho")
}

// An explicit renamed_from: the source's header changed as well.
func TestEvolveRenamedFrom(t *testing.T) {
	dir, planPath := evoWorkspace(t, "incremental")
	evoChangePlan(t, planPath, evoPlan("incremental", replaceCol(evoCols, 5, `{name: remark, type: string, renamed_from: note}`), "month(u)"))
	evoFile(t, dir, "insp-2.csv", strings.Replace(evoHeader, "note", "remark", 1)+"5,50,500.00,2026-05-06,2026-06-01,r5,P-5,B\n")
	evoRun(t, planPath, exitOK)
	tbl := evoTable(t, dir)
	want := append([]evoField(nil), evoV1...)
	want[5].name = "remark"
	evoCheckSchema(t, tbl, want)
	evoCheckRows(t, evoRows(t, tbl), "remark", map[int64]string{1: "n1", 2: "n2", 3: "n3", 4: "n4", 5: "r5"})
	evoCheckDocs(t, dir, tbl, "month(u)", "note")
}

func TestEvolveWidenIntToLong(t *testing.T) {
	dir, planPath := evoWorkspace(t, "incremental")
	evoChangePlan(t, planPath, evoPlan("incremental", replaceCol(evoCols, 1, `{name: qty, type: long}`), "month(u)"))
	// 3000000000 does not fit an int.
	evoFile(t, dir, "insp-2.csv", evoHeader+"5,3000000000,500.00,2026-05-06,2026-06-01,n5,P-5,B\n")
	evoRun(t, planPath, exitOK)
	tbl := evoTable(t, dir)
	want := append([]evoField(nil), evoV1...)
	want[1].typ = "long"
	evoCheckSchema(t, tbl, want)
	evoCheckRows(t, evoRows(t, tbl), "qty", map[int64]string{1: "10", 2: "20", 3: "30", 4: "40", 5: "3000000000"})
	evoCheckDocs(t, dir, tbl, "month(u)")
}

func TestEvolveWidenDecimalPrecision(t *testing.T) {
	dir, planPath := evoWorkspace(t, "incremental")
	evoChangePlan(t, planPath, evoPlan("incremental", replaceCol(evoCols, 2, `{name: amount, type: "decimal(14,2)"}`), "month(u)"))
	// 123456789012.34 needs precision 14.
	evoFile(t, dir, "insp-2.csv", evoHeader+"5,50,123456789012.34,2026-05-06,2026-06-01,n5,P-5,B\n")
	evoRun(t, planPath, exitOK)
	tbl := evoTable(t, dir)
	want := append([]evoField(nil), evoV1...)
	want[2].typ = "decimal(14, 2)"
	evoCheckSchema(t, tbl, want)
	evoCheckRows(t, evoRows(t, tbl), "amount", map[int64]string{1: "100.50", 2: "200.25", 3: "300.00", 4: "400.75", 5: "123456789012.34"})
	evoCheckDocs(t, dir, tbl, "month(u)")
}

// Re-partitioning month(updated) → month(inspection date): the table's
// default spec changes in the commit of the next load; files written
// before keep the old spec, new files are written under the new one.
func TestEvolveRepartition(t *testing.T) {
	dir, planPath := evoWorkspace(t, "incremental")
	evoChangePlan(t, planPath, evoPlan("incremental", evoCols, "month(d)"))
	evoFile(t, dir, "insp-2.csv", evoHeader+"5,50,500.00,2026-05-06,2026-06-01,n5,P-5,B\n")
	before := evoTable(t, dir)
	evoRun(t, planPath, exitOK)
	tbl := evoTable(t, dir)
	evoCheckOneCommit(t, before, tbl)
	evoCheckSchema(t, tbl, evoV1)
	if got := evoSpec(tbl); got != "month(4)" {
		t.Fatalf("default spec %s, want month(4) (d)", got)
	}
	evoCheckFileSpecs(t, tbl, map[string]int{"0": 2, "1": 1}) // 2 months of u before; 1 month of d after
	evoCheckRows(t, evoRows(t, tbl), "d", map[int64]string{1: "2026-01-05", 2: "2026-01-20", 3: "2026-02-03", 4: "2026-02-14", 5: "2026-05-06"})
	evoCheckDocs(t, dir, tbl, "month(d)")
}

// The same on a mode full table, whose every run replaces the rows.
func TestEvolveRepartitionFullMode(t *testing.T) {
	dir, planPath := evoWorkspace(t, "full")
	evoChangePlan(t, planPath, evoPlan("full", evoCols, "month(d)"))
	evoRun(t, planPath, exitOK, "--full-refresh")
	tbl := evoTable(t, dir)
	if got := evoSpec(tbl); got != "month(4)" {
		t.Fatalf("default spec %s, want month(4) (d)", got)
	}
	evoCheckFileSpecs(t, tbl, map[string]int{"1": 2}) // January and February of d
	evoCheckRows(t, evoRows(t, tbl), "u", map[int64]string{1: "2026-03-01", 2: "2026-03-02", 3: "2026-04-01", 4: "2026-04-02"})
	evoCheckDocs(t, dir, tbl, "month(d)")
}

// evoCheckOneCommit: the evolution and the load's rows were one catalog
// commit — one new metadata version, whose new snapshot was written under
// the new current schema — never a schema change visible without its rows.
func evoCheckOneCommit(t *testing.T, before, after *table.Table) {
	t.Helper()
	count := func(tbl *table.Table) int {
		n := 0
		for range tbl.Metadata().PreviousFiles() {
			n++
		}
		return n
	}
	if b, a := count(before), count(after); a != b+1 {
		t.Errorf("%d metadata versions before the run, %d after: the evolution was not committed with the data", b+1, a+1)
	}
	snap := after.CurrentSnapshot()
	bs, as := before.Spec(), after.Spec()
	if snap == nil || snap.SchemaID == nil || *snap.SchemaID != after.Schema().ID || after.Schema().ID == before.Schema().ID && as.ID() == bs.ID() {
		t.Errorf("the load's snapshot is not written under the evolved schema/spec")
	}
}

// evoCheckFileSpecs counts the live data files by partition spec id.
func evoCheckFileSpecs(t *testing.T, tbl *table.Table, want map[string]int) {
	t.Helper()
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, task := range tasks {
		got[fmt.Sprint(task.File.SpecID())]++
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("data files by spec id: %v, want %v", got, want)
	}
}

// Narrowing long → int cannot be applied to rows already in the table:
// approval refuses it naming the fixes, and a run of the unapproved change
// is refused before anything is visible.
func TestEvolveNarrowingRefused(t *testing.T) {
	dir, planPath := evoWorkspace(t, "incremental")
	// qty int → long first, loaded, then back to int: a narrowing.
	evoChangePlan(t, planPath, evoPlan("incremental", replaceCol(evoCols, 1, `{name: qty, type: long}`), "month(u)"))
	evoFile(t, dir, "insp-2.csv", evoHeader+"5,50,500.00,2026-05-06,2026-06-01,n5,P-5,B\n")
	evoRun(t, planPath, exitOK)
	before := evoTable(t, dir)
	narrow := evoPlan("incremental", evoCols, "month(u)")
	if err := os.WriteFile(planPath, []byte(narrow), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, "approve", "--plan", planPath, "--gate", "data-model", "--by", "Analyst A")
	if code != exitPrecondition {
		t.Fatalf("approve of a narrowing: exit %d, want %d: %s%s", code, exitPrecondition, out, stderr)
	}
	for _, w := range []string{"qty", "long", "int", "--full-refresh", "new table"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("the refusal does not name %q: %s", w, stderr)
		}
	}
	// Approved with the rewrite allowed, a run without --full-refresh is
	// still refused and changes nothing.
	evoChangePlan(t, planPath, narrow, "--rewrite", "insp")
	evoFile(t, dir, "insp-3.csv", evoHeader+"6,60,600.00,2026-05-07,2026-06-02,n6,P-6,A\n")
	stderr = evoRun(t, planPath, exitError)
	if !strings.Contains(stderr, "--full-refresh") {
		t.Errorf("the refused run does not name the fix: %s", stderr)
	}
	after := evoTable(t, dir)
	if after.CurrentSnapshot().SnapshotID != before.CurrentSnapshot().SnapshotID || after.Schema().ID != before.Schema().ID {
		t.Fatal("a refused run changed the table")
	}
	evoCheckSchema(t, after, []evoField{{1, "id", "long", true}, {2, "qty", "long", false}, {3, "amount", "decimal(9, 2)", false},
		{4, "d", "date", false}, {5, "u", "date", false}, {6, "note", "string", false}, {7, "saengsanbeonho", "string", false}})
	evoCheckDocs(t, dir, after, "month(u)")
}

// On a mode full table, whose every run replaces its rows, a narrowing is
// approved (the finding says the table is rewritten) and the run rewrites
// the table under the new schema: qty keeps its field id and becomes int;
// no live data file holds a long any more.
func TestEvolveNarrowingRewriteFullMode(t *testing.T) {
	dir, planPath := evoWorkspace(t, "full")
	evoChangePlan(t, planPath, evoPlan("full", replaceCol(evoCols, 1, `{name: qty, type: long}`), "month(u)"))
	evoRun(t, planPath, exitOK)
	if f, _ := evoTable(t, dir).Schema().FindFieldByName("qty"); f.Type.String() != "long" || f.ID != 2 {
		t.Fatalf("widened qty is %+v", f)
	}
	evoChangePlan(t, planPath, evoPlan("full", evoCols, "month(u)"))
	evoFile(t, dir, "insp-2.csv", evoHeader+"5,50,500.00,2026-05-06,2026-06-01,n5,P-5,B\n")
	evoRun(t, planPath, exitOK, "--full-refresh")
	tbl := evoTable(t, dir)
	evoCheckSchema(t, tbl, []evoField{{1, "id", "long", true}, {2, "qty", "int", false}, {3, "amount", "decimal(9, 2)", false},
		{4, "d", "date", false}, {5, "u", "date", false}, {6, "note", "string", false}, {7, "saengsanbeonho", "string", false}})
	evoCheckRows(t, evoRows(t, tbl), "qty", map[int64]string{1: "10", 2: "20", 3: "30", 4: "40", 5: "50"})
	evoCheckDocs(t, dir, tbl, "month(u)")
}
