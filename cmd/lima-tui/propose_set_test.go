package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/flow"
)

// mixedDatesOrders writes an orders file of 8 rows whose order_date is
// written ISO in 2 rows and dd/MM/yyyy in 6, every day and month ≤ 12 so
// the order cannot be told from the values (gate 3 asks to choose it).
// It returns the folder and each order's true date (ISO), by order_id.
func mixedDatesOrders(t *testing.T, seed uint64) (string, map[string]string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	data := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	truth := map[string]string{}
	var b strings.Builder
	b.WriteString("order_id,customer,order_date,amount\n")
	for i := 1; i <= 8; i++ {
		d := time.Date(2024, time.Month(1+rng.IntN(12)), 1+rng.IntN(12), 0, 0, 0, 0, time.UTC)
		text := d.Format("02/01/2006")
		if i == 1 || i == 4 {
			text = d.Format("2006-01-02")
		}
		id := fmt.Sprint(i)
		truth[id] = d.Format("2006-01-02")
		fmt.Fprintf(&b, "%s,C%d,%s,%d.%02d\n", id, 1+rng.IntN(3), text, 1+rng.IntN(90), rng.IntN(100))
	}
	if err := os.WriteFile(filepath.Join(data, "orders.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return data, truth
}

// landOrders runs init, propose --write with the edits, both approvals and
// run on the folder; it returns the run's stdout+stderr and the plan.
func landOrders(t *testing.T, data string, sets ...string) (int, string, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ws")
	if code, _, errb := runCLI(t, "init", "--source", data, "--dir", dir, "--defaults"); code != exitOK {
		t.Fatalf("init exit %d: %s", code, errb)
	}
	planPath := filepath.Join(dir, "platform.yaml")
	args := []string{"propose", "--plan", planPath, "--write"}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	if code, out, errb := runCLI(t, args...); code != exitOK {
		t.Fatalf("propose %v exit %d: %s%s", sets, code, out, errb)
	}
	for _, g := range []string{"scope", "data-model"} {
		if code, _, errb := runCLI(t, "approve", "--plan", planPath, "--gate", g, "--by", "tester"); code != exitOK {
			t.Fatalf("approve %s exit %d: %s", g, code, errb)
		}
	}
	code, out, errb := runCLI(t, "run", "--plan", planPath)
	return code, out + errb, planPath
}

// lakeDates reads orders back from the Iceberg table: order_id → the
// order_date as a date (ISO), "" when the column is not a date.
func lakeDates(t *testing.T, planPath string) map[string]string {
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
	tbl, err := sk.Catalog().LoadTable(ctx, table.Identifier{p.Namespace(), "orders"})
	if err != nil {
		t.Fatal(err)
	}
	_, it, err := tbl.Scan().ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		ids, dates := rec.Column(int(rec.Schema().FieldIndices("order_id")[0])), rec.Column(int(rec.Schema().FieldIndices("order_date")[0]))
		for r := 0; r < int(rec.NumRows()); r++ {
			d := ""
			if dv, ok := dates.(*array.Date32); ok && !dv.IsNull(r) {
				d = dv.Value(r).ToTime().Format("2006-01-02")
			}
			out[ids.ValueStr(r)] = d
		}
		rec.Release()
	}
	return out
}

// TestProposeSetFormatLandsMixedDates: the mixed-dates orders file. With
// type date alone (all the wizard's t offered), the 6 rows written
// dd/MM/yyyy are held back and the run summary says so in a headline;
// with the format the finding asks for, set by --set, all 8 rows land
// as the generator's dates and none is held back.
func TestProposeSetFormatLandsMixedDates(t *testing.T) {
	data, truth := mixedDatesOrders(t, 14)

	code, out, planPath := landOrders(t, data, "orders.order_date.type=date")
	if code != exitOK {
		t.Fatalf("run with type date: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "⚠ orders: 6 of 8 rows held back") {
		t.Errorf("the run summary has no headline for 6 of 8 rows held back:\n%s", out)
	}
	if got := lakeDates(t, planPath); len(got) != 2 {
		t.Errorf("type date alone: %d rows in the lake, want the 2 ISO ones: %v", len(got), got)
	}

	code, out, planPath = landOrders(t, data, "orders.order_date.formats=dd/MM/yyyy,yyyy-MM-dd")
	if code != exitOK {
		t.Fatalf("run with the formats: exit %d\n%s", code, out)
	}
	if strings.Contains(out, "⚠") || strings.Contains(out, "held back as exceptions") {
		t.Errorf("rows held back with the formats set:\n%s", out)
	}
	got := lakeDates(t, planPath)
	if len(got) != len(truth) {
		t.Fatalf("lake holds %d orders, want %d: %v", len(got), len(truth), got)
	}
	for id, d := range truth {
		if got[id] != d {
			t.Errorf("order %s: order_date %q in the lake, want %q", id, got[id], d)
		}
	}
}

// TestProposeSetRefusesUnknowns: an edit naming an unknown table, column,
// field or value exits 2 with the reason, and writes nothing.
func TestProposeSetRefusesUnknowns(t *testing.T) {
	data, _ := mixedDatesOrders(t, 3)
	dir := filepath.Join(t.TempDir(), "ws")
	if code, _, errb := runCLI(t, "init", "--source", data, "--dir", dir, "--defaults"); code != exitOK {
		t.Fatalf("init exit %d: %s", code, errb)
	}
	planPath := filepath.Join(dir, "platform.yaml")
	before, err := os.ReadFile(planPath)
	if err != nil {
		t.Fatal(err)
	}
	for set, want := range map[string]string{
		"nope.order_date.format=dd/MM/yyyy":     `no base table "nope"`,
		"orders.nope.type=date":                 `no column "nope"`,
		"orders.order_date.colour=red":          "a column takes format",
		"orders.amount.currency=XYZ":            "not an ISO 4217 currency code",
		"orders.amount.type=decimal(2,5)":       "decimal",
		"orders.order_date.format=dd/MM/yyyy,x": "format takes one layout",
		"orders.key=order_id,nope":              `no column "nope"`,
		"orders.partition=month(customer)":      "cannot partition",
		"orders.customer.references=nope.id":    "references takes table.column",
		"orders.customer.required=maybe":        "required takes true or false",
		"orders.order_date":                     "want table.column.field=value",
	} {
		code, _, errb := runCLI(t, "propose", "--plan", planPath, "--write", "--set", set)
		if code != exitUsage || !strings.Contains(errb, want) {
			t.Errorf("--set %s: exit %d, stderr %q; want exit %d and %q", set, code, errb, exitUsage, want)
		}
	}
	after, err := os.ReadFile(planPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Errorf("a refused --set changed platform.yaml")
	}
}

// TestProposeSetEditsAPlanWithTables: --set on a plan that has its tables
// edits them (with --write), the approval no longer matches so run
// refuses (exit 4) until the model is approved again; then a full
// refresh lands all 8 orders and --json names no table that held back
// most of its rows.
func TestProposeSetEditsAPlanWithTables(t *testing.T) {
	data, truth := mixedDatesOrders(t, 21)
	code, out, planPath := landOrders(t, data, "orders.order_date.type=date")
	if code != exitOK || !strings.Contains(out, "⚠ orders: 6 of 8 rows held back") {
		t.Fatalf("first run: exit %d\n%s", code, out)
	}
	// The headline says so too: no "✓ ok" above a table that held back
	// most of its rows.
	if strings.Contains(out, "✓ ok") || !strings.Contains(out, "! ok, but a table held back most of its rows") {
		t.Errorf("first run's headline reads as a plain success:\n%s", out)
	}
	if code, rep, _ := runCLI(t, "report", "--plan", planPath, "--json"); code != exitOK || !strings.Contains(rep, `"held_back_most"`) || !strings.Contains(rep, `"orders: 6 of 8 rows held back"`) {
		t.Errorf("report.json lacks held_back_most: exit %d\n%s", code, rep)
	}
	if code, _, errb := runCLI(t, "propose", "--plan", planPath, "--write", "--set", "orders.order_date.formats=dd/MM/yyyy,yyyy-MM-dd"); code != exitOK || !strings.Contains(errb, "approve the data model again") {
		t.Fatalf("propose --set on a plan with tables: exit %d: %s", code, errb)
	}
	if code, _, _ := runCLI(t, "run", "--plan", planPath); code != exitPrecondition {
		t.Fatalf("run after an unapproved edit: exit %d, want %d", code, exitPrecondition)
	}
	if code, _, errb := runCLI(t, "approve", "--plan", planPath, "--gate", "data-model", "--by", "tester"); code != exitOK {
		t.Fatalf("approve: exit %d: %s", code, errb)
	}
	code, stdout, errb := runCLI(t, "run", "--plan", planPath, "--full-refresh", "--json")
	if code != exitOK || strings.Contains(stdout, "held_back_most") || !strings.Contains(stdout, `"rows_quarantined":0`) {
		t.Fatalf("full refresh: exit %d\n%s\n%s", code, stdout, errb)
	}
	got := lakeDates(t, planPath)
	if len(got) != len(truth) {
		t.Fatalf("lake holds %d orders, want %d: %v", len(got), len(truth), got)
	}
	for id, d := range truth {
		if got[id] != d {
			t.Errorf("order %s: %q in the lake, want %q", id, got[id], d)
		}
	}
}
