package gates

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// Gate 3 proposes a numeric column's currency when its values carry one
// consistently, and says so; values mixing currencies get no currency and
// a finding that they will be held back.
func TestProposeCurrency(t *testing.T) {
	var won, mixed, dollars strings.Builder
	won.WriteString("order_id,amount\n")
	mixed.WriteString("order_id,amount\n")
	dollars.WriteString("order_id,price\n")
	for i := 1; i <= 40; i++ {
		// ₩ on most rows, 원 on every fifth, a plain number on every tenth.
		a := fmt.Sprintf("₩%d,%03d", i, i*7%1000)
		switch {
		case i%10 == 0:
			a = fmt.Sprintf("%d%03d", i, i*7%1000)
		case i%5 == 0:
			a = fmt.Sprintf("%d,%03d원", i, i*7%1000)
		}
		fmt.Fprintf(&won, "%d,\"%s\"\n", i, a)
		m := fmt.Sprintf("₩%d,000", i)
		if i%4 == 0 {
			m = fmt.Sprintf("$%d.50", i)
		}
		fmt.Fprintf(&mixed, "%d,\"%s\"\n", i, m)
		fmt.Fprintf(&dollars, "%d,$%d.25\n", i, i)
	}
	dir, p := writeExport(t, map[string]string{"sales.csv": won.String(), "refunds.csv": mixed.String(), "prices.csv": dollars.String()})
	pr, err := ProposeDataModel(context.Background(), p, ProposeOptions{Workspace: dir})
	if err != nil {
		t.Fatal(err)
	}
	col := func(table, name string) (typ, currency string) {
		tb := pr.Plan.Tables[table]
		if tb == nil {
			t.Fatalf("no table %s in %v", table, pr.Plan.TableNames())
		}
		c, ok := tb.Column(name)
		if !ok {
			t.Fatalf("no column %s.%s", table, name)
		}
		return c.Type, c.Currency
	}
	// sales: 36 values with ₩ (32) or 원 (4), 4 plain: KRW.
	if typ, cur := col("sales", "amount"); !strings.HasPrefix(typ, "decimal") && typ != "long" || cur != "KRW" {
		t.Errorf("sales.amount %s currency %q, want a number in KRW", typ, cur)
	}
	f := finding(t, pr.Findings, "sales.amount: currency")
	if f.Status != Pass || !strings.Contains(f.Detail, "36 values carry their amounts in one currency, KRW: ₩ ×32") || !strings.Contains(f.Detail, "원 ×4") || !strings.Contains(f.Detail, "proposed currency: KRW") {
		t.Errorf("sales currency: %s: %s", f.Status, f.Detail)
	}
	// refunds: 30 ₩ and 10 $: mixed, no currency, the type kept.
	if typ, cur := col("refunds", "amount"); !strings.HasPrefix(typ, "decimal") || cur != "" {
		t.Errorf("refunds.amount %s currency %q, want decimal with no currency", typ, cur)
	}
	f = finding(t, pr.Findings, "refunds.amount: currency")
	if f.Status != Warn || !strings.Contains(f.Detail, "the values mix currencies: ₩ ×30") || !strings.Contains(f.Detail, "$ ×10") ||
		!strings.Contains(f.Detail, "the 40 values with a currency symbol are held back at load (rule currency)") || !strings.Contains(f.Fix, "column of its own") {
		t.Errorf("refunds currency: %s: %s (%s)", f.Status, f.Detail, f.Fix)
	}
	// prices: $ only: USD, with a warning that $ is other dollars too.
	if typ, cur := col("prices", "price"); !strings.HasPrefix(typ, "decimal") || cur != "USD" {
		t.Errorf("prices.price %s currency %q, want decimal in USD", typ, cur)
	}
	f = finding(t, pr.Findings, "prices.price: currency")
	if f.Status != Warn || !strings.Contains(f.Detail, "$ is also written for CAD") {
		t.Errorf("prices currency: %s: %s", f.Status, f.Detail)
	}
	// No type finding: the values cast with the proposed currency, and the
	// mixed ones are the currency finding's.
	for _, name := range []string{"sales.amount: type", "refunds.amount: type", "prices.price: type"} {
		for _, f := range pr.Findings {
			if f.Name == name {
				t.Errorf("%s: %s", name, f.Detail)
			}
		}
	}
}
