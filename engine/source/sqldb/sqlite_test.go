package sqldb

import (
	"context"
	"database/sql"
	"path/filepath"
	"reflect"
	"testing"
)

// setupSQLite writes a WAL database in a temp dir with a read-write handle
// and returns a Source over a read-only handle (Open).
func setupSQLite(t *testing.T) (*Source, func(q string, args ...any)) {
	file := filepath.Join(t.TempDir(), "src.db")
	rw, err := sql.Open("sqlite", file)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rw.Close() })
	exec := func(q string, args ...any) { t.Helper(); mustExec(t, rw, q, args...) }
	exec(`PRAGMA journal_mode = WAL`)
	exec(`CREATE TABLE orders (id INTEGER PRIMARY KEY, amount DECIMAL(18,3), at TIMESTAMPTZ, d DATE, doc TEXT, blob BLOB,
		ok BOOLEAN, note TEXT, updated_at DATETIME, f REAL, anything)`)
	exec(`CREATE INDEX orders_updated ON orders (updated_at)`)
	exec(`INSERT INTO orders VALUES
		(1, 12.345, '2024-03-01T01:20:30.123456Z', '2024-02-29', '{"b": 1}', x'00ff41', 1, 'héllo', '2024-03-01 00:00:00', 0.1, 'a'),
		(2, -0.5, NULL, NULL, NULL, NULL, 0, NULL, '2024-01-01 12:00:00.5', NULL, NULL),
		(3, 7, '1999-12-31T23:59:59+09:00', '1000-01-01', '[]', x'', NULL, '', '2024-06-01 00:00:00', -2.5, 42)`)
	exec(`CREATE TABLE ` + mustQuote(t, SQLite, hostile) + ` (` + mustQuote(t, SQLite, hostile) + ` INTEGER PRIMARY KEY, "/* c */" TEXT)`)
	exec(`INSERT INTO `+mustQuote(t, SQLite, hostile)+` VALUES (?, ?), (2, ?)`, 1, "x'); DROP TABLE orders; --", nil)
	ro, err := Open(SQLite, file)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ro.Close() })
	src, err := New(SQLite, ro, []Table{{"main", "orders"}, {"main", hostile}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return src, exec
}

func TestSQLiteReadCanonical(t *testing.T) {
	src, _ := setupSQLite(t)
	r, rows, count, sums := readTable(t, src, "main.orders", nil)
	checkRows(t, r, rows, [][]string{
		{"1", "12.345", "2024-03-01T01:20:30.123456Z", "2024-02-29", `{"b": 1}`, "\x00\xffA", "true", "héllo", "2024-03-01T00:00:00.000000", "0.1", "a"},
		{"2", "-0.500", null, null, null, null, "false", null, "2024-01-01T12:00:00.500000", null, null},
		{"3", "7.000", "1999-12-31T14:59:59.000000Z", "1000-01-01", "[]", "", null, "", "2024-06-01T00:00:00.000000", "-2.5", "42"},
	})
	// SQLite sums a REAL-stored decimal in floating point: the sum is its text.
	if count != 3 || sums["id"] != "6" || sums["amount"] != "18.845" {
		t.Errorf("Totals = %d, %v; want 3, id 6, amount 18.845", count, sums)
	}
}

func TestSQLiteDiscover(t *testing.T) {
	src, _ := setupSQLite(t)
	tables, err := Discover(context.Background(), SQLite, src.db)
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 2 {
		t.Fatalf("discovered %d tables, want 2", len(tables))
	}
	o := findTable(t, tables, "main", "orders")
	if !reflect.DeepEqual(o.PrimaryKey, []string{"id"}) || o.RowEstimate != 3 || o.Watermark != "updated_at" {
		t.Errorf("orders: PK %q, estimate %d, watermark %q", o.PrimaryKey, o.RowEstimate, o.Watermark)
	}
	want := map[string]string{"id": "long", "amount": "decimal(18,3)", "at": "timestamptz", "d": "date", "doc": "string",
		"blob": "binary", "ok": "boolean", "note": "string", "updated_at": "timestamp", "f": "double", "anything": "string"}
	if got := planTypes(o); !reflect.DeepEqual(got, want) {
		t.Errorf("plan types:\n got %v\nwant %v", got, want)
	}
	h := findTable(t, tables, "main", hostile)
	if !reflect.DeepEqual(h.PrimaryKey, []string{hostile}) || h.Watermark != hostile || h.RowEstimate != 2 {
		t.Errorf("hostile: PK %q watermark %q estimate %d", h.PrimaryKey, h.Watermark, h.RowEstimate)
	}
}

func TestSQLiteHostileNames(t *testing.T) {
	src, _ := setupSQLite(t)
	r, rows, count, sums := readTable(t, src, "main."+hostile, nil)
	checkRows(t, r, rows, [][]string{{"1", "x'); DROP TABLE orders; --"}, {"2", null}})
	if count != 2 || sums[hostile] != "3" {
		t.Errorf("Totals = %d %v", count, sums)
	}
}

func TestSQLiteSnapshot(t *testing.T) {
	src, exec := setupSQLite(t)
	_, rows, count, _ := readTable(t, src, "main.orders", func() { exec(`INSERT INTO orders (id, amount) VALUES (4, 1)`) })
	if len(rows) != 3 || count != 3 {
		t.Fatalf("read %d rows, totals %d; want 3 and 3", len(rows), count)
	}
	if _, rows, _, _ = readTable(t, src, "main.orders", nil); len(rows) != 4 {
		t.Fatalf("a new reader reads %d rows, want 4", len(rows))
	}
	checkLifecycle(t, src, "main.orders")
}

func TestSQLiteRange(t *testing.T) {
	src, _ := setupSQLite(t)
	rs, err := New(SQLite, src.db, src.tables, map[string]ReadRange{"main.orders": {Column: "updated_at", After: "2024-02-01"}})
	if err != nil {
		t.Fatal(err)
	}
	_, rows, count, _ := readTable(t, rs, "main.orders", nil)
	if len(rows) != 2 || rows[0].Values[0] != "1" || rows[1].Values[0] != "3" || count != 2 {
		t.Errorf("range read %d rows (count %d): %+v", len(rows), count, rows)
	}
}
