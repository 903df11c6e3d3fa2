package flow_test

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/go-sql-driver/mysql"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/source/sqldb"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
)

// upsertCase is one database's SQL for the upsert test: the table is
// items(id, amount decimal(18,3), note text, updated_at timestamp), and
// rowsSQL selects every row as id|amount|note|updated_at text in the form
// the lake values are formatted in (lakeByKey).
type upsertCase struct {
	dialect sqldb.Dialect
	db      *sql.DB
	dsn     string
	table   string // qualified, for the test's own SQL
	schema  string // for the plan
	ts      func(minutes int) string
	rowsSQL string
}

func (c upsertCase) exec(t *testing.T, q string, args ...any) { dbExec(t, c.db, q, args...) }

// sourceRows reads the source table with the test's own SQL.
func (c upsertCase) sourceRows(t *testing.T) map[int64]string {
	t.Helper()
	rows, err := c.db.Query(c.rowsSQL)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]string{}
	for rows.Next() {
		var id int64
		var line string
		if err := rows.Scan(&id, &line); err != nil {
			t.Fatal(err)
		}
		out[id] = line
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// openLakeTable opens the loaded table through Lima's sink (closed when
// the test ends).
func openLakeTable(t *testing.T, ws flow.Workspace, p *plan.Plan, tr *run.TableResult) sink.Table {
	t.Helper()
	ctx := context.Background()
	sk, err := flow.OpenSink(ctx, ws, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sk.Close() })
	spec := sink.TableSpec{Name: tr.Name, Namespace: p.Namespace(), Types: tr.Types, Required: tr.Required}
	for i, c := range tr.Columns {
		spec.Columns = append(spec.Columns, plan.Column{Name: c, Type: tr.Types[i].String(), Required: tr.Required[i]})
	}
	tbl, err := sk.OpenTable(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// lakeByKey reads the table back through the sink's Scanner and formats
// every row as id|amount|note|updated_at; a key seen twice fails.
func lakeByKey(t *testing.T, ws flow.Workspace, p *plan.Plan, tr *run.TableResult) map[int64]string {
	t.Helper()
	ctx := context.Background()
	it, err := openLakeTable(t, ws, p, tr).(sink.Scanner).Scan(ctx, 0, []string{"id", "amount", "note", "updated_at"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]string{}
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		col := func(name string) arrow.Array {
			for i, f := range rec.Schema().Fields() {
				if f.Name == name {
					return rec.Column(i)
				}
			}
			t.Fatalf("no column %s in the lake", name)
			return nil
		}
		ids, amt, note, upd := col("id").(*array.Int64), col("amount").(*array.Decimal128), col("note").(*array.String), col("updated_at").(*array.Timestamp)
		for r := 0; r < int(rec.NumRows()); r++ {
			id := ids.Value(r)
			n := "NULL"
			if !note.IsNull(r) {
				n = note.Value(r)
			}
			ts := time.UnixMicro(int64(upd.Value(r))).UTC().Format("2006-01-02T15:04:05.000000")
			if upd.DataType().(*arrow.TimestampType).TimeZone != "" {
				ts += "Z"
			}
			line := fmt.Sprintf("%s|%s|%s", amt.Value(r).ToString(3), n, ts)
			if _, dup := out[id]; dup {
				t.Errorf("key %d is in the lake twice", id)
			}
			out[id] = line
		}
		rec.Release()
	}
	return out
}

func sameRows(t *testing.T, what string, lake, src map[int64]string) {
	t.Helper()
	var diffs []string
	for id, s := range src {
		if l, ok := lake[id]; !ok {
			diffs = append(diffs, fmt.Sprintf("id %d missing from the lake (source %s)", id, s))
		} else if l != s {
			diffs = append(diffs, fmt.Sprintf("id %d: lake %s, source %s", id, l, s))
		}
	}
	for id, l := range lake {
		if _, ok := src[id]; !ok {
			diffs = append(diffs, fmt.Sprintf("id %d in the lake (%s) but not at the source", id, l))
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		t.Fatalf("%s: lake ≠ source in %d rows (%d lake, %d source), first: %s", what, len(diffs), len(lake), len(src), strings.Join(diffs[:min(len(diffs), 5)], "; "))
	}
	if len(src) == 0 {
		t.Fatalf("%s: no rows compared", what)
	}
}

func balanced(t *testing.T, tr *run.TableResult) {
	t.Helper()
	if tr.Err != nil {
		t.Fatal(tr.Err)
	}
	if tr.RowsRead != tr.RowsLoaded+tr.RowsQuarantined+tr.RowsSkipped {
		t.Fatalf("conservation: read %d ≠ loaded %d + held %d + skipped %d", tr.RowsRead, tr.RowsLoaded, tr.RowsQuarantined, tr.RowsSkipped)
	}
}

// expectation of an upsert run, computed from the lake before the run and
// the source after the changes, independently of the loader.
// Rows re-read in the lookback window that equal the lake's version are
// skipped as unchanged_in_lookback: neither updated nor rewritten.
type upsertWant struct{ read, inserted, updated, unchanged, late, deleted int64 }

func expectUpsert(t *testing.T, c upsertCase, before, src map[int64]string, fromMinute, prevMinute int) upsertWant {
	t.Helper()
	from, prev := c.ts(fromMinute), c.ts(prevMinute)
	var w upsertWant
	for id, line := range src {
		parts := strings.Split(line, "|")
		ts := parts[len(parts)-1]
		if ts < from { // canonical timestamps sort as text
			continue
		}
		w.read++
		switch b, ok := before[id]; {
		case !ok:
			w.inserted++
		case b == line:
			w.unchanged++
		default:
			w.updated++
		}
		if ts <= prev && before[id] != line {
			w.late++
		}
	}
	for id := range before {
		if _, ok := src[id]; !ok {
			w.deleted++
		}
	}
	return w
}

func checkUpsert(t *testing.T, tr *run.TableResult, w upsertWant) {
	t.Helper()
	balanced(t, tr)
	u := tr.Upsert
	if u == nil {
		t.Fatal("no upsert result")
	}
	got := upsertWant{tr.RowsRead, u.Inserted, u.Updated, tr.SkippedBy[run.SkipUnchanged], u.LateRows, u.Deleted}
	if got != w {
		t.Fatalf("run: got read/inserted/updated/unchanged/late/deleted %+v, want %+v (report %+v)", got, w, *u)
	}
	// Only updated keys and deleted keys lose their lake row.
	if u.RowsRemoved != w.updated+w.deleted {
		t.Fatalf("the commit removed %d lake rows, want %d updated + %d deleted", u.RowsRemoved, w.updated, w.deleted)
	}
	if !u.DeletesChecked {
		t.Fatalf("keys were not compared: %+v", *u)
	}
}

// runUpsertScenario loads, changes the source (inserts, updates, deletes,
// a row at exactly the previous maximum watermark, late rows inside the
// lookback, one outside it), loads again, and proves lake = source.
func runUpsertScenario(t *testing.T, c upsertCase) {
	// 200 rows, one a minute: minute i for id i.
	for i := 1; i <= 200; i++ {
		c.exec(t, "INSERT INTO "+c.table+" (id, amount, note, updated_at) VALUES ("+strconv.Itoa(i)+", "+fmt.Sprintf("%d.125", i)+", 'n"+strconv.Itoa(i)+"', "+c.lit(c.ts(i))+")")
	}
	t.Setenv("LIMA_TEST_SOURCE_DSN", c.dsn)
	ws, p := workspace(t, nil, `schema_version: 1
platform: {prefix: ups`+string(c.dialect[:2])+`}
sources:
  erp: {kind: `+string(c.dialect)+`, dsn_env: LIMA_TEST_SOURCE_DSN}
tables:
  items:
    source: {name: erp, table: items, schema: `+c.schema+`}
    load: {mode: upsert, keys: [id], watermark: updated_at, lookback: 10m, detect_deletes: every_run}
`)
	out := runOnce(t, ws, p, flow.RunOptions{})
	tr := out.Result.Tables[0]
	checkUpsert(t, tr, upsertWant{read: 200, inserted: 200})
	if tr.WatermarkAfter != c.ts(200) || tr.WatermarkBefore != "" {
		t.Fatalf("watermark %q → %q, want '' → %s", tr.WatermarkBefore, tr.WatermarkAfter, c.ts(200))
	}
	sameRows(t, "first load", lakeByKey(t, ws, p, tr), c.sourceRows(t))
	if rep := tableReport(t, out.Report, "items"); rep.Reconciliation != gates.Pass || rep.Upsert == nil || rep.Upsert.Inserted != 200 {
		t.Fatalf("report: gate 4 %s, upsert %+v: %+v", rep.Reconciliation, rep.Upsert, rep.Checks)
	}

	// The changes at the source.
	c.exec(t, "UPDATE "+c.table+" SET amount = amount + 1, updated_at = "+c.lit(c.ts(205))+" WHERE id <= 10")
	c.exec(t, "DELETE FROM "+c.table+" WHERE id BETWEEN 50 AND 59")
	for i := 201; i <= 230; i++ {
		c.exec(t, "INSERT INTO "+c.table+" (id, amount, note, updated_at) VALUES ("+strconv.Itoa(i)+", "+fmt.Sprintf("%d.5", i)+", NULL, "+c.lit(c.ts(200+i-200+10))+")")
	}
	// Committed with the previous maximum (minute 200) after the first
	// read: a ">" read would lose it.
	c.exec(t, "INSERT INTO "+c.table+" (id, amount, note, updated_at) VALUES (300, 0.001, 'at the mark', "+c.lit(c.ts(200))+")")
	// Late rows inside the lookback window (minutes 195, 198).
	c.exec(t, "INSERT INTO "+c.table+" (id, amount, note, updated_at) VALUES (301, 7.700, 'late insert', "+c.lit(c.ts(195))+")")
	c.exec(t, "UPDATE "+c.table+" SET note = 'late update', updated_at = "+c.lit(c.ts(198))+" WHERE id = 100")
	before := lakeByKey(t, ws, p, tr)
	src := c.sourceRows(t)
	want := expectUpsert(t, c, before, src, 190, 200)
	// Updated: ids 1..10 and 100 (late); unchanged: 190..200 re-read; late:
	// 300, 301 and 100 — a guard on the scenario itself.
	if want.late != 3 || want.deleted != 10 || want.updated != 11 || want.unchanged != 11 || want.read != c.countFrom(t, 190) {
		t.Fatalf("scenario: %+v", want)
	}
	out = runOnce(t, ws, p, flow.RunOptions{})
	tr = out.Result.Tables[0]
	checkUpsert(t, tr, want)
	if tr.WatermarkBefore != c.ts(200) || tr.WatermarkAfter != c.ts(240) {
		t.Fatalf("watermark %s → %s, want %s → %s", tr.WatermarkBefore, tr.WatermarkAfter, c.ts(200), c.ts(240))
	}
	if tr.Upsert.ReadFrom != c.ts(190) {
		t.Fatalf("read from %q, want %s", tr.Upsert.ReadFrom, c.ts(190))
	}
	if tr.Commit.Watermark != tr.WatermarkAfter {
		t.Fatalf("the snapshot carries watermark %q, want %q", tr.Commit.Watermark, tr.WatermarkAfter)
	}
	sameRows(t, "after inserts, updates and deletes", lakeByKey(t, ws, p, tr), src)
	rep := tableReport(t, out.Report, "items")
	if rep.Reconciliation != gates.Pass {
		t.Fatalf("gate 4: %s: %+v", rep.Reconciliation, rep.Checks)
	}
	if f := check(t, rep, "lake keys = source keys"); f.Status != gates.Pass || !strings.Contains(f.Detail, fmt.Sprintf("held %d distinct keys", len(src))) {
		t.Fatalf("key equality: %+v (source has %d rows)", f, len(src))
	}
	if rep.WatermarkBefore != c.ts(200) || rep.WatermarkAfter != c.ts(240) || rep.Upsert == nil || rep.Upsert.LateRows != 3 || rep.Upsert.Deleted != 10 {
		t.Fatalf("report: watermark %s → %s, upsert %+v", rep.WatermarkBefore, rep.WatermarkAfter, rep.Upsert)
	}

	// A run without changes re-reads the lookback window, finds every row
	// of it equal to the lake's, and neither rewrites nor counts one.
	before = lakeByKey(t, ws, p, tr)
	want = expectUpsert(t, c, before, src, 230, 240)
	if want.inserted != 0 || want.late != 0 || want.deleted != 0 || want.updated != 0 || want.unchanged != want.read || want.read != c.countFrom(t, 230) {
		t.Fatalf("scenario: %+v", want)
	}
	out = runOnce(t, ws, p, flow.RunOptions{})
	tr = out.Result.Tables[0]
	checkUpsert(t, tr, want)
	sameRows(t, "rerun", lakeByKey(t, ws, p, tr), src)
	if tr.WatermarkAfter != c.ts(240) {
		t.Fatalf("watermark moved to %s", tr.WatermarkAfter)
	}
	noSecretInReports(t, out, c.dsn)
}

// lit is a timestamp literal of the dialect.
func (c upsertCase) lit(ts string) string {
	if c.dialect == sqldb.Postgres {
		return "timestamptz '" + ts + "'"
	}
	return "'" + strings.Replace(ts, "T", " ", 1) + "'"
}

func TestPostgresUpsertIncrementalWithLookbackAndDeletes(t *testing.T) {
	dsn, db := serviceDSN(t, sqldb.Postgres, "LIMA_TEST_POSTGRES_DSN", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
	schema := randomName("lima_ups_")
	dbExec(t, db, `CREATE SCHEMA `+schema)
	t.Cleanup(func() { db.Exec(`DROP SCHEMA ` + schema + ` CASCADE`) })
	dbExec(t, db, `CREATE TABLE `+schema+`.items (id bigint PRIMARY KEY, amount numeric(18,3) NOT NULL, note text, updated_at timestamptz NOT NULL)`)
	base := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	runUpsertScenario(t, upsertCase{dialect: sqldb.Postgres, db: db, dsn: dsn, table: schema + ".items", schema: schema,
		ts: func(m int) string {
			return base.Add(time.Duration(m) * time.Minute).Format("2006-01-02T15:04:05.000000Z")
		},
		rowsSQL: `SELECT id, amount::text || '|' || coalesce(note, 'NULL') || '|' ||
			to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') FROM ` + schema + `.items`})
}

func TestMariaDBUpsertIncrementalWithLookbackAndDeletes(t *testing.T) {
	dsn, db := serviceDSN(t, sqldb.MySQL, "LIMA_TEST_MYSQL_DSN", "root@tcp(127.0.0.1:3306)/test")
	name := randomName("lima_ups_")
	dbExec(t, db, "CREATE DATABASE "+name)
	t.Cleanup(func() { db.Exec("DROP DATABASE " + name) })
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DBName = name
	dbExec(t, db, "CREATE TABLE "+name+".items (id bigint PRIMARY KEY, amount decimal(18,3) NOT NULL, note text, updated_at datetime(6) NOT NULL)")
	base := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	runUpsertScenario(t, upsertCase{dialect: sqldb.MySQL, db: db, dsn: cfg.FormatDSN(), table: name + ".items", schema: name,
		ts: func(m int) string {
			return base.Add(time.Duration(m) * time.Minute).Format("2006-01-02T15:04:05.000000")
		},
		rowsSQL: "SELECT id, CONCAT(CAST(amount AS CHAR), '|', COALESCE(note, 'NULL'), '|', DATE_FORMAT(updated_at, '%Y-%m-%dT%H:%i:%s.%f')) FROM " + name + ".items"})
}

// TestPostgresUpsertLatestWinsWithinBatch: the plan's key is not the
// table's primary key, so one read holds several versions of a key; the
// one with the latest watermark is loaded and the others are skipped as
// superseded (counted, so the run still balances).
func TestPostgresUpsertLatestWinsWithinBatch(t *testing.T) {
	dsn, db := serviceDSN(t, sqldb.Postgres, "LIMA_TEST_POSTGRES_DSN", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
	schema := randomName("lima_ups_")
	dbExec(t, db, `CREATE SCHEMA `+schema)
	t.Cleanup(func() { db.Exec(`DROP SCHEMA ` + schema + ` CASCADE`) })
	dbExec(t, db, `CREATE TABLE `+schema+`.events (id bigint NOT NULL, amount numeric(10,2), updated_at timestamptz NOT NULL)`)
	dbExec(t, db, `INSERT INTO `+schema+`.events VALUES
		(1, 1.00, '2026-01-01 10:00Z'), (1, 2.00, '2026-01-01 12:00Z'), (1, 3.00, '2026-01-01 11:00Z'),
		(2, 5.00, '2026-01-01 09:00Z'), (3, 7.00, '2026-01-01 08:00Z'), (3, 8.00, '2026-01-01 08:30Z')`)
	want := map[int64]string{}
	rows, err := db.Query(`SELECT DISTINCT ON (id) id, amount::text FROM ` + schema + `.events ORDER BY id, updated_at DESC`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		var a string
		if err := rows.Scan(&id, &a); err != nil {
			t.Fatal(err)
		}
		want[id] = a
	}
	rows.Close()
	var total int64
	if err := db.QueryRow(`SELECT count(*) FROM ` + schema + `.events`).Scan(&total); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LIMA_TEST_SOURCE_DSN", dsn)
	ws, p := workspace(t, nil, `schema_version: 1
platform: {prefix: upslat}
sources:
  erp: {kind: postgres, dsn_env: LIMA_TEST_SOURCE_DSN}
tables:
  events:
    source: {name: erp, table: events, schema: `+schema+`}
    load: {mode: upsert, keys: [id], watermark: updated_at}
`)
	out := runOnce(t, ws, p, flow.RunOptions{})
	tr := out.Result.Tables[0]
	balanced(t, tr)
	superseded := total - int64(len(want))
	if tr.RowsRead != total || tr.RowsLoaded != int64(len(want)) || tr.SkippedBy[run.SkipSuperseded] != superseded {
		t.Fatalf("read %d loaded %d skipped %v, want %d/%d/%d superseded", tr.RowsRead, tr.RowsLoaded, tr.SkippedBy, total, len(want), superseded)
	}
	it, err := openLakeTable(t, ws, p, tr).(sink.Scanner).Scan(context.Background(), 0, []string{"id", "amount"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]string{}
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		ids, amt := rec.Column(0).(*array.Int64), rec.Column(1).(*array.Decimal128)
		for r := 0; r < int(rec.NumRows()); r++ {
			if _, dup := got[ids.Value(r)]; dup {
				t.Errorf("key %d twice in the lake", ids.Value(r))
			}
			got[ids.Value(r)] = amt.Value(r).ToString(2)
		}
		rec.Release()
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("lake %v, want the latest version of each key %v", got, want)
	}
	if rep := tableReport(t, out.Report, "events"); rep.Reconciliation == gates.Fail {
		t.Fatalf("gate 4: %+v", rep.Checks)
	}
}
