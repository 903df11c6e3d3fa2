package main

// The PostgreSQL part of the bench: a generated table (numeric(18,3),
// timestamptz, jsonb, bytea, text) loaded by `lima-tui run` into Iceberg,
// next to the raw rate of `COPY (SELECT ...) TO STDOUT` of the same table
// in the same bench run — the floor any extraction from PostgreSQL pays.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgDSNEnv names the variable holding the bench's PostgreSQL DSN.
const pgDSNEnv = "LIMA_BENCH_POSTGRES_DSN"

const pgDefaultDSN = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// countingWriter counts the bytes COPY streams.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// runPostgres measures PostgreSQL → Iceberg next to COPY TO STDOUT. An
// unreachable server skips this part loudly (it is not an error).
func runPostgres(ctx context.Context, o options, root, lima string, w io.Writer) error {
	dsn := os.Getenv(pgDSNEnv)
	if dsn == "" {
		dsn = pgDefaultDSN
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	conn, err := pgx.Connect(cctx, dsn)
	cancel()
	if err != nil {
		msg := fmt.Sprintf("!!! PostgreSQL bench SKIPPED: no server reachable with %s (or the default 127.0.0.1:5432): %v — run scripts/ensure-postgres.sh", pgDSNEnv, err)
		logf("%s", msg)
		fmt.Fprintf(w, "\n%s\n", msg)
		return nil
	}
	defer conn.Close(context.Background())
	var version string
	if err := conn.QueryRow(ctx, "SHOW server_version").Scan(&version); err != nil {
		return err
	}
	b := make([]byte, 6)
	rand.Read(b)
	schema := "lima_bench_" + hex.EncodeToString(b)
	ident := pgx.Identifier{schema}.Sanitize()
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+ident); err != nil {
		return err
	}
	defer conn.Exec(context.Background(), "DROP SCHEMA "+ident+" CASCADE")
	rows := o.pgRows
	logf("PostgreSQL %s: generating %d rows in schema %s", version, rows, schema)
	start := time.Now()
	for _, q := range []string{
		`CREATE TABLE ` + ident + `.ledger (id bigint PRIMARY KEY, amount numeric(18,3) NOT NULL, fee numeric(18,3),
			booked_at timestamptz NOT NULL, doc jsonb, payload bytea, note text)`,
		`INSERT INTO ` + ident + `.ledger
			SELECT i, ((i * 7919) % 2000000000000 - 1000000000000)::numeric / 1000,
			       CASE WHEN i % 7 = 0 THEN NULL ELSE (i % 100000)::numeric / 1000 END,
			       timestamptz '2020-01-01 00:00:00+00' + i * interval '1 second',
			       jsonb_build_object('i', i, 'tag', 'ü' || (i % 10)),
			       decode(substr(md5(i::text) || md5((i + 1)::text), 1, ((i % 32) * 2)::int), 'hex'),
			       'note ' || i
			FROM generate_series(1::bigint, $1::bigint) AS i`,
		`ANALYZE ` + ident + `.ledger`,
	} {
		args := []any{}
		if strings.Contains(q, "$1") {
			args = append(args, rows)
		}
		if _, err := conn.Exec(ctx, q, args...); err != nil {
			return fmt.Errorf("generate the table: %w", err)
		}
	}
	logf("generated in %s", time.Since(start).Round(time.Millisecond))
	var tableBytes int64
	if err := conn.QueryRow(ctx, "SELECT pg_total_relation_size($1::regclass)", schema+".ledger").Scan(&tableBytes); err != nil {
		return err
	}

	// Interleaved: COPY, this build, -lima-base (if any), -repeat times.
	// COPY is the same columns, text format, to nowhere.
	copyQuery := "COPY (SELECT id, amount, fee, booked_at, doc, payload, note FROM " + ident + ".ledger) TO STDOUT"
	os.Setenv("LIMA_BENCH_SOURCE_DSN", dsn) // the child reads it by name
	type pgRun struct {
		tool string
		m    measured
		t    pgTable
	}
	var runs []pgRun
	var copies []time.Duration
	var copyLoads []float64
	var copyRows, copyBytes int64
	for i := range o.repeat {
		logf("COPY (SELECT ...) TO STDOUT")
		var cw countingWriter
		copyLoads = append(copyLoads, loadAverage())
		start = time.Now()
		tag, err := conn.PgConn().CopyTo(ctx, &cw, copyQuery)
		copies = append(copies, time.Since(start))
		if err != nil {
			return fmt.Errorf("COPY: %w", err)
		}
		copyRows, copyBytes = tag.RowsAffected(), cw.n
		tools := []struct{ name, bin string }{{"lima (this build)", lima}}
		if o.base != "" {
			tools = append(tools, struct{ name, bin string }{"lima (-lima-base)", o.base})
		}
		for k, tool := range tools {
			m, t, err := runLimaPG(ctx, o, root, tool.bin, fmt.Sprintf("ws-postgres-%d-%d", i+1, k), schema, rows)
			if err != nil {
				return fmt.Errorf("%s: %w", tool.name, err)
			}
			runs = append(runs, pgRun{tool.name, m, t})
		}
	}

	copyWall := median(copies)
	copyMB := float64(copyBytes) / 1e6
	fmt.Fprintf(w, "\nPostgreSQL %s → Iceberg — %s rows (numeric(18,3) ×2, timestamptz, jsonb, bytea, text), table %.1f MB on disk\n",
		version, num(rows), float64(tableBytes)/1e6)
	fmt.Fprintf(w, "%-34s %11s %9s %11s %8s %12s %7s %6s\n", "path", "rows", "seconds", "rows/s", "MB/s", "peak RSS MB", "CPU s", "load")
	for i, c := range copies {
		fmt.Fprintf(w, "%-34s %11s %9.2f %11s %8.1f %12s %7s %6.2f\n", "COPY (SELECT ...) TO STDOUT (raw)", num(copyRows), c.Seconds(),
			num(int64(float64(copyRows)/c.Seconds())), copyMB/c.Seconds(), "–", "–", copyLoads[i])
	}
	by := map[string][]measured{}
	var tools []string
	for _, r := range runs {
		s := r.m.Wall.Seconds()
		fmt.Fprintf(w, "%-34s %11s %9.2f %11s %8.1f %12.1f %7.2f %6.2f\n", fmt.Sprintf("%s, %d ranges", r.tool, o.pgParallel), num(r.t.RowsRead), s,
			num(int64(float64(r.t.RowsRead)/s)), copyMB/s, r.m.PeakRSSMB(), r.m.CPU.Seconds(), r.m.Load1)
		if _, ok := by[r.tool]; !ok {
			tools = append(tools, r.tool)
		}
		by[r.tool] = append(by[r.tool], r.m)
	}
	for _, tool := range tools {
		var walls, cpus []time.Duration
		for _, m := range by[tool] {
			walls, cpus = append(walls, m.Wall), append(cpus, m.CPU)
		}
		fmt.Fprintf(w, "%s: median %.2f s, %.2f CPU-s over %d runs — %.0f%% of COPY's rate (median %.2f s; target: 80%%)\n",
			tool, median(walls).Seconds(), median(cpus).Seconds(), len(walls), 100*copyWall.Seconds()/median(walls).Seconds(), copyWall.Seconds())
	}
	fmt.Fprintf(w, "load = 1-min load average at the start, on %d CPUs; with -repeat N each round ran COPY, this build, then -lima-base (listed by tool, in run order).\n", runtime.NumCPU())
	t := runs[0].t
	fmt.Fprintf(w, "lima: conservation held (read %s = loaded %s + quarantined %s + skipped %s), gate 4 %s; COPY streamed %.1f MB of text.\n",
		num(t.RowsRead), num(t.RowsLoaded), num(t.RowsQuarantined), num(t.RowsSkipped), t.Reconciliation, copyMB)
	fmt.Fprintf(w, "lima's seconds include process start, discovery, typed casting, Parquet writing, the commit and gate 4's re-read of the snapshot;\n"+
		"MB/s for lima is the COPY text volume over lima's time, to compare like with like.\n")
	for _, r := range runs[1:] {
		if r.t.RowsRead != t.RowsRead || r.t.RowsLoaded != t.RowsLoaded || r.t.RowsQuarantined != t.RowsQuarantined || r.t.RowsSkipped != t.RowsSkipped {
			return fmt.Errorf("%s accounts differently: read %d, loaded %d, held %d, skipped %d; first run %d, %d, %d, %d", r.tool,
				r.t.RowsRead, r.t.RowsLoaded, r.t.RowsQuarantined, r.t.RowsSkipped, t.RowsRead, t.RowsLoaded, t.RowsQuarantined, t.RowsSkipped)
		}
	}
	return nil
}

