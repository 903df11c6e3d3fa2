package flow_test

import (
	"context"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/lima-lake/lima/engine/source/sqldb"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
)

func finding(t *testing.T, fs []gates.Finding, name string) gates.Finding {
	t.Helper()
	for _, f := range fs {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no finding %q in %+v", name, fs)
	return gates.Finding{}
}

// TestGate2ChecksPostgresSource: gate 2 connects, names the server's
// version (as the server itself reports it), reads a row of each table,
// and fails with a fix for a missing table, a user without SELECT, an
// unset DSN variable and an unreachable server — never showing the
// password.
func TestGate2ChecksPostgresSource(t *testing.T) {
	dsn, db := serviceDSN(t, sqldb.Postgres, "LIMA_TEST_POSTGRES_DSN", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
	schema := randomName("lima_g2_")
	role := randomName("lima_g2r_")
	dbExec(t, db, `CREATE SCHEMA `+schema)
	dbExec(t, db, `CREATE ROLE `+role+` LOGIN`)
	t.Cleanup(func() {
		db.Exec(`DROP SCHEMA ` + schema + ` CASCADE`)
		db.Exec(`DROP ROLE ` + role)
	})
	dbExec(t, db, `CREATE TABLE `+schema+`.orders (id bigint PRIMARY KEY, amount numeric(10,2), loc point)`)
	dbExec(t, db, `INSERT INTO `+schema+`.orders VALUES (1, 2.50, point(1,2))`)
	dbExec(t, db, `GRANT USAGE ON SCHEMA `+schema+` TO `+role)
	var version string
	if err := db.QueryRow(`SHOW server_version`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LIMA_TEST_SOURCE_DSN", dsn)
	t.Setenv("LIMA_TEST_NOPRIV_DSN", strings.Replace(dsn, "postgres@", role+"@", 1))
	t.Setenv("LIMA_TEST_DOWN_DSN", "postgres://lima:s3cretpw@127.0.0.1:1/db?sslmode=disable&connect_timeout=2")
	ws, p := workspace(t, nil, `schema_version: 1
platform: {prefix: gtwo}
sources:
  erp: {kind: postgres, dsn_env: LIMA_TEST_SOURCE_DSN}
  nopriv: {kind: postgres, dsn_env: LIMA_TEST_NOPRIV_DSN}
  down: {kind: postgres, dsn_env: LIMA_TEST_DOWN_DSN}
  unset: {kind: postgres, dsn_env: LIMA_TEST_UNSET_DSN_VARIABLE}
tables:
  orders: {source: {name: erp, table: orders, schema: `+schema+`}}
  missing: {source: {name: erp, table: no_such_table, schema: `+schema+`}}
  secret: {source: {name: nopriv, table: orders, schema: `+schema+`}}
  gone: {source: {name: down, table: orders}}
`)
	fs := flow.Preconditions(context.Background(), ws, p)
	if f := finding(t, fs, "source erp"); f.Status != gates.Pass || !strings.Contains(f.Detail, "PostgreSQL "+version) || !strings.Contains(f.Detail, "as postgres") {
		t.Errorf("source erp: %+v (server says %s)", f, version)
	}
	if f := finding(t, fs, "table orders"); f.Status != gates.Warn || !strings.Contains(f.Detail, "read one row") ||
		!strings.Contains(f.Detail, "primary key (id)") || !strings.Contains(f.Detail, "loc (point)") {
		t.Errorf("table orders: %+v", f)
	}
	if f := finding(t, fs, "table missing"); f.Status != gates.Fail || !strings.Contains(f.Fix, "exists") {
		t.Errorf("table missing: %+v", f)
	}
	if f := finding(t, fs, "source nopriv"); f.Status != gates.Pass || !strings.Contains(f.Detail, "as "+role) {
		t.Errorf("source nopriv: %+v", f)
	}
	if f := finding(t, fs, "table secret"); f.Status != gates.Fail || !strings.Contains(f.Detail, "permission denied") || !strings.Contains(f.Fix, "GRANT SELECT") {
		t.Errorf("table secret: %+v", f)
	}
	if f := finding(t, fs, "source unset"); f.Status != gates.Fail || !strings.Contains(f.Fix, "export the DSN") {
		t.Errorf("source unset: %+v", f)
	}
	down := finding(t, fs, "source down")
	if down.Status != gates.Fail || down.Fix == "" {
		t.Errorf("source down: %+v", down)
	}
	if f := finding(t, fs, "table gone"); f.Status != gates.Skip {
		t.Errorf("table gone: %+v", f)
	}
	for _, f := range fs {
		if strings.Contains(f.Detail+f.Fix, "s3cretpw") || strings.Contains(f.Detail+f.Fix, dsn) {
			t.Errorf("finding %s shows the DSN or its password: %+v", f.Name, f)
		}
	}
}

func TestGate2ChecksMariaDBSource(t *testing.T) {
	dsn, db := serviceDSN(t, sqldb.MySQL, "LIMA_TEST_MYSQL_DSN", "root@tcp(127.0.0.1:3306)/test")
	name := randomName("lima_g2_")
	dbExec(t, db, "CREATE DATABASE "+name)
	t.Cleanup(func() { db.Exec("DROP DATABASE " + name) })
	dbExec(t, db, "CREATE TABLE "+name+".orders (id bigint PRIMARY KEY, amount decimal(10,2))")
	var version string
	if err := db.QueryRow("SELECT VERSION()").Scan(&version); err != nil {
		t.Fatal(err)
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DBName = name
	t.Setenv("LIMA_TEST_SOURCE_DSN", cfg.FormatDSN())
	ws, p := workspace(t, nil, `schema_version: 1
platform: {prefix: gtwom}
sources:
  erp: {kind: mysql, dsn_env: LIMA_TEST_SOURCE_DSN}
tables:
  orders: {source: {name: erp, table: orders}}
`)
	fs := flow.Preconditions(context.Background(), ws, p)
	if f := finding(t, fs, "source erp"); f.Status != gates.Pass || !strings.Contains(f.Detail, version) || !strings.Contains(f.Detail, "database "+name) {
		t.Errorf("source erp: %+v (server says %s)", f, version)
	}
	if f := finding(t, fs, "table orders"); f.Status != gates.Pass || !strings.Contains(f.Detail, "empty: no row to read") {
		t.Errorf("table orders: %+v", f)
	}
}
