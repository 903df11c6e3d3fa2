package run

import (
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink/icesink"
	"github.com/lima-lake/lima/engine/sink/rawland"
	"github.com/lima-lake/lima/engine/source/sqldb"
	"github.com/lima-lake/lima/internal/dbtest"
)

// testPostgres returns the test PostgreSQL (LIMA_TEST_POSTGRES_DSN, or the
// local server), skipping loudly when none is reachable — failing under
// CI or LIMA_REQUIRE_SERVICES=1.
func testPostgres(t *testing.T) (string, *sql.DB) {
	t.Helper()
	return dbtest.Service(t, sqldb.Postgres, dbtest.PostgresEnv, dbtest.PostgresDefault)
}

// dirtyRows generates n rows of text cells (nil: SQL NULL) for the
// columns id, name, amount, qty (an integer column), day, ts, flag: bad numbers, dates,
// timestamps and booleans, control characters, line breaks, padding,
// NULLs, and ids that repeat earlier ids (so the copies fall in other
// chunks and other read ranges).
func dirtyRows(r *rand.Rand, n int) [][]*string {
	s := func(v string) *string { return &v }
	var used []int64
	rows := make([][]*string, 0, n)
	for i := range n {
		id := int64(i + 1)
		if len(used) > 0 && r.IntN(100) < 5 {
			id = used[r.IntN(len(used))]
		}
		used = append(used, id)
		idText := s(fmt.Sprint(id))
		if r.IntN(100) < 1 {
			idText = s("x" + *idText)
		}
		name := s(fmt.Sprintf("name %d", r.IntN(1000)))
		switch p := r.IntN(100); {
		case p < 3:
			name = s("first line\nsecond, line \"quoted\"")
		case p < 5:
			name = s("bad\x01char")
		case p < 8:
			name = s("  padded  ")
		case p < 10:
			name = nil // not_null fails
		}
		amount := s(fmt.Sprintf("%d.%02d", r.IntN(100000), r.IntN(100)))
		switch p := r.IntN(100); {
		case p < 2:
			amount = s("12.3x")
		case p < 4:
			amount = s("-" + *amount)
		case p < 6:
			amount = nil
		}
		qty := s(fmt.Sprint(r.IntN(106))) // above 100 fails the range
		if r.IntN(100) < 2 {
			qty = nil
		}
		day := s(fmt.Sprintf("2024-%02d-%02d", 1+r.IntN(12), 1+r.IntN(28)))
		if r.IntN(100) < 2 {
			day = s("2024-02-30")
		}
		ts := s(fmt.Sprintf("2024-%02d-%02dT%02d:%02d:%02d", 1+r.IntN(12), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60)))
		switch p := r.IntN(100); {
		case p < 2:
			ts = s("yesterday")
		case p < 3:
			ts = nil
		}
		flag := s([]string{"true", "false", "t", "f"}[r.IntN(4)])
		if r.IntN(100) < 2 {
			flag = s("maybe")
		}
		rows = append(rows, []*string{idText, name, amount, qty, day, ts, flag})
	}
	return rows
}

const dbParallelPlan = `schema_version: 1
platform: {prefix: dbpar}
sources: {erp: {kind: postgres, dsn_env: LIMA_TEST_DBPAR_DSN}}
tables:
  items:
    source: {name: erp, table: items, schema: %s, split_by: seq}
    columns:
      - {name: seq, type: long}
      - {name: id, type: long}
      - {name: name, type: string, normalize: [trim]}
      - {name: amount, type: "decimal(12,2)"}
      - {name: qty, type: int}
      - {name: day, type: date}
      - {name: ts, type: timestamp}
      - {name: flag, type: boolean}
    load: {mode: %s, keys: [id], watermark: ts}
    control_columns: [qty]
    checks:
      - {rule: range, column: qty, min: 0, max: 100}
      - {rule: not_null, column: name}
etl: {max_parallel_reads: 3}
`

// dbRun is one load of the table and what it left behind.
type dbRun struct {
	tr      *TableResult
	held    []Exception
	lake    []string
	extract string
}

