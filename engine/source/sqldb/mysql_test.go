package sqldb

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var big300 = "-15" + strings.Repeat("0", 299)

func setupMySQL(t *testing.T) (*Source, string, func(q string, args ...any)) {
	db := openService(t, MySQL, "LIMA_TEST_MYSQL_DSN", "root@tcp(127.0.0.1:3306)/test")
	schema := randomName("lima_t_")
	s := mustQuote(t, MySQL, schema)
	exec := func(q string, args ...any) { t.Helper(); mustExec(t, db, q, args...) }
	exec("CREATE DATABASE " + s)
	t.Cleanup(func() { mustExec(t, db, "DROP DATABASE "+s) })
	exec(`CREATE TABLE ` + s + `.orders (
		id bigint PRIMARY KEY, amount decimal(18,3), at timestamp(6) NULL, d date, doc json, ` + "`blob`" + ` varbinary(10),
		u char(36), ok tinyint(1), note text, big bigint unsigned, updated_at datetime(6), f double, t time(6), g point NULL,
		INDEX (updated_at)) ENGINE=InnoDB`)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	mustExec(t, conn, "SET time_zone = '+09:00'")
	mustExec(t, conn, `INSERT INTO `+s+`.orders VALUES
		(1, 12.345, '2024-03-01 10:20:30.123456', '2024-02-29', '{"b": 1}', x'00ff41', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 1, 'héllo',
		 18446744073709551615, '2024-03-01 00:00:00', 0.1, '-838:59:59', POINT(1, 2)),
		(2, -0.5, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, '2024-01-01 12:00:00.5', NULL, NULL, NULL),
		(3, 100000000000000.001, '1999-12-31 23:59:59', '1000-01-01', '[]', '', 'x', NULL, '', 0, '2024-06-01 00:00:00', -1.5e300, '01:02:03.5', NULL)`)
	exec(`CREATE TABLE ` + s + `.` + mustQuote(t, MySQL, hostile) + ` (` + mustQuote(t, MySQL, hostile) + " int PRIMARY KEY, `/* c */` text, `a``b` int)")
	exec(`INSERT INTO `+s+`.`+mustQuote(t, MySQL, hostile)+` VALUES (?, ?, 5), (2, ?, NULL)`, 1, "x'); DROP TABLE orders; --", nil)
	exec(`ANALYZE TABLE ` + s + `.orders`)
	src, err := New(MySQL, db, []Table{{schema, "orders"}, {schema, hostile}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return src, schema, exec
}

func TestMySQLReadCanonical(t *testing.T) {
	src, schema, _ := setupMySQL(t)
	r, rows, count, sums := readTable(t, src, schema+".orders", nil)
	wantCols := []string{"id", "amount", "at", "d", "doc", "blob", "u", "ok", "note", "big", "updated_at", "f", "t"}
	if !reflect.DeepEqual(r.Columns(), wantCols) {
		t.Fatalf("Columns = %q, want %q (point left out)", r.Columns(), wantCols)
	}
	if f := r.Findings(); len(f) != 1 || f[0].Column != "g" {
		t.Errorf("Findings = %+v, want one for column g", f)
	}
	checkRows(t, r, rows, [][]string{
		{"1", "12.345", "2024-03-01T01:20:30.123456Z", "2024-02-29", `{"b": 1}`, "\x00\xffA",
			"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "true", "héllo", "18446744073709551615", "2024-03-01T00:00:00.000000", "0.1", "-838:59:59.000000"},
		{"2", "-0.500", null, null, null, null, null, "false", null, null, "2024-01-01T12:00:00.500000", null, null},
		{"3", "100000000000000.001", "1999-12-31T14:59:59.000000Z", "1000-01-01", "[]", "", "x", null, "", "0",
			"2024-06-01T00:00:00.000000", big300, "01:02:03.500000"},
	})
	want := map[string]string{"id": "6", "amount": "100000000000011.846", "big": "18446744073709551615"}
	if count != 3 || !reflect.DeepEqual(sums, want) {
		t.Errorf("Totals = %d, %v; want 3, %v", count, sums, want)
	}
}

func TestMySQLDiscover(t *testing.T) {
	src, schema, _ := setupMySQL(t)
	tables, err := Discover(context.Background(), MySQL, src.db, schema)
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
		"blob": "binary", "u": "string", "ok": "boolean", "note": "string", "big": "decimal(20,0)", "updated_at": "timestamp",
		"f": "double", "t": "string", "g": ""}
	if got := planTypes(o); !reflect.DeepEqual(got, want) {
		t.Errorf("plan types:\n got %v\nwant %v", got, want)
	}
}

func TestMySQLHostileNames(t *testing.T) {
	src, schema, _ := setupMySQL(t)
	r, rows, count, sums := readTable(t, src, schema+"."+hostile, nil)
	if !reflect.DeepEqual(r.Columns(), []string{hostile, "/* c */", "a`b"}) {
		t.Fatalf("Columns = %q", r.Columns())
	}
	checkRows(t, r, rows, [][]string{{"1", "x'); DROP TABLE orders; --", "5"}, {"2", null, null}})
	if count != 2 || sums[hostile] != "3" || sums["a`b"] != "5" {
		t.Errorf("Totals = %d %v", count, sums)
	}
}

func TestMySQLSnapshot(t *testing.T) {
	src, schema, exec := setupMySQL(t)
	name := schema + ".orders"
	_, rows, count, _ := readTable(t, src, name, func() {
		exec(`INSERT INTO ` + mustQuote(t, MySQL, schema, "orders") + ` (id, amount) VALUES (4, 1)`)
	})
	if len(rows) != 3 || count != 3 {
		t.Fatalf("read %d rows, totals %d; want 3 and 3: the insert after Open must not be visible", len(rows), count)
	}
	if _, rows, _, _ = readTable(t, src, name, nil); len(rows) != 4 {
		t.Fatalf("a new reader reads %d rows, want 4", len(rows))
	}
	checkLifecycle(t, src, name)
}

func TestMySQLRange(t *testing.T) {
	src, schema, _ := setupMySQL(t)
	name := schema + ".orders"
	rs, err := New(MySQL, src.db, src.tables, map[string]ReadRange{name: {Column: "updated_at", After: "2024-02-01 00:00:00"}})
	if err != nil {
		t.Fatal(err)
	}
	r, rows, count, sums := readTable(t, rs, name, nil)
	var ids []string
	for _, r := range rows {
		ids = append(ids, r.Values[0])
	}
	if !reflect.DeepEqual(ids, []string{"1", "3"}) || count != 2 || sums["amount"] != "100000000000012.346" {
		t.Errorf("range read ids %q, totals %d %v", ids, count, sums)
	}
	// With a bind parameter the driver uses the binary protocol: the texts
	// must not change.
	roundTrip(t, r.Columns(), r.PlanTypes(), rows)
	if len(rows) == 2 && (rows[0].Values[2] != "2024-03-01T01:20:30.123456Z" || rows[0].Values[7] != "true" || rows[1].Values[11] != big300) {
		t.Errorf("binary-protocol texts: %q / %q", rows[0].Values, rows[1].Values)
	}
}
