package run

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/engine/source/sqldb"
	"github.com/lima-lake/lima/internal/redact"
)

// SourceTotals are a database source's own count and sums of the control
// columns, taken in the read snapshot before the first row was read, with
// what the load did with those rows. Gate 4 proves them against the lake
// (gates.SourceTotals).
type SourceTotals struct {
	Unit string `json:"unit"`
	// From is the read's lower bound on the watermark column (previous
	// watermark minus the lookback, inclusive): Rows counts the rows at or
	// above it. Empty when the whole table was read.
	From string `json:"from,omitempty"`
	// Rows is count(*) in the snapshot; Sums the database's exact SUM of
	// each control column (by plan column name), as the database wrote it.
	Rows int64             `json:"rows"`
	Sums map[string]string `json:"sums"`
	// TableRows is count(*) of the whole table in the same snapshot,
	// whatever the read range (gates.SourceCount).
	TableRows *int64 `json:"table_rows,omitempty"`
	// RowsRead, RowsHeld and RowsSkipped are what the load did with the
	// snapshot's rows.
	RowsRead    int64 `json:"rows_read"`
	RowsHeld    int64 `json:"rows_held"`
	RowsSkipped int64 `json:"rows_skipped"`
	// HeldSums are the sums of the held-back rows' values (exact, canonical
	// text); Unaccounted lists the control columns where a held-back row's
	// value could not be read as a number (its share of the source sum is
	// then unknown).
	HeldSums map[string]string `json:"held_sums,omitempty"`
	// RowsUnchanged are the skipped rows that were re-read in the lookback
	// window equal to the lake's version (skip reason unchanged_in_lookback):
	// in the source sum and in the lake, not among the rows this load
	// accepted. UnchangedSums are their control sums (exact, canonical
	// text), so source = accepted + held back + unchanged when they are
	// the only rows skipped.
	RowsUnchanged int64             `json:"rows_unchanged,omitempty"`
	UnchangedSums map[string]string `json:"unchanged_sums,omitempty"`
	Unaccounted   []string          `json:"unaccounted,omitempty"`
	// Incomplete: the read stopped early (a unit-level failure), so the
	// rows read are not the whole snapshot.
	Incomplete bool `json:"incomplete,omitempty"`
}

// dbSource is one table of a database source, opened for one load. Close
// closes the database.
type dbSource struct {
	*sqldb.Source
	db   *sql.DB
	unit string
}

func (d *dbSource) Close() error { return d.db.Close() }

// openDatabase opens the database of a source for table ts. The DSN is
// read from the environment variable the plan names; it never appears in
// an error.
func openDatabase(ctx context.Context, workspace, name string, s *plan.Source, ts *plan.TableSource) (*dbSource, error) {
	d := sqldb.DialectOf(s.Kind)
	dsn := ""
	if s.DSNEnv != "" {
		v, ok := os.LookupEnv(s.DSNEnv)
		if !ok || v == "" {
			return nil, fmt.Errorf("source %s: environment variable %s is not set; export the DSN of the %s database in it", name, s.DSNEnv, s.Kind)
		}
		dsn = v
	} else {
		dsn = s.Path
		if !filepath.IsAbs(dsn) {
			dsn = filepath.Join(workspace, dsn)
		}
		if _, err := os.Stat(dsn); err != nil {
			return nil, fmt.Errorf("source %s: sqlite database %s: %w", name, dsn, err)
		}
	}
	db, err := sqldb.Open(d, dsn)
	if err != nil {
		// The driver's message may quote the DSN: say only what failed.
		return nil, fmt.Errorf("source %s: the DSN in %s is not a valid %s DSN", name, s.DSNEnv, s.Kind)
	}
	fail := func(what string, err error) (*dbSource, error) {
		db.Close()
		return nil, fmt.Errorf("source %s: %s: %w", name, what, redact.Error(err, dsn))
	}
	if err := db.PingContext(ctx); err != nil {
		return fail("connect", err)
	}
	schema := ts.Schema
	if schema == "" {
		switch d {
		case sqldb.Postgres:
			if err := db.QueryRowContext(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
				return fail("current schema", err)
			}
		case sqldb.MySQL:
			var cur sql.NullString
			if err := db.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&cur); err != nil {
				return fail("current database", err)
			}
			if !cur.Valid {
				db.Close()
				return nil, fmt.Errorf("source %s: the DSN names no database; give the table's schema (database) in source.schema", name)
			}
			schema = cur.String
		case sqldb.SQLServer, sqldb.Oracle:
			if err := db.QueryRowContext(ctx, sqldb.CurrentSchemaQuery(d)).Scan(&schema); err != nil {
				return fail("current schema", err)
			}
		}
	}
	t := sqldb.Table{Schema: schema, Name: ts.Table}
	src, err := sqldb.New(d, db, []sqldb.Table{t}, nil)
	if err != nil {
		return fail("table "+t.UnitName(), err)
	}
	if err := src.SetSnapshotFallback(s.SnapshotFallback); err != nil {
		return fail("snapshot_fallback", err)
	}
	return &dbSource{Source: src, db: db, unit: t.UnitName()}, nil
}

// describeTable discovers the table's mapped columns, their plan types and
// the columns left out, in a short snapshot of its own.
func (d *dbSource) describeTable(ctx context.Context) (cols, types []string, findings []string, err error) {
	rd, err := d.OpenTable(ctx, source.Unit{Name: d.unit, Path: d.unit})
	if err != nil {
		return nil, nil, nil, err
	}
	defer rd.Close()
	for _, f := range rd.Findings() {
		findings = append(findings, fmt.Sprintf("column %s (%s) left out: %s", f.Column, f.DBType, f.Reason))
	}
	return rd.Columns(), rd.PlanTypes(), findings, nil
}

