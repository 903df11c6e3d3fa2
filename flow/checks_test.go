package flow_test

import (
	"strings"
	"testing"

	"github.com/lima-lake/lima/flow"
)

func TestReferencesAndExpressionChecks(t *testing.T) {
	files := map[string][]byte{
		"customers.csv": []byte("id,name\nC1,Ann\nC2,Bo\n"),
		// o3 references an unknown customer; o4 breaks the expression; o5
		// breaks both and is one exception listing both failures; o6 has a
		// null quantity, which the expression does not reject (as in SQL).
		"orders.csv": []byte("order_id,customer_id,qty,max_qty\no1,C1,5,10\no2,C2,10,10\no3,C9,1,10\no4,C1,11,10\no5,C8,12,10\no6,C2,,10\n"),
	}
	ws, p := workspace(t, files, `schema_version: 1
platform: {prefix: chk}
sources: {in: {kind: files, path: in}}
tables:
  orders:
    source: {name: in, files: [orders.csv]}
    columns:
      - {name: order_id, type: string, required: true}
      - {name: customer_id, type: string}
      - {name: qty, type: long}
      - {name: max_qty, type: long}
    load: {keys: [order_id]}
    checks:
      - {rule: references, column: customer_id, references: customers.id}
      - {rule: expression, column: qty, expr: "qty <= max_qty and qty > 0"}
  customers:
    source: {name: in, files: [customers.csv]}
    columns:
      - {name: id, type: string, required: true}
      - {name: name, type: string}
    load: {keys: [id]}
`)
	out := runOnce(t, ws, p, flow.RunOptions{})
	// customers load first although "orders" sorts before it.
	if out.Result.Tables[0].Name != "customers" {
		t.Fatalf("load order: %s first", out.Result.Tables[0].Name)
	}
	o := out.Result.Tables[1]
	if o.RowsLoaded != 3 || o.RowsQuarantined != 3 || !o.Balanced() {
		t.Fatalf("orders: loaded %d held %d", o.RowsLoaded, o.RowsQuarantined)
	}
	rules := map[string][]string{}
	for _, e := range o.Exceptions {
		rules[e.Loc.String()] = e.Rules()
	}
	want := map[string]string{"orders.csv:4": "references", "orders.csv:5": "expression", "orders.csv:6": "references,expression"}
	for loc, r := range want {
		if strings.Join(rules[loc], ",") != r {
			t.Errorf("%s: rules %v, want %s", loc, rules[loc], r)
		}
	}
}
