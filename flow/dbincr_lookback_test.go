package flow_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/go-sql-driver/mysql"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/engine/source/sqldb"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/gates"
)

// Issue 13, failure 5: an incremental read of a database table pushes
// "watermark >= previous − lookback" into the SQL, and rows re-read in
// that window that equal the lake's version are skipped as
// unchanged_in_lookback — in modes incremental and upsert.

// pgItems makes items(id, amount numeric(18,3), note, updated_at
// timestamptz) in a schema of its own.
func pgItems(t *testing.T) upsertCase {
	dsn, db := serviceDSN(t, sqldb.Postgres, "LIMA_TEST_POSTGRES_DSN", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
	schema := randomName("lima_incr_")
	dbExec(t, db, `CREATE SCHEMA `+schema)
	t.Cleanup(func() { db.Exec(`DROP SCHEMA ` + schema + ` CASCADE`) })
	dbExec(t, db, `CREATE TABLE `+schema+`.items (id bigint PRIMARY KEY, amount numeric(18,3) NOT NULL, note text, updated_at timestamptz NOT NULL)`)
	base := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	return upsertCase{dialect: sqldb.Postgres, db: db, dsn: dsn, table: schema + ".items", schema: schema,
		ts: func(m int) string {
			return base.Add(time.Duration(m) * time.Minute).Format("2006-01-02T15:04:05.000000Z")
		},
		rowsSQL: `SELECT id, amount::text || '|' || coalesce(note, 'NULL') || '|' ||
			to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') FROM ` + schema + `.items`}
}

// mariaItems makes the same table in a MariaDB database of its own.
func mariaItems(t *testing.T) upsertCase {
	dsn, db := serviceDSN(t, sqldb.MySQL, "LIMA_TEST_MYSQL_DSN", "root@tcp(127.0.0.1:3306)/test")
	name := randomName("lima_incr_")
	dbExec(t, db, "CREATE DATABASE "+name)
	t.Cleanup(func() { db.Exec("DROP DATABASE " + name) })
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DBName = name
	dbExec(t, db, "CREATE TABLE "+name+".items (id bigint PRIMARY KEY, amount decimal(18,3) NOT NULL, note text, updated_at datetime(6) NOT NULL)")
	base := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	return upsertCase{dialect: sqldb.MySQL, db: db, dsn: cfg.FormatDSN(), table: name + ".items", schema: name,
		ts: func(m int) string {
			return base.Add(time.Duration(m) * time.Minute).Format("2006-01-02T15:04:05.000000")
		},
		rowsSQL: "SELECT id, CONCAT(CAST(amount AS CHAR), '|', COALESCE(note, 'NULL'), '|', DATE_FORMAT(updated_at, '%Y-%m-%dT%H:%i:%s.%f')) FROM " + name + ".items"}
}

// countFrom counts the source rows at or above minute m with the test's
// own SQL.
func (c upsertCase) countFrom(t *testing.T, m int) int64 {
	t.Helper()
	var n int64
	if err := c.db.QueryRow("SELECT count(*) FROM " + c.table + " WHERE updated_at >= " + c.lit(c.ts(m))).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func (c upsertCase) insertItem(t *testing.T, id int, amount, note string, minute int) {
	t.Helper()
	n := "NULL"
	if note != "" {
		n = "'" + note + "'"
	}
	c.exec(t, "INSERT INTO "+c.table+" (id, amount, note, updated_at) VALUES ("+strconv.Itoa(id)+", "+amount+", "+n+", "+c.lit(c.ts(minute))+")")
}

// icebergByKey reads the table with iceberg-go directly (not through
// Lima's sink) as id → amount|note|updated_at; a key seen twice fails.
func icebergByKey(t *testing.T, ws flow.Workspace, p *plan.Plan, name string) map[int64]string {
	t.Helper()
	_, tbl := loadIceberg(t, ws, p, name)
	_, it, err := tbl.Scan().ToArrowRecords(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]string{}
	for rec, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		col := map[string]arrow.Array{}
		for i, f := range rec.Schema().Fields() {
			col[f.Name] = rec.Column(i)
		}
		ids, amt, note, upd := col["id"].(*array.Int64), col["amount"].(*array.Decimal128), col["note"].(*array.String), col["updated_at"].(*array.Timestamp)
		for r := 0; r < int(rec.NumRows()); r++ {
			n := "NULL"
			if !note.IsNull(r) {
				n = note.Value(r)
			}
			ts := time.UnixMicro(int64(upd.Value(r))).UTC().Format("2006-01-02T15:04:05.000000")
			if upd.DataType().(*arrow.TimestampType).TimeZone != "" {
				ts += "Z"
			}
			if _, dup := out[ids.Value(r)]; dup {
				t.Errorf("key %d is in the lake twice", ids.Value(r))
			}
			out[ids.Value(r)] = fmt.Sprintf("%s|%s|%s", amt.Value(r).ToString(3), n, ts)
		}
		rec.Release()
	}
	return out
}

// incrWant is what an incremental run must do, computed from the lake
// before the run, the source after the changes and the test's own count.
type incrWant struct{ read, loaded, unchanged int64 }

// unchangedAmount sums (in thousandths) the amounts of the source rows in
// the window that the lake already holds unchanged.
func unchangedAmount(c upsertCase, before, src map[int64]string, fromMinute int) string {
	var sum int64
	for id, line := range src {
		parts := strings.Split(line, "|")
		if parts[len(parts)-1] >= c.ts(fromMinute) && before[id] == line {
			whole, frac, _ := strings.Cut(parts[0], ".")
			w, _ := strconv.ParseInt(whole, 10, 64)
			f, _ := strconv.ParseInt((frac + "000")[:3], 10, 64)
			sum += w*1000 + f
		}
	}
	return fmt.Sprintf("%d.%03d", sum/1000, sum%1000)
}

func expectIncremental(t *testing.T, c upsertCase, before, src map[int64]string, fromMinute int) incrWant {
	t.Helper()
	from := c.ts(fromMinute)
	w := incrWant{read: c.countFrom(t, fromMinute)}
	var inWindow int64
	for id, line := range src {
		parts := strings.Split(line, "|")
		if parts[len(parts)-1] < from { // canonical timestamps sort as text
			continue
		}
		inWindow++
		switch b, ok := before[id]; {
		case !ok:
			w.loaded++
		case b == line:
			w.unchanged++
		default:
			t.Fatalf("scenario: id %d changed in place (lake %s, source %s); an incremental table is insert-only", id, b, line)
		}
	}
	if inWindow != w.read {
		t.Fatalf("scenario: %d source rows at or above %s by the test's text, %d by its SQL", inWindow, from, w.read)
	}
	return w
}

func checkIncremental(t *testing.T, what string, tr *run.TableResult, w incrWant) {
	t.Helper()
	balanced(t, tr)
	got := incrWant{tr.RowsRead, tr.RowsLoaded, tr.SkippedBy[run.SkipUnchanged]}
	if got != w || tr.RowsQuarantined != 0 || tr.RowsSkipped != w.unchanged {
		t.Fatalf("%s: read/loaded/unchanged %+v (held %d, skipped %v), want %+v", what, got, tr.RowsQuarantined, tr.SkippedBy, w)
	}
}

func runIncrementalLookbackScenario(t *testing.T, c upsertCase) {
	// 200 rows, one a minute: minute i for id i.
	for i := 1; i <= 200; i++ {
		c.insertItem(t, i, fmt.Sprintf("%d.125", i), "n"+strconv.Itoa(i), i)
	}
	t.Setenv("LIMA_TEST_SOURCE_DSN", c.dsn)
	ws, p := workspace(t, nil, `schema_version: 1
platform: {prefix: inc`+string(c.dialect[:2])+`}
sources:
  erp: {kind: `+string(c.dialect)+`, dsn_env: LIMA_TEST_SOURCE_DSN}
tables:
  items:
    source: {name: erp, table: items, schema: `+c.schema+`}
    load: {mode: incremental, keys: [id], watermark: updated_at, lookback: 10m}
`)
	out := runOnce(t, ws, p, flow.RunOptions{})
	tr := out.Result.Tables[0]
	checkIncremental(t, "first load", tr, incrWant{read: 200, loaded: 200})
	if tr.WatermarkAfter != c.ts(200) {
		t.Fatalf("watermark %q, want %s", tr.WatermarkAfter, c.ts(200))
	}
	sameRows(t, "first load", icebergByKey(t, ws, p, "items"), c.sourceRows(t))

	// New rows above the mark; one committed later with exactly the
	// previous maximum (minute 200); late rows inside the 10-minute
	// lookback (minutes 195 and 190, the bound itself).
	for i := 201; i <= 230; i++ {
		c.insertItem(t, i, fmt.Sprintf("%d.5", i), "", i+10)
	}
	c.insertItem(t, 300, "0.001", "at the mark", 200)
	c.insertItem(t, 301, "7.700", "late", 195)
	c.insertItem(t, 302, "8.800", "late at the bound", 190)
	before, src := icebergByKey(t, ws, p, "items"), c.sourceRows(t)
	want := expectIncremental(t, c, before, src, 190)
	wantUnchangedSum := unchangedAmount(c, before, src, 190)
	// 30 new + 3 late; ids 190..200 re-read unchanged.
	if want != (incrWant{read: 44, loaded: 33, unchanged: 11}) {
		t.Fatalf("scenario: %+v", want)
	}
	out = runOnce(t, ws, p, flow.RunOptions{})
	tr = out.Result.Tables[0]
	checkIncremental(t, "after inserts and late rows", tr, want)
	if tr.WatermarkBefore != c.ts(200) || tr.WatermarkAfter != c.ts(240) || tr.Commit.Watermark != c.ts(240) {
		t.Fatalf("watermark %s → %s (snapshot %s), want %s → %s", tr.WatermarkBefore, tr.WatermarkAfter, tr.Commit.Watermark, c.ts(200), c.ts(240))
	}
	if tr.SourceTotals == nil || tr.SourceTotals.From != c.ts(190) || tr.SourceTotals.Rows != want.read {
		t.Fatalf("source totals %+v, want the count of rows from %s (%d)", tr.SourceTotals, c.ts(190), want.read)
	}
	// Gate 4's material: the unchanged rows' control sums (ids 190..200:
	// 190.125 + … + 200.125 = 2146.375).
	if st := tr.SourceTotals; wantUnchangedSum != "2146.375" || st.RowsUnchanged != want.unchanged || st.UnchangedSums["amount"] != wantUnchangedSum {
		t.Fatalf("unchanged rows %d sums %v, want %d and amount %s", st.RowsUnchanged, st.UnchangedSums, want.unchanged, wantUnchangedSum)
	}
	sameRows(t, "after inserts and late rows", icebergByKey(t, ws, p, "items"), src)
	if rep := tableReport(t, out.Report, "items"); rep.Reconciliation == gates.Fail {
		t.Fatalf("gate 4 failed: %+v", rep.Checks)
	}

	// No change: only the window is read, and every row of it is the
	// lake's already.
	before = icebergByKey(t, ws, p, "items")
	want = expectIncremental(t, c, before, src, 230)
	if want != (incrWant{read: 11, unchanged: 11}) {
		t.Fatalf("scenario: %+v", want)
	}
	out = runOnce(t, ws, p, flow.RunOptions{})
	tr = out.Result.Tables[0]
	checkIncremental(t, "no change", tr, want)
	if tr.Status != run.StatusNothingToLoad || tr.WatermarkAfter != c.ts(240) {
		t.Fatalf("no change: status %s, watermark %s", tr.Status, tr.WatermarkAfter)
	}
	sameRows(t, "no change", icebergByKey(t, ws, p, "items"), src)
	noSecretInReports(t, out, c.dsn)
}

func TestPostgresIncrementalReadsFromWatermarkMinusLookback(t *testing.T) {
	runIncrementalLookbackScenario(t, pgItems(t))
}

func TestMariaDBIncrementalReadsFromWatermarkMinusLookback(t *testing.T) {
	runIncrementalLookbackScenario(t, mariaItems(t))
}

// TestPostgresIncrementalKeylessLookback: without a key, a re-read row is
// unchanged when the lake holds a row of the same content in the window —
// each lake row matching one re-read row, so a third copy of a row the
// lake holds twice is loaded and the lake equals the source as a multiset.
func TestPostgresIncrementalKeylessLookback(t *testing.T) {
	dsn, db := serviceDSN(t, sqldb.Postgres, "LIMA_TEST_POSTGRES_DSN", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
	schema := randomName("lima_incr_")
	dbExec(t, db, `CREATE SCHEMA `+schema)
	t.Cleanup(func() { db.Exec(`DROP SCHEMA ` + schema + ` CASCADE`) })
	dbExec(t, db, `CREATE TABLE `+schema+`.moves (amount numeric(10,2) NOT NULL, note text, at timestamptz NOT NULL)`)
	base := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	ts := func(m int) string { return base.Add(time.Duration(m) * time.Minute).Format(time.RFC3339) }
	ins := func(amount, note string, m int) {
		dbExec(t, db, `INSERT INTO `+schema+`.moves VALUES (`+amount+`, `+note+`, '`+ts(m)+`')`)
	}
	for i := 1; i <= 50; i++ {
		ins(fmt.Sprintf("%d.10", i), "'m'", i)
	}
	ins("50.10", "'m'", 50) // two identical rows at the mark
	source := func() map[string]int {
		rows, err := db.Query(`SELECT amount::text || '|' || coalesce(note, 'NULL') || '|' || to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') FROM ` + schema + `.moves`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]int{}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out[s]++
		}
		return out
	}
	t.Setenv("LIMA_TEST_SOURCE_DSN", dsn)
	ws, p := workspace(t, nil, `schema_version: 1
platform: {prefix: inckl}
sources:
  erp: {kind: postgres, dsn_env: LIMA_TEST_SOURCE_DSN}
tables:
  moves:
    source: {name: erp, table: moves, schema: `+schema+`}
    load: {mode: incremental, watermark: at, lookback: 10m}
`)
	lake := func() map[string]int {
		_, tbl := loadIceberg(t, ws, p, "moves")
		_, it, err := tbl.Scan().ToArrowRecords(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		for rec, err := range it {
			if err != nil {
				t.Fatal(err)
			}
			col := map[string]arrow.Array{}
			for i, f := range rec.Schema().Fields() {
				col[f.Name] = rec.Column(i)
			}
			amt, note, at := col["amount"].(*array.Decimal128), col["note"].(*array.String), col["at"].(*array.Timestamp)
			for r := 0; r < int(rec.NumRows()); r++ {
				n := "NULL"
				if !note.IsNull(r) {
					n = note.Value(r)
				}
				out[amt.Value(r).ToString(2)+"|"+n+"|"+time.UnixMicro(int64(at.Value(r))).UTC().Format("2006-01-02T15:04:05.000000")+"Z"]++
			}
			rec.Release()
		}
		return out
	}
	out := runOnce(t, ws, p, flow.RunOptions{})
	tr := out.Result.Tables[0]
	checkIncremental(t, "first load", tr, incrWant{read: 51, loaded: 51})
	// A third copy of the row at the mark, a late row, five new rows.
	ins("50.10", "'m'", 50)
	ins("45.50", "NULL", 45)
	for i := 51; i <= 55; i++ {
		ins(fmt.Sprintf("%d.10", i), "'m'", i)
	}
	var read int64
	if err := db.QueryRow(`SELECT count(*) FROM ` + schema + `.moves WHERE at >= '` + ts(40) + `'`).Scan(&read); err != nil {
		t.Fatal(err)
	}
	// Minutes 40..49 and two copies at 50 are the lake's (12); the third
	// copy, the late row and minutes 51..55 are new (7).
	if read != 19 {
		t.Fatalf("scenario: %d rows from minute 40", read)
	}
	out = runOnce(t, ws, p, flow.RunOptions{})
	tr = out.Result.Tables[0]
	checkIncremental(t, "second load", tr, incrWant{read: read, loaded: 7, unchanged: 12})
	if got, want := lake(), source(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("lake ≠ source as a multiset:\nlake   %v\nsource %v", got, want)
	}
}

// TestPostgresUnchangedInLookbackEveryType: a row of every mapped type
// (NULLs included) re-read unchanged is recognised as the lake's version:
// a run with no change updates nothing and skips every re-read row.
func TestPostgresUnchangedInLookbackEveryType(t *testing.T) {
	dsn, db := serviceDSN(t, sqldb.Postgres, "LIMA_TEST_POSTGRES_DSN", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
	schema := randomName("lima_incr_")
	dbExec(t, db, `CREATE SCHEMA `+schema)
	t.Cleanup(func() { db.Exec(`DROP SCHEMA ` + schema + ` CASCADE`) })
	dbExec(t, db, `CREATE TABLE `+schema+`.wide (id bigint PRIMARY KEY, i int, s smallint, d double precision, n numeric(20,6),
		dt date, ts timestamp, tz timestamptz, b boolean, raw bytea, txt text, js jsonb, seq bigint NOT NULL)`)
	dbExec(t, db, `INSERT INTO `+schema+`.wide VALUES
		(1, -2147483648, 7, 0.1, 123456789.123456, '1969-12-31', '1900-01-01 00:00:00.000001', '2026-03-01 10:00:00.5+09', true, '\x00ff'::bytea, 'ü', '{"a": [1, 2]}', 1),
		(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 2),
		(3, 0, 0, -1e-300, -0.000001, '2026-02-28', '2026-02-28 23:59:59.999999', '1970-01-01 00:00:00+00', false, '\x'::bytea, '', 'null', 3),
		(4, 1, 1, 1.7976931348623157e308, 0, '9999-12-31', '2026-01-01 00:00:00', '2026-01-01 00:00:00+00', true, '\x0d0a'::bytea, 'a,"b"', '[]', 4)`)
	t.Setenv("LIMA_TEST_SOURCE_DSN", dsn)
	for _, mode := range []string{"upsert", "incremental"} {
		t.Run(mode, func(t *testing.T) {
			ws, p := workspace(t, nil, `schema_version: 1
platform: {prefix: incw`+mode[:2]+`}
sources:
  erp: {kind: postgres, dsn_env: LIMA_TEST_SOURCE_DSN}
tables:
  wide:
    source: {name: erp, table: wide, schema: `+schema+`}
    load: {mode: `+mode+`, keys: [id], watermark: seq, lookback: 3}
`)
			out := runOnce(t, ws, p, flow.RunOptions{})
			checkIncremental(t, "first load", out.Result.Tables[0], incrWant{read: 4, loaded: 4})
			if cols := out.Result.Tables[0].Columns; len(cols) != 13 {
				t.Fatalf("columns %v, want all 13 mapped", cols)
			}
			// Watermark 4, lookback 3: every row (seq >= 1) is re-read.
			out = runOnce(t, ws, p, flow.RunOptions{})
			tr := out.Result.Tables[0]
			checkIncremental(t, "no change", tr, incrWant{read: 4, unchanged: 4})
			if tr.Upsert != nil && (tr.Upsert.Updated != 0 || tr.Upsert.Inserted != 0) {
				t.Fatalf("no change: %+v", *tr.Upsert)
			}
		})
	}
}
