package plan

import "testing"

// TestRenameExprColumn: only operands naming the column change; a quoted
// literal with the same text, another column and and / or stay.
func TestRenameExprColumn(t *testing.T) {
	for _, c := range []struct{ in, old, new, want string }{
		{"amount <= 100 and status = 'amount'", "amount", "total", "total <= 100 and status = 'amount'"},
		{"or = 1 or x = 2", "or", "flag", "flag = 1 or x = 2"},
		{"a = 'it''s' or b != null", "b", "c", "a = 'it''s' or c != null"},
		{"a = 1", "b", "c", "a = 1"},
	} {
		got, err := RenameExprColumn(c.in, c.old, c.new)
		if err != nil || got != c.want {
			t.Errorf("%q: %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	if _, err := RenameExprColumn("a = 'open", "a", "b"); err == nil {
		t.Error("an unterminated string was rewritten")
	}
}
