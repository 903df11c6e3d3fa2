package gates_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
)

// The newcomer path on amounts in won: gate 3 proposes currency: KRW, the
// run without edits loads the ₩ and 원 amounts with the fix counted, and
// when the next file brings an amount in dollars, that row is held back.
func TestNewcomerPathDeclaresTheCurrency(t *testing.T) {
	ws := t.TempDir()
	var b strings.Builder
	b.WriteString("payment_id,paid_on,amount\n")
	marked := 0 // ₩ and 원 values
	for i := 1; i <= 60; i++ {
		a := fmt.Sprintf("₩%d,500", i)
		switch {
		case i%6 == 0:
			a = fmt.Sprintf("%d,500원", i)
			marked++
		case i%7 == 0:
			a = fmt.Sprintf("%d500", i)
		default:
			marked++
		}
		fmt.Fprintf(&b, "%d,2026-03-%02d,\"%s\"\n", i, 1+i%28, a)
	}
	write := func(name, body string) {
		if err := os.MkdirAll(filepath.Join(ws, "data"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, "data", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("payments_001.csv", b.String())
	p := &plan.Plan{SchemaVersion: plan.SchemaVersion, Platform: plan.Platform{Prefix: "pay", Catalog: plan.CatalogSQLite},
		Storage: plan.Storage{Warehouse: plan.DefaultWarehouse}, ETL: plan.ETL{Tool: "lima"},
		Sources: map[string]*plan.Source{"src": {Kind: plan.SourceFiles, Path: "data"}}}
	pr, err := gates.ProposeDataModel(context.Background(), p, gates.ProposeOptions{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	pr.Apply(p)
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	tb := p.Tables["payments"]
	if tb == nil {
		t.Fatalf("tables %v, want payments", p.TableNames())
	}
	if c, ok := tb.Column("amount"); !ok || c.Currency != "KRW" {
		t.Fatalf("payments.amount proposed as %+v, want currency KRW", c)
	}
	run := func() (loaded, held, currencyHeld, fixed int64) {
		out, err := flow.Run(context.Background(), flow.RunOptions{Workspace: flow.Workspace{Dir: ws}, Plan: p, Force: true})
		if err != nil {
			t.Fatal(err)
		}
		tr := out.Result.Tables[0]
		if !tr.Balanced() {
			t.Fatalf("read %d ≠ loaded %d + held %d + skipped %d", tr.RowsRead, tr.RowsLoaded, tr.RowsQuarantined, tr.RowsSkipped)
		}
		for _, n := range tr.Normalizations {
			if n.Column == "amount" && n.Fix == clean.FixCurrency {
				fixed = n.Count
			}
		}
		return tr.RowsLoaded, tr.RowsQuarantined, tr.QuarantinedBy[clean.RuleCurrency], fixed
	}
	// i = 1..60: 10 multiples of 6 with 원, 7 multiples of 7 but not of 6
	// plain (7, 14, 21, 28, 35, 49, 56), 43 with ₩: 53 marked.
	if marked != 53 {
		t.Fatalf("the test's own count is %d, want 53", marked)
	}
	if loaded, held, _, fixed := run(); loaded != 60 || held != 0 || fixed != 53 {
		t.Fatalf("first file: loaded %d, held %d, currency fixes %d; want 60, 0, 53", loaded, held, fixed)
	}
	// The next drop has an amount in dollars: held back, the rest loads.
	write("payments_002.csv", "payment_id,paid_on,amount\n61,2026-04-01,\"₩7,000\"\n62,2026-04-02,$12.00\n")
	if loaded, held, cur, fixed := run(); loaded != 61 || held != 1 || cur != 1 || fixed != 54 {
		t.Fatalf("with the next file: loaded %d, held %d (%d under currency), currency fixes %d; want 61, 1, 1, 54", loaded, held, cur, fixed)
	}
}