// pgTable is the table line of a PostgreSQL run's JSON summary.
type pgTable struct {
	RowsRead, RowsLoaded, RowsQuarantined, RowsSkipped int64
	Reconciliation                                     string
}

// runLimaPG runs one lima-tui binary on the bench table in a fresh
// workspace, and checks it loaded every row, balanced and passed gate 4.
func runLimaPG(ctx context.Context, o options, root, lima, name, schema string, rows int64) (measured, pgTable, error) {
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return measured{}, pgTable{}, err
	}
	planPath := filepath.Join(dir, "platform.yaml")
	planText := fmt.Sprintf(pgBenchPlan, schema, o.pgParallel)
	if err := os.WriteFile(planPath, []byte(planText), 0o644); err != nil {
		return measured{}, pgTable{}, err
	}
	// Gate 1 takes folders only in this build; the run needs the approved
	// data model.
	if out, err := runQuiet(lima, "approve", "--gate", "data-model", "--by", "bench", "--plan", planPath); err != nil {
		return measured{}, pgTable{}, fmt.Errorf("lima-tui approve --gate data-model: %w\n%s", err, out)
	}
	logf("%s run --plan %s --json", filepath.Base(lima), planPath)
	m, err := runMeasured(ctx, o.tee, lima, "run", "--plan", planPath, "--json")
	if err != nil {
		return m, pgTable{}, fmt.Errorf("lima-tui run: %w", err)
	}
	var sum limaSummary
	if jerr := json.Unmarshal([]byte(lastLine(m.Stdout)), &sum); jerr != nil {
		return m, pgTable{}, fmt.Errorf("lima-tui run exited %d without a JSON summary (%v); its stderr ends:\n%s", m.ExitCode, jerr, tail(m.Stderr, 15))
	}
	if m.ExitCode != 0 || sum.Status != "ok" || len(sum.Tables) != 1 {
		return m, pgTable{}, fmt.Errorf("lima-tui run on PostgreSQL exited %d with status %q (report %s); its stderr ends:\n%s", m.ExitCode, sum.Status, sum.Report, tail(m.Stderr, 15))
	}
	st := sum.Tables[0]
	t := pgTable{st.RowsRead, st.RowsLoaded, st.RowsQuarantined, st.RowsSkipped, st.Reconciliation}
	if !st.Balanced || t.RowsRead != rows || t.RowsLoaded != rows {
		return m, t, fmt.Errorf("lima read %d, loaded %d of %d rows (balanced %v)", t.RowsRead, t.RowsLoaded, rows, st.Balanced)
	}
	if t.Reconciliation != "pass" {
		return m, t, fmt.Errorf("gate 4 on the PostgreSQL table: %s (report %s)", t.Reconciliation, sum.Report)
	}
	if o.dir == "" {
		os.RemoveAll(dir) // disk: each run holds a lake of its own
	}
	return m, t, nil
}

// median of durations.
func median(d []time.Duration) time.Duration {
	v := slices.Clone(d)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

const pgBenchPlan = `# Lima bench plan (PostgreSQL) — written by bench/. Approved by "bench".
schema_version: 1
platform:
  prefix: benchpg
  region: local
  environment: bench
  pattern: iceberg
  catalog: sqlite
downstream:
  consumer: unknown
storage:
  warehouse: lake
  namespace: benchpg
sources:
  erp:
    kind: postgres
    dsn_env: LIMA_BENCH_SOURCE_DSN
tables:
  ledger:
    type: base
    description: Generated ledger (bench/)
    source: {name: erp, table: ledger, schema: %s, split_by: id}
    load: {mode: full, keys: [id]}
    control_columns: [amount, fee]
    written_by: lima
etl:
  tool: lima
  max_parallel_reads: %d
owners:
  - {name: "Bench (generated data)", default: true, deadline: 24h}
`
