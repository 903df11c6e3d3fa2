package ledger

import "testing"

func TestMigrationsListed(t *testing.T) {
	for i, m := range migrations {
		if m.Version != i+1 || m.Name == "" || len(m.SQLite) == 0 || len(m.Postgres) == 0 {
			t.Errorf("migration %d: version %d, name %q, %d SQLite and %d PostgreSQL statements", i, m.Version, m.Name, len(m.SQLite), len(m.Postgres))
		}
	}
	if SchemaVersion() != len(migrations) {
		t.Errorf("SchemaVersion() = %d", SchemaVersion())
	}
}

func TestDollarParams(t *testing.T) {
	for in, want := range map[string]string{
		`a = ? AND b = ?`:              `a = $1 AND b = $2`,
		`x = '?' AND y = ? AND "?"`:    `x = '?' AND y = $1 AND "?"`,
		`x = 'a?b' AND "c?" = ?`:       `x = 'a?b' AND "c?" = $1`,
		`s IN ('open', 'fixed') AND ?`: `s IN ('open', 'fixed') AND $1`,
	} {
		if got := dollarParams(in); got != want {
			t.Errorf("dollarParams(%q) = %q, want %q", in, got, want)
		}
	}
	w := &rewriter{schema: `my "s"`, dollar: true, forUpdate: "FOR UPDATE"}
	got := w.sql(`SELECT 1 FROM {exceptions} WHERE id = ? {for_update}; CREATE INDEX {exceptions_c_due} ON {exceptions} (x)`)
	want := `SELECT 1 FROM "my ""s"""."exceptions" WHERE id = $1 FOR UPDATE; CREATE INDEX "exceptions_c_due" ON "my ""s"""."exceptions" (x)`
	if got != want {
		t.Errorf("rewrite:\n got %s\nwant %s", got, want)
	}
}
