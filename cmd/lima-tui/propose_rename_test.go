package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
)

// inspectionCSV is a file with Korean headers and values: gate 3 proposes
// romanized names for the table and its columns.
const inspectionCSV = "검사번호,검사불량상세,불량수량\n" +
	"101,긁힘,3\n" +
	"102,찍힘 2곳,1\n" +
	"103,\"도장 불량, 재작업\",12\n" +
	"104,없음,0\n"

// inspectionRows are the file's rows as the test wrote them: id → detail, qty.
var inspectionRows = map[string][2]string{"101": {"긁힘", "3"}, "102": {"찍힘 2곳", "1"}, "103": {"도장 불량, 재작업", "12"}, "104": {"없음", "0"}}

// lakeRows reads a table back from the Iceberg catalog: its column names
// in schema order, its field ids by name, and each row as name → value.
func lakeRows(t *testing.T, planPath, name string) ([]string, map[string]int, []map[string]string) {
	t.Helper()
	ctx := context.Background()
	p, err := flow.LoadPlan(planPath)
	if err != nil {
		t.Fatal(err)
	}
	sk, err := flow.OpenSink(ctx, flow.Workspace{Dir: filepath.Dir(planPath)}, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sk.Close()
	tbl, err := sk.Catalog().LoadTable(ctx, table.Identifier{p.Namespace(), name})
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	ids := map[string]int{}
	for _, f := range tbl.Schema().Fields() {
		cols = append(cols, f.Name)
		ids[f.Name] = f.ID
	}
	_, it, err := tbl.Scan().ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]string
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		for r := 0; r < int(rec.NumRows()); r++ {
			row := map[string]string{}
			for i, f := range rec.Schema().Fields() {
				row[f.Name] = rec.Column(i).ValueStr(r)
			}
			rows = append(rows, row)
		}
		rec.Release()
	}
	return cols, ids, rows
}

