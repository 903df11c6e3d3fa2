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
