package sqldb

import (
	"context"
	"reflect"
	"slices"
	"testing"
)

const hostile = `we"ird; --name`

func setupPostgres(t *testing.T) (*Source, string, func(q string, args ...any)) {
	db := openService(t, Postgres, "LIMA_TEST_POSTGRES_DSN", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
	schema := randomName("lima_t_")
	s := mustQuote(t, Postgres, schema)
	exec := func(q string, args ...any) { t.Helper(); mustExec(t, db, q, args...) }
	exec("CREATE SCHEMA " + s)
	t.Cleanup(func() { mustExec(t, db, "DROP SCHEMA "+s+" CASCADE") })
	exec(`CREATE TABLE ` + s + `.orders (
		id bigint PRIMARY KEY, amount numeric(18,3), at timestamptz, d date, doc jsonb, blob bytea,
		u uuid, ok boolean, note text, tags text[], updated_at timestamp, wide numeric, p point)`)
	exec(`CREATE INDEX ON ` + s + `.orders (updated_at)`)
	exec(`INSERT INTO ` + s + `.orders VALUES
		(1, 12.345, '2024-03-01 10:20:30.123456+09', '2024-02-29', '{"b": 1, "a": [1, 2]}', '\x00ff41',
		 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', true, 'héllo', '{x,"y z"}', '2024-03-01 00:00:00', 123456789012345678901234567890.123456789, '(1,2)'),
		(2, -0.5, NULL, NULL, NULL, NULL, NULL, false, NULL, NULL, '2024-01-01 12:00:00.5', NULL, NULL),
		(3, 100000000000000.001, '1999-12-31 23:59:59Z', '0001-01-01', '[]', '', 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A12', NULL, '', '{}', '2024-06-01 00:00:00', 0, NULL)`)
	exec(`CREATE TABLE ` + s + `.` + mustQuote(t, Postgres, hostile) + ` (` + mustQuote(t, Postgres, hostile) + ` int PRIMARY KEY, "/* c */" text)`)
	exec(`INSERT INTO `+s+`.`+mustQuote(t, Postgres, hostile)+` VALUES ($1, $2), (2, $3)`, 1, "x'); DROP TABLE orders; --", nil)
	exec(`ANALYZE ` + s + `.orders`)
	src, err := New(Postgres, db, []Table{{schema, "orders"}, {schema, hostile}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return src, schema, exec
}

func TestPostgresReadCanonical(t *testing.T) {
	src, schema, _ := setupPostgres(t)
	r, rows, count, sums := readTable(t, src, schema+".orders", nil)
	wantCols := []string{"id", "amount", "at", "d", "doc", "blob", "u", "ok", "note", "tags", "updated_at", "wide"}
	if !reflect.DeepEqual(r.Columns(), wantCols) {
		t.Fatalf("Columns = %q, want %q (point left out)", r.Columns(), wantCols)
	}
	if f := r.Findings(); len(f) != 1 || f[0].Column != "p" || f[0].Table != schema+".orders" {
		t.Errorf("Findings = %+v, want one for column p", f)
	}
	checkRows(t, r, rows, [][]string{
		{"1", "12.345", "2024-03-01T01:20:30.123456Z", "2024-02-29", `{"a": [1, 2], "b": 1}`, "\x00\xffA",
			"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "true", "héllo", `["x","y z"]`, "2024-03-01T00:00:00.000000",
			"123456789012345678901234567890.123456789"},
		{"2", "-0.500", null, null, null, null, null, "false", null, null, "2024-01-01T12:00:00.500000", null},
		{"3", "100000000000000.001", "1999-12-31T23:59:59.000000Z", "0001-01-01", "[]", "",
			"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12", null, "", "[]", "2024-06-01T00:00:00.000000", "0"},
	})
	if count != 3 || !reflect.DeepEqual(sums, map[string]string{"id": "6", "amount": "100000000000011.846"}) {
		t.Errorf("Totals = %d, %v; want 3, id 6, amount 100000000000011.846", count, sums)
	}
}

func TestPostgresDiscover(t *testing.T) {
	src, schema, _ := setupPostgres(t)
	tables, err := Discover(context.Background(), Postgres, src.db, schema)
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 2 {
		t.Fatalf("discovered %d tables, want 2", len(tables))
	}
	o := findTable(t, tables, schema, "orders")
	if !reflect.DeepEqual(o.PrimaryKey, []string{"id"}) || o.RowEstimate != 3 {
		t.Errorf("orders: PK %q, estimate %d; want [id], 3", o.PrimaryKey, o.RowEstimate)
	}
	if !slices.ContainsFunc(o.Indexes, func(ix IndexInfo) bool { return reflect.DeepEqual(ix.Columns, []string{"updated_at"}) && !ix.Unique }) {
		t.Errorf("orders: no index on updated_at in %+v", o.Indexes)
	}
	if o.Watermark != "updated_at" {
		t.Errorf("watermark = %q (%s), want updated_at", o.Watermark, o.WatermarkReason)
	}
	want := map[string]string{"id": "long", "amount": "decimal(18,3)", "at": "timestamptz", "d": "date", "doc": "string",
		"blob": "binary", "u": "string", "ok": "boolean", "note": "string", "tags": "string", "updated_at": "timestamp",
		"wide": "string", "p": ""}
	if got := planTypes(o); !reflect.DeepEqual(got, want) {
		t.Errorf("plan types:\n got %v\nwant %v", got, want)
	}
	h := findTable(t, tables, schema, hostile)
	if !reflect.DeepEqual(h.PrimaryKey, []string{hostile}) || h.Watermark != hostile {
		t.Errorf("hostile table: PK %q watermark %q", h.PrimaryKey, h.Watermark)
	}
}

func TestPostgresHostileNames(t *testing.T) {
	src, schema, _ := setupPostgres(t)
	r, rows, count, sums := readTable(t, src, schema+"."+hostile, nil)
	if !reflect.DeepEqual(r.Columns(), []string{hostile, "/* c */"}) {
		t.Fatalf("Columns = %q", r.Columns())
	}
	checkRows(t, r, rows, [][]string{{"1", "x'); DROP TABLE orders; --"}, {"2", null}})
	if count != 2 || sums[hostile] != "3" {
		t.Errorf("Totals = %d %v", count, sums)
	}
}

func TestPostgresSnapshot(t *testing.T) {
	src, schema, exec := setupPostgres(t)
	name := schema + ".orders"
	_, rows, count, _ := readTable(t, src, name, func() {
		exec(`INSERT INTO ` + mustQuote(t, Postgres, schema, "orders") + ` (id, amount) VALUES (4, 1)`)
	})
	if len(rows) != 3 || count != 3 {
		t.Fatalf("read %d rows, totals %d; want 3 and 3: the insert after Open must not be visible", len(rows), count)
	}
	if _, rows, _, _ = readTable(t, src, name, nil); len(rows) != 4 {
		t.Fatalf("a new reader reads %d rows, want 4", len(rows))
	}
	checkLifecycle(t, src, name)
}

func TestPostgresRange(t *testing.T) {
	src, schema, _ := setupPostgres(t)
	name := schema + ".orders"
	rs, err := New(Postgres, src.db, src.tables, map[string]ReadRange{name: {Column: "updated_at", After: "2024-02-01T00:00:00"}})
	if err != nil {
		t.Fatal(err)
	}
	_, rows, count, sums := readTable(t, rs, name, nil)
	var ids []string
	for _, r := range rows {
		ids = append(ids, r.Values[0])
	}
	if !reflect.DeepEqual(ids, []string{"1", "3"}) || count != 2 || sums["id"] != "4" || sums["amount"] != "100000000000012.346" {
		t.Errorf("range read ids %q, totals %d %v; want [1 3], 2, id 4, amount 100000000000012.346", ids, count, sums)
	}
}