func lakeHasTable(t *testing.T, planPath, name string) bool {
	t.Helper()
	ctx := context.Background()
	p, err := flow.LoadPlan(planPath)
	if err != nil {
		t.Fatal(err)
	}
	sk, err := flow.OpenSink(ctx, flow.Workspace{Dir: filepath.Dir(planPath)}, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sk.Close()
	_, err = sk.Catalog().LoadTable(ctx, table.Identifier{p.Namespace(), name})
	if err != nil && !errors.Is(err, catalog.ErrNoSuchTable) {
		t.Fatal(err)
	}
	return err == nil
}

// checkRows compares the lake's rows with the file's, under the column
// names given for the id, the detail and the quantity.
func checkRows(t *testing.T, rows []map[string]string, id, detail, qty string) {
	t.Helper()
	if len(rows) != len(inspectionRows) {
		t.Fatalf("%d rows in the lake, want %d: %v", len(rows), len(inspectionRows), rows)
	}
	for _, r := range rows {
		want, ok := inspectionRows[r[id]]
		if !ok || r[detail] != want[0] || r[qty] != want[1] {
			t.Errorf("lake row %v: want %s=%s with %s=%q, %s=%s", r, id, r[id], detail, want[0], qty, want[1])
		}
	}
}

// TestProposeSetRenamesRomanizedNames: a folder whose CSV has Korean
// headers. propose names the table and the columns in romanized form;
// --set renames the table and all three columns with the proposal
// (--write), the plan keeps each header in source_name and the files
// glob unchanged, and the run lands the file's exact values in a lake
// table of the new name with the new column names. Then, with the table
// in the lake, a column rename records renamed_from and the next run
// renames the Iceberg column in place (same field id, the rows kept); a
// table rename is refused (exit 2, nothing written).
func TestProposeSetRenamesRomanizedNames(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "검사결과.csv"), []byte(inspectionCSV), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "ws")
	if code, _, errb := runCLI(t, "init", "--source", data, "--dir", dir, "--defaults"); code != exitOK {
		t.Fatalf("init exit %d: %s", code, errb)
	}
	planPath := filepath.Join(dir, "platform.yaml")

	// The proposed names, by header, from propose --json.
	code, out, errb := runCLI(t, "propose", "--plan", planPath, "--json")
	if code != exitOK {
		t.Fatalf("propose --json exit %d: %s", code, errb)
	}
	var proposed struct {
		Tables map[string]struct {
			Columns []struct{ Name, SourceName string }
			Source  struct{ Files []string }
		}
	}
	if err := json.Unmarshal([]byte(out), &proposed); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(proposed.Tables) != 1 {
		t.Fatalf("proposed %d tables, want 1: %s", len(proposed.Tables), out)
	}
	var oldTable string
	var files []string
	byHeader := map[string]string{}
	for n, tb := range proposed.Tables {
		oldTable, files = n, tb.Source.Files
		for _, c := range tb.Columns {
			byHeader[c.SourceName] = c.Name
		}
	}
	for _, h := range []string{"검사번호", "검사불량상세", "불량수량"} {
		if n := byHeader[h]; n == "" || plan.CheckName(n) != "" {
			t.Fatalf("header %s proposed as %q, want a romanized name: %v", h, n, byHeader)
		}
	}
	sets := []string{oldTable + "." + byHeader["검사번호"] + ".name=inspection_id",
		oldTable + "." + byHeader["검사불량상세"] + ".name=defect_detail",
		oldTable + "." + byHeader["불량수량"] + ".name=defect_qty",
		oldTable + ".name=inspections"}
	args := []string{"propose", "--plan", planPath, "--write"}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	if code, out, errb := runCLI(t, args...); code != exitOK || !strings.Contains(out, "table "+oldTable+" → inspections") {
		t.Fatalf("propose --set renames: exit %d\n%s%s", code, out, errb)
	}
	p, err := flow.LoadPlan(planPath)
	if err != nil {
		t.Fatal(err)
	}
	tb := p.Tables["inspections"]
	if tb == nil || p.Tables[oldTable] != nil {
		t.Fatalf("tables after the rename: %v", p.TableNames())
	}
	if !slices.Equal(tb.Source.Files, files) {
		t.Errorf("files %v, want the proposal's %v", tb.Source.Files, files)
	}
	for name, header := range map[string]string{"inspection_id": "검사번호", "defect_detail": "검사불량상세", "defect_qty": "불량수량"} {
		if c, ok := tb.Column(name); !ok || c.SourceName != header || c.RenamedFrom != "" {
			t.Errorf("column %s: %+v, want source_name %s", name, c, header)
		}
	}
	for _, q := range p.DataQualityIssues {
		if q.Table == oldTable {
			t.Errorf("an issue still names %s: %+v", oldTable, q)
		}
	}
	for _, g := range []string{"scope", "data-model"} {
		if code, _, errb := runCLI(t, "approve", "--plan", planPath, "--gate", g, "--by", "tester"); code != exitOK {
			t.Fatalf("approve %s exit %d: %s", g, code, errb)
		}
	}
	if code, out, errb := runCLI(t, "run", "--plan", planPath); code != exitOK {
		t.Fatalf("run exit %d\n%s%s", code, out, errb)
	}
	cols, ids, rows := lakeRows(t, planPath, "inspections")
	if !slices.Equal(cols, []string{"inspection_id", "defect_detail", "defect_qty"}) {
		t.Errorf("lake columns %v", cols)
	}
	checkRows(t, rows, "inspection_id", "defect_detail", "defect_qty")
	if lakeHasTable(t, planPath, oldTable) {
		t.Errorf("the lake has a table %s too", oldTable)
	}

	// In the lake now: the table keeps its name, a column is renamed in place.
	before, _ := os.ReadFile(planPath)
	code, _, errb = runCLI(t, "propose", "--plan", planPath, "--write", "--set", "inspections.name=qc_results")
	if after, _ := os.ReadFile(planPath); code != exitUsage || !strings.Contains(errb, "already in the lake") || string(after) != string(before) {
		t.Errorf("table rename in the lake: exit %d, %s (plan changed: %v)", code, errb, string(after) != string(before))
	}
	if code, out, errb := runCLI(t, "propose", "--plan", planPath, "--write", "--set", "inspections.defect_detail.name=defect_note"); code != exitOK {
		t.Fatalf("column rename in the lake: exit %d\n%s%s", code, out, errb)
	}
	p, err = flow.LoadPlan(planPath)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := p.Tables["inspections"].Column("defect_note"); !ok || c.RenamedFrom != "defect_detail" || c.SourceName != "검사불량상세" {
		t.Fatalf("defect_note: %+v", c)
	}
	if code, _, errb := runCLI(t, "approve", "--plan", planPath, "--gate", "data-model", "--by", "tester"); code != exitOK {
		t.Fatalf("approve exit %d: %s", code, errb)
	}
	if code, out, errb := runCLI(t, "run", "--plan", planPath); code != exitOK {
		t.Fatalf("run after the column rename exit %d\n%s%s", code, out, errb)
	}
	cols2, ids2, rows := lakeRows(t, planPath, "inspections")
	if !slices.Equal(cols2, []string{"inspection_id", "defect_note", "defect_qty"}) {
		t.Errorf("lake columns after the rename %v", cols2)
	}
	if ids2["defect_note"] != ids["defect_detail"] {
		t.Errorf("defect_note has field id %d, want defect_detail's %d (renamed, not added)", ids2["defect_note"], ids["defect_detail"])
	}
	checkRows(t, rows, "inspection_id", "defect_note", "defect_qty")
}
