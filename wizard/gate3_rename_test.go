package wizard

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
)

// TestGate3EditScreenRenamesInPlace walks the wizard to gate 3 on a file
// with Korean headers (romanized names proposed), opens the edit screen
// on the column read from 검사불량상세 and renames it with n, then its
// table with N: the field is prefilled with the name, a name that is
// not allowed (or taken) is refused live and enter does nothing, esc
// keeps the name; the source column is shown beside. Kept and approved,
// platform.yaml has the new names with the header in source_name, and a
// load lands the file's values under them (read back from Iceberg).
func TestGate3EditScreenRenamesInPlace(t *testing.T) {
	dir := t.TempDir()
	csv := "검사번호,검사불량상세,불량수량\n101,긁힘,3\n102,찍힘 2곳,1\n103,없음,0\n"
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data", "검사결과.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"101": "긁힘", "102": "찍힘 2곳", "103": "없음"}
	h := newHarness(t, dir, Deps{})
	h.m.by = "tester"
	h.key("ctrl+d")
	h.contains("all questions answered")
	h.key("enter")
	h.contains("every check passes")
	h.key("enter")
	h.contains("Gate 3 · data model", "proposed now, not approved")
	g := h.m.gate3
	if len(g.work.Tables) != 1 {
		t.Fatalf("test setup: %d tables proposed", len(g.work.Tables))
	}
	oldTable := g.work.TableNames()[0]
	var oldCol string
	for {
		it := g.items[g.cur]
		if c := g.work.Tables[it.table].Columns[it.col]; c.SourceName == "검사불량상세" {
			oldCol = c.Name
			break
		}
		if g.cur == len(g.items)-1 {
			t.Fatal("no column read from 검사불량상세")
		}
		h.key("down")
	}
	if plan.CheckName(oldCol) != "" || plan.CheckName(oldTable) != "" {
		t.Fatalf("test setup: proposed names %s.%s", oldTable, oldCol)
	}
	h.key("e")
	h.contains("Gate 3 · edit "+oldTable+"."+oldCol, "source column 검사불량상세", "n rename column", "N rename table")

	// n: the column's name, prefilled; not allowed, then taken, then good.
	h.key("n")
	h.contains("Rename column "+oldTable+"."+oldCol, oldCol)
	if !h.m.typing() {
		t.Error("the rename field does not take q and ? as text")
	}
	h.key("ctrl+u")
	h.typeText("Defect")
	h.contains("not allowed")
	h.key("enter")
	h.contains("Rename column") // refused: the field stays open
	compareGolden(t, "gate3_rename", func(m tea.Msg) { h.send(m) }, h.screen)
	if c, _ := g.edit.ed.draft.Tables[oldTable].Column(oldCol); c == nil {
		t.Fatal("a refused name renamed the column")
	}
	other := ""
	for _, c := range g.work.Tables[oldTable].Columns {
		if c.Name != oldCol {
			other = c.Name
			break
		}
	}
	h.key("ctrl+u")
	h.typeText(other)
	h.contains("is taken by column " + other)
	h.key("esc")
	if g.edit.ed.rename != nil || g.edit.ed.col != oldCol {
		t.Fatal("esc did not keep the name")
	}
	h.key("n")
	h.key("ctrl+u")
	h.typeText("defect_detail")
	h.contains("the load still reads source column 검사불량상세")
	h.key("enter")
	h.contains("Gate 3 · edit "+oldTable+".defect_detail", "source column 검사불량상세")

	// N: the table; the rows still come from the same file.
	h.key("N")
	h.contains("Rename table "+oldTable, "the rows still come from")
	h.key("ctrl+u")
	h.typeText("inspections")
	h.key("enter")
	h.contains("Gate 3 · edit inspections.defect_detail")
	h.key("enter")
	h.contains("Gate 3 · data model", "~ table "+oldTable+" renamed inspections", "~ inspections."+oldCol+" renamed defect_detail (source 검사불량상세)")
	h.key("enter")
	h.contains("Run · load, reconcile, report")

	pp := filepath.Join(dir, "platform.yaml")
	p, err := plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	tb := p.Tables["inspections"]
	if tb == nil || p.Tables[oldTable] != nil || !p.ModelApproved() {
		t.Fatalf("tables %v approved %v", p.TableNames(), p.ModelApproved())
	}
	if c, ok := tb.Column("defect_detail"); !ok || c.SourceName != "검사불량상세" || c.RenamedFrom != "" {
		t.Fatalf("defect_detail: %+v", c)
	}
	if !slices.ContainsFunc(tb.Source.Files, func(f string) bool { return strings.Contains(f, "검사결과") }) {
		t.Errorf("files %v no longer select 검사결과.csv", tb.Source.Files)
	}
	ctx := context.Background()
	ws := flow.Workspace{Dir: dir}
	if _, err := flow.Run(ctx, flow.RunOptions{Workspace: ws, Plan: p, Force: true}); err != nil {
		t.Fatal(err)
	}
	sk, err := flow.OpenSink(ctx, ws, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sk.Close()
	tbl, err := sk.Catalog().LoadTable(ctx, table.Identifier{p.Namespace(), "inspections"})
	if err != nil {
		t.Fatal(err)
	}
	idCol := ""
	for _, c := range tb.Columns {
		if c.SourceName == "검사번호" {
			idCol = c.Name
		}
	}
	_, it, err := tbl.Scan().ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		ids, ds := rec.Schema().FieldIndices(idCol), rec.Schema().FieldIndices("defect_detail")
		if len(ids) != 1 || len(ds) != 1 {
			t.Fatalf("lake schema %v lacks %s or defect_detail", rec.Schema(), idCol)
		}
		for r := 0; r < int(rec.NumRows()); r++ {
			got[rec.Column(ids[0]).ValueStr(r)] = rec.Column(ds[0]).ValueStr(r)
		}
		rec.Release()
	}
	if len(got) != len(want) {
		t.Fatalf("lake rows %v, want %v", got, want)
	}
	for id, v := range want {
		if got[id] != v {
			t.Errorf("%s: defect_detail %q, want %q", id, got[id], v)
		}
	}
}

// TestGate3RenameNeedsTheLake: when the lake cannot be read, n and N are
// off with the reason (a rename must know whether the table is there),
// and pressing them renames nothing.
func TestGate3RenameNeedsTheLake(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data", "orders.csv"), []byte("order_id,amount\n1,2.50\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, dir, Deps{Lake: func(context.Context, flow.Workspace, *plan.Plan) (gates.Lake, error) {
		return nil, errors.New("catalog unreachable")
	}})
	h.m.by = "tester"
	h.key("ctrl+d")
	h.contains("all questions answered")
	h.key("enter")
	h.contains("every check passes")
	h.key("enter")
	h.contains("Gate 3 · data model")
	h.key("e")
	h.contains("Gate 3 · edit orders.")
	var off int
	for _, b := range h.m.gate3.Keys() {
		if (b.Help().Key == "n" || b.Help().Key == "N") && !b.Enabled() && strings.Contains(b.Reason, "catalog unreachable") {
			off++
		}
	}
	if off != 2 {
		t.Errorf("n and N are not off with the reason: %+v", h.m.gate3.Keys())
	}
	h.key("n")
	h.contains("cannot rename: the lake could not be read")
	if h.m.gate3.edit.ed.rename != nil || h.m.typing() {
		t.Error("n opened the rename field without the lake")
	}
}
