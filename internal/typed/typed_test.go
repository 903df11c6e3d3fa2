package typed

import "testing"

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		want, typed string
		res         Result
	}{
		{"sales.orders", "sales.orders", Exact},
		{"sales.orders", "", Empty},
		{"sales.orders", "Sales.Orders", CaseOrBlanks},
		{"sales.orders", " sales.orders\t", CaseOrBlanks},
		{"sales.orders", "sales.order", Other},
		{"sales.orders", "sales.orders.", Other},
	} {
		if got := Check(c.want, c.typed); got != c.res {
			t.Errorf("Check(%q, %q) = %d, want %d", c.want, c.typed, got, c.res)
		}
	}
}
