package flow_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lima-lake/lima/engine/source/sqldb"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
)

// TestPostgresBulkLoadExactTotals loads a PostgreSQL table with
// numeric(18,3), timestamptz, jsonb and bytea columns and checks the count
// and the decimal sums gate 4 proved against the database's own count and
// sums, taken by the test with SQL. 1,000,000 rows (about 17 s on the
// 2-core test machine: 8 s to generate, 9 s to load and reconcile);
// 100,000 with -short.
func TestPostgresBulkLoadExactTotals(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	dsn, db := serviceDSN(t, sqldb.Postgres, "LIMA_TEST_POSTGRES_DSN", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
	schema := randomName("lima_bulk_")
	dbExec(t, db, `CREATE SCHEMA `+schema)
	t.Cleanup(func() { db.Exec(`DROP SCHEMA ` + schema + ` CASCADE`) })
	dbExec(t, db, `CREATE TABLE `+schema+`.ledger (id bigint PRIMARY KEY, amount numeric(18,3) NOT NULL, fee numeric(18,3),
		booked_at timestamptz NOT NULL, doc jsonb, payload bytea)`)
	start := time.Now()
	// Amounts up to ±10^12 with all three decimals used; every 7th fee is
	// NULL; payloads of 0–31 bytes including zero bytes.
	dbExec(t, db, `INSERT INTO `+schema+`.ledger
		SELECT i, ((i::bigint * 7919) % 2000000000000 - 1000000000000)::numeric / 1000 * (CASE WHEN i % 3 = 0 THEN -1 ELSE 1 END),
		       CASE WHEN i % 7 = 0 THEN NULL ELSE (i % 100000)::numeric / 1000 END,
		       timestamptz '2020-01-01 00:00:00+00' + i * interval '1 second',
		       jsonb_build_object('i', i, 'tag', 'ü' || (i % 10)),
		       decode(substr(md5(i::text) || md5((i + 1)::text), 1, (i % 32) * 2), 'hex')
		FROM generate_series(1, $1::int) AS i`, n)
	var wantCount int64
	var wantAmount, wantFee string
	if err := db.QueryRow(`SELECT count(*), sum(amount)::text, sum(fee)::text FROM `+schema+`.ledger`).Scan(&wantCount, &wantAmount, &wantFee); err != nil {
		t.Fatal(err)
	}
	t.Logf("generated %d rows in %s: sum(amount) %s, sum(fee) %s", n, time.Since(start).Round(time.Millisecond), wantAmount, wantFee)
	if wantCount != int64(n) {
		t.Fatalf("generated %d rows, want %d", wantCount, n)
	}

	t.Setenv("LIMA_TEST_SOURCE_DSN", dsn)
	ws, p := workspace(t, nil, `schema_version: 1
platform: {prefix: pgbulk}
sources:
  erp: {kind: postgres, dsn_env: LIMA_TEST_SOURCE_DSN}
tables:
  ledger:
    source: {name: erp, table: ledger, schema: `+schema+`, split_by: id}
    load: {keys: [id]}
    control_columns: [amount, fee]
etl: {max_parallel_reads: 3}
`)
	start = time.Now()
	out := runOnce(t, ws, p, flow.RunOptions{})
	t.Logf("loaded and reconciled %d rows in %s", n, time.Since(start).Round(time.Millisecond))
	res := out.Result.Tables[0]
	balanced(t, res)
	if res.RowsRead != wantCount || res.RowsLoaded != wantCount {
		t.Fatalf("read %d loaded %d, want %d", res.RowsRead, res.RowsLoaded, wantCount)
	}
	tr := tableReport(t, out.Report, "ledger")
	// Read in three ranges of id, all in the snapshot the totals describe.
	if !strings.HasPrefix(tr.ReadNote, "read in 3 ranges of id in parallel") {
		t.Errorf("read note %q", tr.ReadNote)
	}
	if tr.Reconciliation != gates.Pass {
		t.Fatalf("gate 4: %s: %+v", tr.Reconciliation, tr.Checks)
	}
	for c, want := range map[string]string{"amount": wantAmount, "fee": wantFee} {
		ct := tr.ControlTotals[c]
		if ct.Target != want || ct.Source != want || !ct.Exact {
			t.Errorf("sum(%s): gate 4 %+v, the database says %s", c, ct, want)
		}
		if f := check(t, tr, "source sum("+c+")"); f.Status != gates.Pass || !strings.Contains(f.Detail, "source "+want) {
			t.Errorf("source sum(%s): %+v", c, f)
		}
	}
	if f := check(t, tr, "row count"); f.Status != gates.Pass {
		t.Errorf("row count: %+v", f)
	}
	if f := check(t, tr, "source count"); f.Status != gates.Pass {
		t.Errorf("source count: %+v", f)
	}
	if f := check(t, tr, "sample rows side by side"); f.Status != gates.Pass {
		t.Errorf("samples: %+v", f)
	}
}
