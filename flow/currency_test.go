package flow_test

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/flow"
)

const currencyPlan = `schema_version: 1
platform: {prefix: cur}
sources:
  in: {kind: files, path: in}
tables:
  payments:
    source: {name: in, files: ["*.csv"]}
    columns:
      - {name: id, type: long, required: true}
      - {name: amount, type: "decimal(12,2)"}
    load: {keys: [id]}
`

// A currency symbol in an amount is held back under rule currency unless
// the column declares its currency; declared, that currency's symbol is
// removed and counted, another currency's is still held back.
func TestCurrencySymbolsAreHeldBackUnlessDeclared(t *testing.T) {
	csv := []byte("id,amount\n1,\"₩150,000\"\n2,\"150,000\"\n3,$12.00\n4,7.50\n")
	amounts := func(t *testing.T, ws flow.Workspace, p *plan.Plan) map[int64]string {
		_, tbl := loadIceberg(t, ws, p, "payments")
		_, it, err := tbl.Scan().ToArrowRecords(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got := map[int64]string{}
		for rec, err := range it {
			if err != nil {
				t.Fatal(err)
			}
			ids, am := rec.Column(0).(*array.Int64), rec.Column(1).(*array.Decimal128)
			for i := 0; i < int(rec.NumRows()); i++ {
				got[ids.Value(i)] = am.Value(i).ToString(2)
			}
			rec.Release()
		}
		return got
	}
	fixes := func(ns []clean.Normalization) int64 {
		for _, n := range ns {
			if n.Column == "amount" && n.Fix == clean.FixCurrency {
				return n.Count
			}
		}
		return 0
	}

	// Undeclared: ₩150,000 and $12.00 are held back; 150,000 and 7.50 load.
	ws, p := workspace(t, map[string][]byte{"a.csv": csv}, currencyPlan)
	tr := runOnce(t, ws, p, flow.RunOptions{}).Result.Tables[0]
	// read 5 (a header + 4 rows) = loaded 2 + held 2 + skipped 1.
	if tr.RowsRead != 5 || tr.RowsLoaded != 2 || tr.RowsQuarantined != 2 || tr.RowsSkipped != 1 || !tr.Balanced() {
		t.Fatalf("undeclared: read %d loaded %d held %d skipped %d", tr.RowsRead, tr.RowsLoaded, tr.RowsQuarantined, tr.RowsSkipped)
	}
	if n := tr.QuarantinedBy[clean.RuleCurrency]; n != 2 || len(tr.QuarantinedBy) != 1 {
		t.Fatalf("undeclared: held back by %v, want 2 under %s", tr.QuarantinedBy, clean.RuleCurrency)
	}
	for _, e := range tr.Exceptions {
		r := e.Errors[0].Reason
		if e.Errors[0].Rule != clean.RuleCurrency || !(strings.Contains(r, `"₩150,000"`) && strings.Contains(r, "currency: KRW") || strings.Contains(r, `"$12.00"`) && strings.Contains(r, "currency: USD")) {
			t.Errorf("undeclared: exception %+v does not name the value and the currency to declare", e.Errors)
		}
	}
	if got := amounts(t, ws, p); len(got) != 2 || got[2] != "150000.00" || got[4] != "7.50" {
		t.Errorf("undeclared: lake holds %v, want 2 → 150000.00 and 4 → 7.50", got)
	}
	if n := fixes(tr.Normalizations); n != 0 {
		t.Errorf("undeclared: %d currency fixes counted, want 0", n)
	}

	// currency: KRW: ₩150,000 loads as 150000 with the fix counted once;
	// $12.00 is still held back.
	ws2, p2 := workspace(t, map[string][]byte{"a.csv": csv},
		strings.Replace(currencyPlan, `type: "decimal(12,2)"}`, `type: "decimal(12,2)", currency: KRW}`, 1))
	tr2 := runOnce(t, ws2, p2, flow.RunOptions{}).Result.Tables[0]
	if tr2.RowsRead != 5 || tr2.RowsLoaded != 3 || tr2.RowsQuarantined != 1 || tr2.RowsSkipped != 1 || !tr2.Balanced() {
		t.Fatalf("KRW: read %d loaded %d held %d skipped %d", tr2.RowsRead, tr2.RowsLoaded, tr2.RowsQuarantined, tr2.RowsSkipped)
	}
	if n := tr2.QuarantinedBy[clean.RuleCurrency]; n != 1 || len(tr2.Exceptions) != 1 || tr2.Exceptions[0].Values["amount"] != "$12.00" ||
		!strings.Contains(tr2.Exceptions[0].Errors[0].Reason, "not the column's currency KRW") {
		t.Fatalf("KRW: held back by %v: %+v, want $12.00 under %s", tr2.QuarantinedBy, tr2.Exceptions, clean.RuleCurrency)
	}
	if got := amounts(t, ws2, p2); len(got) != 3 || got[1] != "150000.00" || got[2] != "150000.00" || got[4] != "7.50" {
		t.Errorf("KRW: lake holds %v, want 1 and 2 → 150000.00, 4 → 7.50", got)
	}
	if n := fixes(tr2.Normalizations); n != 1 {
		t.Errorf("KRW: %d currency fixes counted, want 1 (%+v)", n, tr2.Normalizations)
	}

	// An unknown code is refused before anything is read.
	bad, err := plan.Parse([]byte(strings.Replace(currencyPlan, `type: "decimal(12,2)"}`, `type: "decimal(12,2)", currency: WON}`, 1)), "platform.yaml")
	if err == nil {
		err = bad.Validate()
	}
	if err == nil || !strings.Contains(err.Error(), `tables.payments.columns[1].currency: "WON" is not an ISO 4217 currency code`) {
		t.Errorf("currency: WON: %v", err)
	}
}