func loadDBWorkers(t *testing.T, schema, mode string, workers int) dbRun {
	t.Helper()
	dir := t.TempDir()
	p, err := plan.Parse(fmt.Appendf(nil, dbParallelPlan, schema, mode), "platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p.ETL.Parallel = workers
	ctx := context.Background()
	sk, err := icesink.Open(ctx, icesink.Options{CatalogPath: filepath.Join(dir, "catalog.db"), Warehouse: filepath.Join(dir, "lake")})
	if err != nil {
		t.Fatal(err)
	}
	defer sk.Close()
	q := &recordingQuarantine{JSONLQuarantine: JSONLQuarantine{Dir: filepath.Join(dir, "q")}}
	var extract string
	land := func(_ context.Context, _, _, path string, ex rawland.Extract) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			return err
		}
		b, err := io.ReadAll(zr)
		extract = fmt.Sprintf("%d rows, query %s %v\n%s", ex.Rows, ex.Query, ex.Args, b)
		return err
	}
	var cast atomic.Int64
	chunkCast = func() { cast.Add(1) }
	defer func() { chunkCast = nil }()
	res, err := Load(ctx, Options{Workspace: dir, Plan: p, Sink: sk, Quarantine: q, RunID: "run-1", BatchRows: 50, LandExtract: land})
	if err != nil {
		t.Fatal(err)
	}
	tr := res.Tables[0]
	if tr.Err != nil {
		t.Fatalf("workers %d: %v", workers, tr.Err)
	}
	// The rows really went through the workers (or, with 1, did not).
	if n := cast.Load(); (workers > 1) != (n > 0) {
		t.Fatalf("workers %d: %d chunks cast by workers", workers, n)
	}
	lake := lakeRowsInOrder(t, ctx, sk, table.Identifier{"dbpar", "items"})
	normalizeRun(tr, q.held)
	return dbRun{tr: tr, held: q.held, lake: lake, extract: extract}
}

