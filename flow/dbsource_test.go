package flow_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/lima-lake/lima/engine/source/sqldb"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/internal/dbtest"
	"github.com/lima-lake/lima/reports"
)

// serviceDSN returns the DSN of a test server, or skips loudly (fails
// under CI or LIMA_REQUIRE_SERVICES=1) when it is unreachable.
func serviceDSN(t *testing.T, d sqldb.Dialect, env, def string) (string, *sql.DB) {
	t.Helper()
	return dbtest.Service(t, d, env, def)
}

func randomName(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

func dbExec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.ExecContext(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// check returns the reconciliation check of a table report by name.
func check(t *testing.T, tr reports.TableReport, name string) gates.Finding {
	t.Helper()
	for _, c := range tr.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %q in %+v", name, tr.Checks)
	return gates.Finding{}
}

// noSecretInReports asserts that the DSN appears in neither report file.
func noSecretInReports(t *testing.T, out *flow.Outcome, dsn string) {
	t.Helper()
	dir := filepath.Dir(out.ReportPath)
	for _, f := range []string{"report.json", "report.md"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), dsn) {
			t.Errorf("%s contains the DSN", f)
		}
	}
}

func TestPostgresSourceLoadsAndReconciles(t *testing.T) {
	dsn, db := serviceDSN(t, sqldb.Postgres, "LIMA_TEST_POSTGRES_DSN", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
	schema := randomName("lima_flow_")
	dbExec(t, db, `CREATE SCHEMA `+schema)
	t.Cleanup(func() { db.Exec(`DROP SCHEMA ` + schema + ` CASCADE`) })
	dbExec(t, db, `CREATE TABLE `+schema+`.orders (
		id bigint PRIMARY KEY, amount numeric(18,3), qty integer, placed_at timestamptz, ship_date date,
		attrs jsonb, blob bytea, paid boolean, note text, code text NOT NULL, loc point)`)
	// Rows 1..999 carry values; row 1000 is NULL in every nullable column.
	// Every 100th code is an empty string: SQL NULL is the only null, so
	// it must load as "" into the required column, not be held back.
	dbExec(t, db, `INSERT INTO `+schema+`.orders
		SELECT i, i * 1.001, i, timestamptz '2026-01-01 00:00:00+00' + i * interval '1 hour', date '2026-01-01' + i,
		       jsonb_build_object('i', i), decode(lpad(to_hex(i), 4, '0'), 'hex'), i % 2 = 0, 'note ' || i,
		       CASE WHEN i % 100 = 0 THEN '' ELSE 'C' || i END, point(i, i)
		FROM generate_series(1, 999) AS i`)
	dbExec(t, db, `INSERT INTO `+schema+`.orders (id, code) VALUES (1000, 'C1000')`)

	t.Setenv("LIMA_TEST_SOURCE_DSN", dsn)
	ws, p := workspace(t, nil, `schema_version: 1
platform: {prefix: pgsrc}
sources:
  erp: {kind: postgres, dsn_env: LIMA_TEST_SOURCE_DSN}
tables:
  orders:
    source: {name: erp, table: orders, schema: `+schema+`}
    load: {keys: [id]}
    checks:
      - {rule: not_null, column: code}
      - {rule: range, column: qty, max: 998}
`)
	out := runOnce(t, ws, p, flow.RunOptions{})
	res := out.Result.Tables[0]
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	// Row 999 (qty 999 > 998) is held back; the other 999 rows load.
	if res.RowsRead != 1000 || res.RowsLoaded != 999 || res.RowsQuarantined != 1 {
		t.Fatalf("read %d loaded %d held %d, want 1000/999/1", res.RowsRead, res.RowsLoaded, res.RowsQuarantined)
	}
	types := map[string]string{}
	for i, c := range res.Columns {
		types[c] = res.Types[i].String()
	}
	for c, want := range map[string]string{"id": "long", "amount": "decimal(18,3)", "qty": "int", "placed_at": "timestamptz",
		"ship_date": "date", "attrs": "string", "blob": "binary", "paid": "boolean", "note": "string", "code": "string"} {
		if types[c] != want {
			t.Errorf("column %s: type %q, want %q", c, types[c], want)
		}
	}
	if _, ok := types["loc"]; ok {
		t.Error("the point column was not left out")
	}
	tr := tableReport(t, out.Report, "orders")
	if tr.Reconciliation != gates.Pass {
		for _, s := range tr.Samples {
			if !s.Match {
				t.Logf("sample %s: source %q lake %q", s.Locator, s.Source, s.Lake)
			}
		}
		t.Fatalf("gate 4: %s: %+v", tr.Reconciliation, tr.Checks)
	}
	if f := check(t, tr, "column left out"); !strings.Contains(f.Detail, "loc (point)") {
		t.Errorf("finding: %s", f.Detail)
	}
	// sum(i * 1.001) for i = 1..999 less row 999 = 1.001 × (499500 − 999)
	// = 1.001 × 498501 = 498999.501 in the lake; the source sums all 999
	// values: 1.001 × 499500 = 499999.500, the difference being row 999's
	// 999.999, held back.
	if ct := tr.ControlTotals["amount"]; ct.Target != "498999.501" || ct.Variance != "0.000" {
		t.Errorf("lake sum(amount): %+v, want 498999.501", ct)
	}
	if f := check(t, tr, "source count"); f.Status != gates.Pass || !strings.Contains(f.Detail, "counted 1000 rows") {
		t.Errorf("source count: %+v", f)
	}
	f := check(t, tr, "source sum(amount)")
	if f.Status != gates.Pass || !strings.Contains(f.Detail, "source 499999.500") || !strings.Contains(f.Detail, "held back 999.999") ||
		!strings.Contains(f.Detail, "variance 0.000 (exact)") {
		t.Errorf("source sum(amount): %+v", f)
	}
	// sum(qty) = 499500 at the source; 499500 − 999 = 498501 in the lake.
	if f := check(t, tr, "source sum(qty)"); f.Status != gates.Pass || !strings.Contains(f.Detail, "source 499500") || !strings.Contains(f.Detail, "lake 498501") {
		t.Errorf("source sum(qty): %+v", f)
	}
	noSecretInReports(t, out, dsn)
}

func TestMySQLSourceLoadsAndReconciles(t *testing.T) {
	dsn, db := serviceDSN(t, sqldb.MySQL, "LIMA_TEST_MYSQL_DSN", "root@tcp(127.0.0.1:3306)/test")
	name := randomName("lima_flow_")
	dbExec(t, db, "CREATE DATABASE "+name)
	t.Cleanup(func() { db.Exec("DROP DATABASE " + name) })
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DBName = name
	srcDSN := cfg.FormatDSN()
	dbExec(t, db, "CREATE TABLE "+name+`.orders (id bigint PRIMARY KEY, amount decimal(18,3), qty int, placed_at datetime(6),
		ship_date date, paid tinyint(1), blob_col blob, note text, code varchar(20) NOT NULL)`)
	var q strings.Builder
	q.WriteString("INSERT INTO " + name + ".orders VALUES ")
	for i := 1; i <= 99; i++ {
		if i > 1 {
			q.WriteString(", ")
		}
		code := fmt.Sprintf("'C%d'", i)
		if i%10 == 0 {
			code = "''"
		}
		fmt.Fprintf(&q, "(%d, %d * 1.001, %d, TIMESTAMP'2026-01-01 00:00:00' + INTERVAL %d HOUR, DATE'2026-01-01' + INTERVAL %d DAY, %d, X'%04x', 'n%d', %s)",
			i, i, i, i, i, i%2, i, i, code)
	}
	dbExec(t, db, q.String())
	dbExec(t, db, "INSERT INTO "+name+".orders (id, code) VALUES (100, 'C100')")

	t.Setenv("LIMA_TEST_SOURCE_DSN", srcDSN)
	ws, p := workspace(t, nil, `schema_version: 1
platform: {prefix: mysrc}
sources:
  erp: {kind: mysql, dsn_env: LIMA_TEST_SOURCE_DSN}
tables:
  orders:
    source: {name: erp, table: orders}
    load: {keys: [id]}
    checks: [{rule: not_null, column: code}]
`)
	out := runOnce(t, ws, p, flow.RunOptions{})
	res := out.Result.Tables[0]
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if res.RowsRead != 100 || res.RowsLoaded != 100 {
		t.Fatalf("read %d loaded %d, want 100/100", res.RowsRead, res.RowsLoaded)
	}
	tr := tableReport(t, out.Report, "orders")
	if tr.Reconciliation != gates.Pass {
		t.Fatalf("gate 4: %s: %+v", tr.Reconciliation, tr.Checks)
	}
	// 1.001 × (1 + … + 99) = 1.001 × 4950 = 4954.950.
	if ct := tr.ControlTotals["amount"]; ct.Target != "4954.950" {
		t.Errorf("lake sum(amount): %+v, want 4954.950", ct)
	}
	if f := check(t, tr, "source count"); f.Status != gates.Pass || !strings.Contains(f.Detail, "counted 100 rows") {
		t.Errorf("source count: %+v", f)
	}
	if f := check(t, tr, "source sum(amount)"); f.Status != gates.Pass || !strings.Contains(f.Detail, "source 4954.950") {
		t.Errorf("source sum(amount): %+v", f)
	}
	if f := check(t, tr, "source sum(qty)"); f.Status != gates.Pass || !strings.Contains(f.Detail, "source 4950") {
		t.Errorf("source sum(qty): %+v", f)
	}
	noSecretInReports(t, out, srcDSN)
}

func TestSQLiteSourceLoadsAndReconciles(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "erp.db")
	db, err := sql.Open("sqlite", file)
	if err != nil {
		t.Fatal(err)
	}
	dbExec(t, db, `CREATE TABLE orders (id INTEGER PRIMARY KEY, qty INTEGER, amount DECIMAL(10,2), note TEXT, day DATE)`)
	for i := 1; i <= 50; i++ {
		dbExec(t, db, `INSERT INTO orders VALUES (?, ?, ?, ?, ?)`, i, i, float64(i)*0.25, fmt.Sprintf("n%d", i), fmt.Sprintf("2026-02-%02d", i%28+1))
	}
	dbExec(t, db, `INSERT INTO orders (id) VALUES (51)`)
	db.Close()

	ws, p := workspace(t, nil, `schema_version: 1
platform: {prefix: litesrc}
sources:
  erp: {kind: sqlite, path: `+file+`}
tables:
  orders:
    source: {name: erp, table: orders}
    load: {keys: [id]}
`)
	out := runOnce(t, ws, p, flow.RunOptions{})
	res := out.Result.Tables[0]
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if res.RowsRead != 51 || res.RowsLoaded != 51 {
		t.Fatalf("read %d loaded %d, want 51/51", res.RowsRead, res.RowsLoaded)
	}
	tr := tableReport(t, out.Report, "orders")
	if tr.Reconciliation != gates.Pass {
		t.Fatalf("gate 4: %s: %+v", tr.Reconciliation, tr.Checks)
	}
	// 0.25 × (1 + … + 50) = 0.25 × 1275 = 318.75; qty: 1275.
	if ct := tr.ControlTotals["amount"]; ct.Target != "318.75" {
		t.Errorf("lake sum(amount): %+v, want 318.75", ct)
	}
	if f := check(t, tr, "source count"); f.Status != gates.Pass {
		t.Errorf("source count: %+v", f)
	}
	if f := check(t, tr, "source sum(qty)"); f.Status != gates.Pass || !strings.Contains(f.Detail, "source 1275") {
		t.Errorf("source sum(qty): %+v", f)
	}
	if f := check(t, tr, "source sum(amount)"); f.Status == gates.Fail {
		t.Errorf("source sum(amount): %+v", f)
	}
}
