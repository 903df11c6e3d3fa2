package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/source/sqldb"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/reports"
)

// testDB connects to a loopback test server, or skips loudly (fails under
// CI or LIMA_REQUIRE_SERVICES=1) when it is unreachable.
func testDB(t *testing.T, d sqldb.Dialect, env, def string) (string, *sql.DB) {
	t.Helper()
	dsn := os.Getenv(env)
	if dsn == "" {
		dsn = def
	}
	db, err := sqldb.Open(d, dsn)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = db.PingContext(ctx)
		cancel()
		if err != nil {
			db.Close()
		}
	}
	if err != nil {
		if os.Getenv("CI") != "" || os.Getenv("LIMA_REQUIRE_SERVICES") == "1" {
			t.Fatalf("%s server unreachable (%s): %v", d, env, err)
		}
		t.Skipf("SKIPPING %s INTEGRATION TEST: server unreachable (%s): %v (set CI or LIMA_REQUIRE_SERVICES=1 to make this a failure; scripts/ensure-postgres.sh, scripts/ensure-mariadb.sh start servers)", d, env, err)
	}
	t.Cleanup(func() { db.Close() })
	return dsn, db
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func mustExec(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func queryString(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	var s string
	if err := db.QueryRow(q).Scan(&s); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return s
}

// proposeJSON runs propose --json: the proposed tables and findings.
func proposeJSON(t *testing.T, pp string) (map[string]*plan.Table, []gates.Finding) {
	t.Helper()
	code, out, errs := runCLI(t, "propose", "--plan", pp, "--json")
	if code != exitOK {
		t.Fatalf("propose --json: exit %d: %s", code, errs)
	}
	var got struct {
		Tables   map[string]*plan.Table `json:"tables"`
		Findings []gates.Finding        `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("propose --json: %v\n%s", err, out)
	}
	return got.Tables, got.Findings
}

func findingNamed(fs []gates.Finding, name string) (gates.Finding, bool) {
	for _, f := range fs {
		if f.Name == name {
			return f, true
		}
	}
	return gates.Finding{}, false
}

// TestInitFromPostgresProposeApproveRun is the path of a user who starts
// from a PostgreSQL database: init --source env:X, propose --write, both
// approvals, check, run; gate 4 passes and the lake's counts and sums are
// those the database computes.
func TestInitFromPostgresProposeApproveRun(t *testing.T) {
	noTTY(t)
	base, db := testDB(t, sqldb.Postgres, "LIMA_TEST_POSTGRES_DSN", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable")
	schema := "lima_init_" + randomSuffix()
	mustExec(t, db, `CREATE SCHEMA `+schema)
	t.Cleanup(func() { db.Exec(`DROP SCHEMA ` + schema + ` CASCADE`) })
	mustExec(t, db, `CREATE TABLE `+schema+`.orders (id bigint PRIMARY KEY, amount numeric(12,2) NOT NULL,
		updated_at timestamptz NOT NULL, attrs jsonb, loc point, note text)`)
	mustExec(t, db, `CREATE INDEX ON `+schema+`.orders (updated_at)`)
	mustExec(t, db, `INSERT INTO `+schema+`.orders
		SELECT i, (i * 7919 % 100000) / 100.0, timestamptz '2026-01-01 00:00:00+00' + i * interval '1 minute',
		       jsonb_build_object('i', i, 'tag', 'x' || i), point(i, -i), CASE WHEN i % 10 = 0 THEN NULL ELSE 'n' || i END
		FROM generate_series(1, 700) AS i`)
	// A table without a primary key (an indexed timestamp: a watermark
	// candidate that gate 3 must not use without a key).
	mustExec(t, db, `CREATE TABLE `+schema+`.events (seen_at timestamptz, kind text, qty integer)`)
	mustExec(t, db, `CREATE INDEX ON `+schema+`.events (seen_at)`)
	mustExec(t, db, `INSERT INTO `+schema+`.events
		SELECT timestamptz '2026-02-01 00:00:00+00' + (i % 50) * interval '1 hour', 'k' || (i % 3), i % 17
		FROM generate_series(1, 300) AS i`)

	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("LIMA_TEST_POSTGRES_DSN must be a URL here: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	dsn := u.String()
	t.Setenv("LIMA_PG_INIT_DSN", dsn)

	ws := t.TempDir()
	code, out, errs := call(t, cmdInit, "--source", "env:LIMA_PG_INIT_DSN", "--dir", ws, "--defaults")
	if code != exitOK {
		t.Fatalf("init: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "env:LIMA_PG_INIT_DSN: PostgreSQL ") || !strings.Contains(out, "(kind postgres), 2 table(s) in schema(s) "+schema) {
		t.Errorf("init does not report the connection check:\n%s", out)
	}
	pp := filepath.Join(ws, "platform.yaml")
	raw, err := os.ReadFile(pp)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "127.0.0.1") || strings.Contains(string(raw), "postgres://") {
		t.Errorf("platform.yaml holds the DSN:\n%s", raw)
	}
	p, err := plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	src := p.Sources["lima_pg_init"]
	if src == nil || src.Kind != plan.SourcePostgres || src.DSNEnv != "LIMA_PG_INIT_DSN" || src.Path != "" {
		t.Fatalf("sources %+v, want lima_pg_init: postgres from LIMA_PG_INIT_DSN", p.Sources)
	}
	if p.Platform.Prefix != "lima_pg_init" {
		t.Errorf("prefix %q, want lima_pg_init (from the variable's name)", p.Platform.Prefix)
	}
	// Gate 1 on the plan passes with a database source.
	if failed := gates.FailedFindings(gates.Scope(p)); len(failed) > 0 {
		t.Fatalf("gate 1 refuses the database plan: %+v", failed)
	}

	tables, findings := proposeJSON(t, pp)
	orders, events := tables["orders"], tables["events"]
	if orders == nil || events == nil || len(tables) != 2 {
		t.Fatalf("proposed tables %v, want orders and events", tables)
	}
	colTypes := func(tb *plan.Table) map[string]string {
		m := map[string]string{}
		for _, c := range tb.Columns {
			m[c.Name] = c.Type
		}
		return m
	}
	ot := colTypes(orders)
	for c, want := range map[string]string{"id": "long", "amount": "decimal(12,2)", "updated_at": "timestamptz", "attrs": "string", "note": "string"} {
		if ot[c] != want {
			t.Errorf("orders.%s: type %q, want %q", c, ot[c], want)
		}
	}
	if _, ok := ot["loc"]; ok {
		t.Error("orders.loc (point) was proposed; Lima cannot map it")
	}
	if f, ok := findingNamed(findings, "orders: column left out"); !ok || f.Status != gates.Warn || !strings.Contains(f.Detail, "loc (point)") {
		t.Errorf("no gate 3 finding for the point column: %+v", f)
	}
	if strings.Join(orders.Load.Keys, ",") != "id" || orders.Load.Mode != plan.ModeUpsert || orders.Load.Watermark != "updated_at" {
		t.Errorf("orders load %+v, want upsert by id with watermark updated_at", orders.Load)
	}
	if orders.Source.Table != "orders" || orders.Source.Schema != schema || orders.Source.Name != "lima_pg_init" {
		t.Errorf("orders source %+v", orders.Source)
	}
	if len(events.Load.Keys) != 0 || events.Load.Mode != "" || events.Load.Watermark != "" {
		t.Errorf("events (no primary key) load %+v, want full without keys", events.Load)
	}
	if f, ok := findingNamed(findings, "events: load"); !ok || f.Status != gates.Warn || !strings.Contains(f.Detail, "seen_at would be a watermark") {
		t.Errorf("events load finding: %+v", f)
	}
	if f, ok := findingNamed(findings, "orders: sample"); !ok || f.Status != gates.Pass || !strings.Contains(f.Detail, "700 rows read in one snapshot") || !strings.Contains(f.Detail, "key id distinct") {
		t.Errorf("orders sample finding: %+v", f)
	}

	code, out, errs = runCLI(t, "propose", "--plan", pp, "--write")
	if code != exitOK {
		t.Fatalf("propose --write: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "orders ← lima_pg_init: table "+schema+".orders (700 rows sampled)") || !strings.Contains(out, "key id · mode upsert · watermark updated_at") {
		t.Errorf("propose output:\n%s", out)
	}
	for _, g := range []string{"scope", "data-model"} {
		if code, out, errs := runCLI(t, "approve", "--plan", pp, "--gate", g, "--by", "Analyst A"); code != exitOK {
			t.Fatalf("approve %s: exit %d: %s %s", g, code, out, errs)
		}
	}
	if code, out, errs := call(t, cmdCheck, "--plan", pp); code != exitOK {
		t.Fatalf("check: exit %d:\n%s%s", code, out, errs)
	}
	code, out, errs = runCLI(t, "run", "--force", "--plan", pp)
	if code != exitOK {
		t.Fatalf("run: exit %d:\n%s\n%s", code, out, errs)
	}
	rep, err := reports.Read(strings.TrimSpace(out))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]reports.TableReport{}
	for _, tr := range rep.Tables {
		byName[tr.Name] = tr
	}
	wantOrders := queryString(t, db, `SELECT count(*)::text FROM `+schema+`.orders`)
	wantEvents := queryString(t, db, `SELECT count(*)::text FROM `+schema+`.events`)
	wantAmount := queryString(t, db, `SELECT sum(amount)::text FROM `+schema+`.orders`)
	wantQty := queryString(t, db, `SELECT sum(qty)::text FROM `+schema+`.events`)
	for name, want := range map[string]string{"orders": wantOrders, "events": wantEvents} {
		tr, ok := byName[name]
		if !ok {
			t.Fatalf("no report of %s", name)
		}
		if tr.Reconciliation != gates.Pass {
			t.Errorf("%s: gate 4 %s: %+v", name, tr.Reconciliation, tr.Checks)
		}
		if got := tr.RowsLoaded; want != strconv.FormatInt(got, 10) || tr.RowsRead != got || tr.RowsQuarantined != 0 {
			t.Errorf("%s: read %d loaded %d held %d, want %s loaded", name, tr.RowsRead, got, tr.RowsQuarantined, want)
		}
	}
	// Gate 4 compares the database's own sums, taken in the read
	// snapshot, with what the load accepted; both must be the sums the
	// test computes with SQL.
	sumCheck := func(table, col, want string) {
		t.Helper()
		f, ok := findingNamed(byName[table].Checks, "source sum("+col+")")
		if !ok || f.Status != gates.Pass || !strings.Contains(f.Detail, "source "+want+" ") || !(strings.Contains(f.Detail, "by this load "+want+",") || strings.Contains(f.Detail, "lake "+want+",")) {
			t.Errorf("%s: gate 4 source sum(%s): %+v, want source and lake %s (the database's sum)", table, col, f, want)
		}
	}
	sumCheck("orders", "amount", wantAmount)
	sumCheck("events", "qty", wantQty)
	// The DSN is in no file of the workspace.
	_ = filepath.WalkDir(ws, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Type()&os.ModeType != 0 {
			return nil
		}
		if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), dsn) {
			t.Errorf("%s contains the DSN", path)
		}
		return nil
	})
}

// TestInitDatabaseWrongPasswordHidesIt: a refused login names what failed
// and never the password or the DSN, and exits 4 (a precondition failed,
// nothing written) like gate 2 — the answer itself was understood.
func TestInitDatabaseWrongPasswordHidesIt(t *testing.T) {
	noTTY(t)
	const secret = "Wr0ngHunter2Pw"
	tests := []struct {
		name, env, dsn, def string
		d                   sqldb.Dialect
	}{
		{"mariadb", "LIMA_TEST_MYSQL_DSN", "root:" + secret + "@tcp(127.0.0.1:3306)/test", "root@tcp(127.0.0.1:3306)/test", sqldb.MySQL},
		{"mariadb url", "LIMA_TEST_MYSQL_DSN", "mysql://root:" + secret + "@127.0.0.1:3306/test", "root@tcp(127.0.0.1:3306)/test", sqldb.MySQL},
		{"postgres", "LIMA_TEST_POSTGRES_DSN", "postgres://lima_no_such_role:" + secret + "@127.0.0.1:5432/test?sslmode=disable", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable", sqldb.Postgres},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testDB(t, tt.d, tt.env, tt.def) // the server runs
			t.Setenv("LIMA_BAD_DSN", tt.dsn)
			dir := t.TempDir()
			code, out, errs := call(t, cmdInit, "--source", "env:LIMA_BAD_DSN", "--dir", dir, "--defaults")
			if code != exitPrecondition {
				t.Fatalf("exit %d, want %d (the database refused): %s%s", code, exitPrecondition, out, errs)
			}
			if !strings.Contains(errs, "lima-tui init: --source env:LIMA_BAD_DSN: connect: ") {
				t.Errorf("stderr does not say the connection failed:\n%s", errs)
			}
			if strings.Contains(errs+out, secret) || strings.Contains(errs+out, tt.dsn) {
				t.Errorf("the password or DSN was printed:\n%s%s", out, errs)
			}
			if _, err := os.Stat(filepath.Join(dir, "platform.yaml")); !os.IsNotExist(err) {
				t.Error("a refused init wrote a plan")
			}
		})
	}
}

// TestInitFromMariaDBPropose: init from a MariaDB database named by a
// mysql:// URL, then gate 3's proposal from its catalog.
func TestInitFromMariaDBPropose(t *testing.T) {
	noTTY(t)
	base, db := testDB(t, sqldb.MySQL, "LIMA_TEST_MYSQL_DSN", "root@tcp(127.0.0.1:3306)/test")
	name := "lima_init_" + randomSuffix()
	mustExec(t, db, "CREATE DATABASE "+name)
	t.Cleanup(func() { db.Exec("DROP DATABASE " + name) })
	mustExec(t, db, "CREATE TABLE "+name+`.customers (id int AUTO_INCREMENT PRIMARY KEY, name varchar(80) NOT NULL,
		credit decimal(12,2), updated_at datetime(6) NOT NULL, doc json, spot point, KEY (updated_at))`)
	mustExec(t, db, "INSERT INTO "+name+".customers (name, credit, updated_at, doc, spot) VALUES "+
		"('a', 10.50, '2026-01-01 10:00:00', '{\"x\":1}', POINT(1,2)), ('b', NULL, '2026-01-02 10:00:00', NULL, POINT(3,4))")
	mustExec(t, db, "CREATE TABLE "+name+".audit (happened datetime, what text)")
	mustExec(t, db, "INSERT INTO "+name+".audit VALUES ('2026-01-01 00:00:00', 'x')")

	cfg, err := mysql.ParseDSN(base)
	if err != nil {
		t.Fatal(err)
	}
	// A mysql:// URL of the same server and user.
	u := url.URL{Scheme: "mysql", Host: cfg.Addr, Path: "/" + name}
	if cfg.Passwd != "" {
		u.User = url.UserPassword(cfg.User, cfg.Passwd)
	} else {
		u.User = url.User(cfg.User)
	}
	t.Setenv("CRM_DSN", u.String())
	ws := t.TempDir()
	code, out, errs := call(t, cmdInit, "--source", "env:CRM_DSN", "--dir", ws, "--defaults")
	if code != exitOK {
		t.Fatalf("init: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "env:CRM_DSN: MariaDB ") && !strings.Contains(out, "env:CRM_DSN: MySQL ") || !strings.Contains(out, "(kind mysql), 2 table(s) in schema(s) "+name) {
		t.Errorf("init output:\n%s", out)
	}
	pp := filepath.Join(ws, "platform.yaml")
	p, err := plan.Load(pp)
	if err != nil {
		t.Fatal(err)
	}
	if s := p.Sources["crm"]; s == nil || s.Kind != plan.SourceMySQL || s.DSNEnv != "CRM_DSN" {
		t.Fatalf("sources %+v, want crm: mysql from CRM_DSN", p.Sources)
	}
	if p.Platform.Prefix != "crm" {
		t.Errorf("prefix %q, want crm", p.Platform.Prefix)
	}
	tables, findings := proposeJSON(t, pp)
	c, a := tables["customers"], tables["audit"]
	if c == nil || a == nil {
		t.Fatalf("proposed %v", tables)
	}
	types := map[string]string{}
	for _, col := range c.Columns {
		types[col.Name] = col.Type
	}
	for col, want := range map[string]string{"id": "int", "name": "string", "credit": "decimal(12,2)", "updated_at": "timestamp", "doc": "string"} {
		if types[col] != want {
			t.Errorf("customers.%s: %q, want %q", col, types[col], want)
		}
	}
	if _, ok := types["spot"]; ok {
		t.Error("the point column was proposed")
	}
	if f, ok := findingNamed(findings, "customers: column left out"); !ok || !strings.Contains(f.Detail, "spot (point)") {
		t.Errorf("no finding for the point column: %+v", f)
	}
	if c.Load.Mode != plan.ModeUpsert || c.Load.Watermark != "updated_at" || strings.Join(c.Load.Keys, ",") != "id" || c.Source.Schema != name {
		t.Errorf("customers %+v %+v", c.Load, c.Source)
	}
	if len(a.Load.Keys) != 0 || a.Load.Mode != "" {
		t.Errorf("audit (no key) load %+v", a.Load)
	}
	if code, _, errs := runCLI(t, "propose", "--plan", pp, "--write"); code != exitOK {
		t.Fatalf("propose --write: exit %d: %s", code, errs)
	}
	if p, err = plan.Load(pp); err != nil || len(p.Tables) != 2 {
		t.Fatalf("written plan: %v, %d tables", err, len(p.Tables))
	}
	// And it runs: gate 4 passes with the database's count and sum.
	for _, g := range []string{"scope", "data-model"} {
		if code, out, errs := runCLI(t, "approve", "--plan", pp, "--gate", g, "--by", "Analyst A"); code != exitOK {
			t.Fatalf("approve %s: exit %d: %s %s", g, code, out, errs)
		}
	}
	code, out, errs = runCLI(t, "run", "--force", "--plan", pp)
	if code != exitOK {
		t.Fatalf("run: exit %d:\n%s\n%s", code, out, errs)
	}
	rep, err := reports.Read(strings.TrimSpace(out))
	if err != nil {
		t.Fatal(err)
	}
	wantCount := queryString(t, db, "SELECT CAST(COUNT(*) AS CHAR) FROM "+name+".customers")
	wantCredit := queryString(t, db, "SELECT CAST(SUM(credit) AS CHAR) FROM "+name+".customers")
	for _, tr := range rep.Tables {
		if tr.Reconciliation != gates.Pass {
			t.Errorf("%s: gate 4 %s: %+v", tr.Name, tr.Reconciliation, tr.Checks)
		}
		if tr.Name != "customers" {
			continue
		}
		if strconv.FormatInt(tr.RowsLoaded, 10) != wantCount {
			t.Errorf("customers loaded %d, want %s", tr.RowsLoaded, wantCount)
		}
		if f, ok := findingNamed(tr.Checks, "source sum(credit)"); !ok || f.Status != gates.Pass || !strings.Contains(f.Detail, "source "+wantCredit+" ") {
			t.Errorf("source sum(credit): %+v, want %s", f, wantCredit)
		}
	}
}