// The parallel cast of a database load is the sequential path,
// observably: a generated dirty PostgreSQL table (several seeds; text
// columns cast to long, decimal, int, date, timestamp and boolean, with
// checks and a key whose copies fall in other chunks and read ranges),
// loaded with 1 worker and with 2 and 4 workers casting 7-row chunks,
// full and upsert (whose superseded versions are skipped), leaves the
// same rows in the same order in the lake, hands the ledger the same
// exceptions in the same order (rules, row numbers, values, keys), lands
// the same raw/ extract, and reports the same counts, source totals,
// held sums and watermark. The counts are checked against the generator's
// rows, and the watermark against the maximum the test computes itself
// from the rows it wrote.
func TestDBParallelCastIsTheSequentialPath(t *testing.T) {
	dsn, db := testPostgres(t)
	t.Setenv("LIMA_TEST_DBPAR_DSN", dsn)
	defer func(n int) { parallelChunkRows = n }(parallelChunkRows)
	parallelChunkRows = 7
	for _, seed := range []uint64{1, 2, 3} {
		r := rand.New(rand.NewPCG(seed, seed*7919))
		rows := dirtyRows(r, 1500+r.IntN(1000))
		b := make([]byte, 6)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		schema := fmt.Sprintf("lima_dbpar_%d_%s_%d", seed, hex.EncodeToString(b), time.Now().UnixNano()%1e6)
		if _, err := db.Exec(`CREATE SCHEMA ` + schema); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Exec(`DROP SCHEMA ` + schema + ` CASCADE`) })
		if _, err := db.Exec(`CREATE TABLE ` + schema + `.items (seq bigint PRIMARY KEY, id text, name text, amount text, qty integer, day text, ts text, flag text)`); err != nil {
			t.Fatal(err)
		}
		tx, err := db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		stmt, err := tx.Prepare(`INSERT INTO ` + schema + `.items VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`)
		if err != nil {
			t.Fatal(err)
		}
		// The watermark as the test computes it: the latest well-formed ts.
		wantWM := ""
		for i, row := range rows {
			args := []any{i + 1}
			for _, v := range row {
				if v == nil {
					args = append(args, nil)
				} else {
					args = append(args, *v)
				}
			}
			if _, err := stmt.Exec(args...); err != nil {
				t.Fatal(err)
			}
			if ts := row[5]; ts != nil && *ts != "yesterday" && *ts > wantWM {
				wantWM = *ts
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		for _, mode := range []string{"full", "upsert"} {
			t.Run(fmt.Sprintf("seed %d %s", seed, mode), func(t *testing.T) {
				seq := loadDBWorkers(t, schema, mode, 1)
				if seq.tr.RowsRead != int64(len(rows)) || !seq.tr.Balanced() || int64(len(seq.lake)) != seq.tr.RowsLoaded {
					t.Fatalf("sequential (%s %v): read %d (generated %d) = loaded %d + held %d + skipped %d; lake %d rows", seq.tr.Status, seq.tr.Files, seq.tr.RowsRead, len(rows),
						seq.tr.RowsLoaded, seq.tr.RowsQuarantined, seq.tr.RowsSkipped, len(seq.lake))
				}
				if got := seq.tr.WatermarkAfter; got == "" || !strings.HasPrefix(strings.Replace(got, " ", "T", 1), wantWM) {
					t.Errorf("watermark %q, the rows' latest ts %q", got, wantWM)
				}
				for _, rule := range []string{RuleUnique, "type", "range", "control_char", "not_null"} {
					if mode == "upsert" && rule == RuleUnique {
						continue // later versions supersede the earlier ones
					}
					if seq.tr.QuarantinedBy[rule] == 0 {
						t.Errorf("the input has no row held under %s: %v", rule, seq.tr.QuarantinedBy)
					}
				}
				if mode == "upsert" && seq.tr.SkippedBy[SkipSuperseded] == 0 {
					t.Errorf("no superseded row skipped: %v", seq.tr.SkippedBy)
				}
				if seq.tr.SourceTotals == nil || seq.tr.SourceTotals.Rows != int64(len(rows)) || seq.extract == "" {
					t.Fatalf("source totals %+v, extract %d bytes", seq.tr.SourceTotals, len(seq.extract))
				}
				t.Logf("read %d: loaded %d, held %d %v, skipped %d %v; watermark %s; %s", seq.tr.RowsRead, seq.tr.RowsLoaded,
					seq.tr.RowsQuarantined, seq.tr.QuarantinedBy, seq.tr.RowsSkipped, seq.tr.SkippedBy, seq.tr.WatermarkAfter, seq.tr.ReadNote)
				for _, workers := range []int{2, 4} {
					par := loadDBWorkers(t, schema, mode, workers)
					if !reflect.DeepEqual(seq.lake, par.lake) {
						t.Errorf("workers %d: the lake differs: %s", workers, firstDiff(seq.lake, par.lake))
					}
					if seq.extract != par.extract {
						t.Errorf("workers %d: the raw/ extract differs: %s", workers, firstDiff(strings.Split(seq.extract, "\n"), strings.Split(par.extract, "\n")))
					}
					if len(seq.held) != len(par.held) {
						t.Errorf("workers %d: %d exceptions held, sequential %d", workers, len(par.held), len(seq.held))
					}
					for i := range min(len(seq.held), len(par.held)) {
						if !reflect.DeepEqual(seq.held[i], par.held[i]) {
							t.Errorf("workers %d: exception %d differs:\n seq %+v\n par %+v", workers, i, seq.held[i], par.held[i])
							break
						}
					}
					sv, pv := reflect.ValueOf(*seq.tr), reflect.ValueOf(*par.tr)
					for i := range sv.NumField() {
						if a, b := sv.Field(i).Interface(), pv.Field(i).Interface(); !reflect.DeepEqual(a, b) {
							t.Errorf("workers %d: the table results differ in %s:\n seq %+v\n par %+v", workers, sv.Type().Field(i).Name, a, b)
						}
					}
				}
			})
		}
	}
}
