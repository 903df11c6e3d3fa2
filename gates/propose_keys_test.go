package gates

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestProposeCompositeKey: no single column of order lines is unique, the
// pair (order_no, line_no) is: it is proposed as the key, and a pair with a
// repeat in it is held back by the finding's count.
func TestProposeCompositeKey(t *testing.T) {
	var orders, lines, qty []string
	for o := 1; o <= 30; o++ {
		for l := 1; l <= 3; l++ {
			orders = append(orders, fmt.Sprintf("SO-%03d", o))
			lines = append(lines, fmt.Sprint(l))
			qty = append(qty, fmt.Sprint(o*l))
		}
	}
	ev := evTable("order_lines", int64(len(orders)), col("order_no", "string", orders...), col("line_no", "int", lines...), col("qty", "int", qty...))
	pr := Propose([]*TableEvidence{ev}, ProposeOptions{})
	if got := pr.Plan.Tables["order_lines"].Load.Keys; !slices.Equal(got, []string{"order_no", "line_no"}) {
		t.Fatalf("keys %v, want [order_no line_no]\n%s", got, findingsText(pr.Findings))
	}
	f := finding(t, pr.Findings, "order_lines: key")
	if f.Status != Pass || !strings.Contains(f.Detail, "order_no + line_no: 90 distinct values = 90 non-null = 90 rows") {
		t.Errorf("%s: %s", f.Status, f.Detail)
	}
}

// TestProposeReferenceOnlyWhenLoadedValuesCompare: values that match a key
// only once leading zeros are dropped, while both columns stay text, get a
// join but no references check (it compares loaded values and would hold
// back every row); the finding says why.
func TestProposeReferenceOnlyWhenLoadedValuesCompare(t *testing.T) {
	customers := evTable("customers", 4, col("customer_id", "string", "10003", "10006", "10009", "A7"))
	orders := evTable("orders", 4, col("order_id", "long", "1", "2", "3", "4"), col("buyer_ref", "string", "0000010003", "0000010006", "0000010009", "0000010003"))
	pr := Propose([]*TableEvidence{customers, orders}, ProposeOptions{})
	o := pr.Plan.Tables["orders"]
	if len(o.JoinKeys) != 1 || len(o.Checks) != 0 {
		t.Fatalf("joins %+v checks %+v; want the join without a check\n%s", o.JoinKeys, o.Checks, findingsText(pr.Findings))
	}
	f := finding(t, pr.Findings, "orders.buyer_ref → customers.customer_id: join")
	if f.Status != Warn || !strings.Contains(f.Detail, "no references check: loaded as proposed, 4 values match the key only as keys") {
		t.Errorf("%s: %s", f.Status, f.Detail)
	}
}
