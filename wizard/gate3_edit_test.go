package wizard

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
)

// writeMixedDates writes data/orders.csv: 8 orders whose order_date is
// ISO in rows 1 and 4 and dd/MM/yyyy in the other 6, day and month ≤ 12
// (the order cannot be told from the values). It returns each order's
// true date by order_id.
func writeMixedDates(t *testing.T, dir string, seed uint64) map[string]string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 16))
	truth := map[string]string{}
	var b strings.Builder
	b.WriteString("order_id,customer,order_date,amount\n")
	for i := 1; i <= 8; i++ {
		d := time.Date(2024, time.Month(1+rng.IntN(12)), 1+rng.IntN(12), 0, 0, 0, 0, time.UTC)
		text := d.Format("02/01/2006")
		if i == 1 || i == 4 {
			text = d.Format("2006-01-02")
		}
		truth[fmt.Sprint(i)] = d.Format("2006-01-02")
		fmt.Fprintf(&b, "%d,C%d,%s,%d.%02d\n", i, 1+rng.IntN(3), text, 1+rng.IntN(90), rng.IntN(100))
	}
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data", "orders.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return truth
}

// TestGate3EditScreenPicksDateFormats walks the wizard to gate 3 on the
// mixed-dates orders file (the real proposal), opens the edit screen on
// order_date and drives it with keys: type date alone previews 2 of 8
// values parsing and the headline "6 of 8 sampled rows would be held
// back"; picking dd/MM/yyyy then yyyy-MM-dd previews 8 of 8. Approved,
// the plan the wizard wrote lands all 8 rows as the generator's dates,
// none held back (read back from the Iceberg table).
func TestGate3EditScreenPicksDateFormats(t *testing.T) {
	dir := t.TempDir()
	truth := writeMixedDates(t, dir, 9)
	h := newHarness(t, dir, Deps{})
	h.m.by = "tester"
	h.key("ctrl+d")
	h.contains("all questions answered")
	h.key("enter")
	h.contains("every check passes")
	h.key("enter")
	h.contains("Gate 3 · data model", "proposed now, not approved", "order_date")
	g := h.m.gate3
	for g.items[g.cur].table != "orders" || g.work.Tables["orders"].Columns[g.items[g.cur].col].Name != "order_date" {
		if g.cur == len(g.items)-1 {
			t.Fatal("no orders.order_date in gate 3")
		}
		h.key("down")
	}
	if c, _ := g.work.Tables["orders"].Column("order_date"); c.Type != "string" {
		t.Fatalf("test setup: order_date proposed as %q, want string (ambiguous order)", c.Type)
	}
	h.key("e")
	h.contains("Gate 3 · edit orders.order_date", "Preview")
	h.golden("gate3_edit")
	ed := g.edit.ed
	if ed == nil {
		t.Fatal("e did not open the edit screen")
	}
	rowOf := func(kind editRowKind, format string) int {
		return slices.IndexFunc(ed.rows(), func(r editRow) bool { return r.kind == kind && r.format == format })
	}
	moveTo := func(i int) {
		t.Helper()
		if i < 0 {
			t.Fatalf("no such field in the edit screen:\n%s", h.screen())
		}
		for ed.cur < i {
			h.key("down")
		}
		for ed.cur > i {
			h.key("up")
		}
	}
	// The type alone, as t offered it: date with the ISO default.
	moveTo(rowOf(erType, ""))
	for c := ed.column(); c.Type != "date"; c = ed.column() {
		h.key("right")
		if len(ed.done) > 20 {
			t.Fatal("type date not reachable with →")
		}
	}
	h.contains("2 of 8 sampled values parse as date", "6 would be held back", "⚠ orders: 6 of 8 sampled rows would be held back")
	// Kept, the model shows the headline before approval.
	h.key("enter")
	h.contains("Gate 3 · data model", "⚠ orders: 6 of 8 sampled rows would be held back", "orders.order_date type: string → date")
	h.key("e")
	h.contains("Gate 3 · edit orders.order_date")
	ed = g.edit.ed
	// The finding's fix: choose the order, day first; keep ISO for the rest.
	for _, f := range []string{"dd/MM/yyyy", "yyyy-MM-dd"} {
		if !slices.Contains(ed.candidates, f) {
			t.Fatalf("format %s not among the candidates %v", f, ed.candidates)
		}
		moveTo(rowOf(erFormat, f))
		h.key("space")
	}
	h.contains("[1] dd/MM/yyyy", "[2] yyyy-MM-dd", "8 of 8 sampled values parse as date (dd/MM/yyyy | yyyy-MM-dd)", "orders: none of 8 sampled rows would be held back")
	h.key("enter")
	h.contains("Gate 3 · data model", "order_date", "dd/MM/yyyy | yyyy-MM-dd", "orders.order_date formats: none → dd/MM/yyyy | yyyy-MM-dd")
	if strings.Contains(h.screen(), "⚠") {
		t.Errorf("a held-back headline after the fix:\n%s", h.screen())
	}
	h.key("enter")
	h.contains("Run · load, reconcile, report")

	p, err := plan.Load(filepath.Join(dir, "platform.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := p.Tables["orders"].Column("order_date"); c == nil || c.Type != "date" || !slices.Equal(c.Formats, []string{"dd/MM/yyyy", "yyyy-MM-dd"}) || !p.ModelApproved() {
		t.Fatalf("the approved plan lacks the edit: %+v approved %v", c, p.ModelApproved())
	}
	ctx := context.Background()
	ws := flow.Workspace{Dir: dir}
	out, err := flow.Run(ctx, flow.RunOptions{Workspace: ws, Plan: p, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range out.Report.Tables {
		if tr.RowsQuarantined != 0 || tr.RowsLoaded != 8 || tr.RowsRead != tr.RowsLoaded+tr.RowsQuarantined+tr.RowsSkipped {
			t.Errorf("%s: read %d loaded %d held %d skipped %d; want 8 loaded, none held", tr.Name, tr.RowsRead, tr.RowsLoaded, tr.RowsQuarantined, tr.RowsSkipped)
		}
	}
	sk, err := flow.OpenSink(ctx, ws, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sk.Close()
	tbl, err := sk.Catalog().LoadTable(ctx, table.Identifier{p.Namespace(), "orders"})
	if err != nil {
		t.Fatal(err)
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
		ids, dates := rec.Column(rec.Schema().FieldIndices("order_id")[0]), rec.Column(rec.Schema().FieldIndices("order_date")[0])
		for r := 0; r < int(rec.NumRows()); r++ {
			if dv, ok := dates.(*array.Date32); ok && !dv.IsNull(r) {
				got[ids.ValueStr(r)] = dv.Value(r).ToTime().Format("2006-01-02")
			}
		}
		rec.Release()
	}
	if len(got) != len(truth) {
		t.Errorf("the lake holds %d dated orders, want %d: %v", len(got), len(truth), got)
	}
	for id, d := range truth {
		if got[id] != d {
			t.Errorf("order %s: %q in the lake, want %q", id, got[id], d)
		}
	}
}