// sourceTotals takes the database's own count and control sums in the
// reader's snapshot, before its first row.
func (l *loader) sourceTotals(ctx context.Context, u source.Unit, r *sqldb.Reader) error {
	names := make([]string, 0, len(l.stats.sumCols))
	for _, i := range l.stats.sumCols {
		names = append(names, l.rs.srcNames[i])
	}
	n, sums, err := r.Totals(ctx, names)
	if err != nil {
		return err
	}
	st := &SourceTotals{Unit: u.Name, Rows: n, Sums: map[string]string{}}
	if l.window != nil {
		st.From = l.window.From
	}
	if st.TableRows = &n; r.HasRange() { // gate 4's whole-table count
		if tn, err := r.TableCount(ctx); err == nil {
			st.TableRows = &tn
		} else {
			st.TableRows = nil
		}
	}
	l.heldSums = map[string]*Sum{}
	for _, i := range l.stats.sumCols {
		c := l.rs.cols[i]
		st.Sums[c] = sums[l.rs.srcNames[i]]
		l.heldSums[c] = &Sum{Type: l.rs.types[i], IsFloat: l.rs.types[i].Kind == plan.Double}
	}
	l.tr.SourceTotals = st
	l.dbReader = r
	if len(l.keyCols) > 0 {
		l.keys.Reserve(n) // at most n keys: the key set never rehashes
	}
	if err := l.startExtract(u, r); err != nil {
		return err
	}
	// Delete detection reads the source's keys in the same snapshot.
	return l.readSourceKeys(ctx, r)
}

// addHeld adds a held-back row's control values to the held sums; a value
// that does not parse makes its column's held sum unaccounted.
func (l *loader) addHeld(values map[string]string) {
	st := l.tr.SourceTotals
	for _, i := range l.stats.sumCols {
		c := l.rs.cols[i]
		v, ok := values[c]
		if !ok {
			continue // null
		}
		cell, err := parseCanonical(l.rs.types[i], v)
		if err != nil {
			if !slices.Contains(st.Unaccounted, c) {
				st.Unaccounted = append(st.Unaccounted, c)
			}
			continue
		}
		if cell.Null {
			continue
		}
		s := l.heldSums[c]
		switch l.rs.types[i].Kind {
		case plan.Double:
			s.Float += cell.F
		case plan.Decimal:
			s.addDec(cell.D)
		default:
			s.addInt(cell.I)
		}
	}
}

// finishTotals records what the load did with the snapshot's rows.
func (l *loader) finishTotals() {
	st := l.tr.SourceTotals
	if st == nil {
		return
	}
	st.RowsRead, st.RowsHeld, st.RowsSkipped = l.tr.RowsRead, l.tr.RowsQuarantined, l.tr.RowsSkipped
	for _, f := range l.tr.Files {
		if f.Status != "read" {
			st.Incomplete = true
		}
	}
	if w := l.window; w != nil && w.unchanged > 0 {
		st.RowsUnchanged = w.unchanged
		st.UnchangedSums = map[string]string{}
		for _, i := range l.stats.sumCols {
			s := w.sums[i]
			if s == nil {
				s = &Sum{Type: l.rs.types[i], IsFloat: l.rs.types[i].Kind == plan.Double}
			}
			st.UnchangedSums[l.rs.cols[i]] = s.String()
		}
	}
	if st.RowsHeld > 0 {
		st.HeldSums = map[string]string{}
		for c, s := range l.heldSums {
			st.HeldSums[c] = s.String()
		}
	}
	slices.Sort(st.Unaccounted)
}

// prepareDB sets up how a database table is read: parallel ranges
// (source.split_by, capped by etl.max_parallel_reads), for modes
// incremental and upsert the read range (pushed into the SQL) and the lake
// rows of the lookback window, and for upsert the key order.
func (l *loader) prepareDB(ctx context.Context, src source.Source, tbl sink.Table) error {
	if d, ok := src.(*dbSource); ok {
		// Without split_by a large PostgreSQL table is still read in
		// ranges of the first column the read is ordered by, when that is
		// an integer, date or timestamp (sqldb.AutoParallelRows): the rows,
		// their order and the snapshot are the serial read's, so this is
		// how the table is read, not what is loaded. max_parallel_reads: 1
		// keeps every read serial.
		col := l.t.Source.SplitBy
		for i, c := range l.rs.cols {
			if c == col {
				col = l.rs.srcNames[i]
			}
		}
		max := l.o.Plan.ETL.MaxParallelReads
		if max <= 0 {
			max = DefaultParallelReads
		}
		if err := d.SetParallel(d.unit, sqldb.Parallel{Column: col, Max: max}); err != nil {
			return err
		}
	}
	if err := l.prepareIncrementalDB(ctx, src, tbl); err != nil {
		return err
	}
	return l.prepareUpsert(ctx, src, tbl)
}

// DefaultParallelReads caps parallel range reads of one table when the
// plan sets no etl.max_parallel_reads.
const DefaultParallelReads = 4

// finishDB records how the table was read and, for mode upsert, finds the
// keys deleted at the source.
func (l *loader) finishDB(ctx context.Context, tbl sink.Table) error {
	if l.dbReader != nil {
		l.tr.ReadNote = l.dbReader.ParallelNote()
	}
	if err := l.classifyUpsert(ctx, tbl); err != nil {
		return err
	}
	return l.finishUpsert(ctx, tbl)
}
