package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lima-lake/lima/engine/source"
)

// Parallel asks for a table to be read in up to Max ranges of Column at
// once. Every range is read in the same snapshot as the reader's totals:
// PostgreSQL exports the reader's snapshot (pg_export_snapshot) and each
// range's connection imports it (SET TRANSACTION SNAPSHOT) in its own
// REPEATABLE READ transaction. MySQL/MariaDB cannot share a snapshot
// between connections (and SQLite has one writer-consistent file), so they
// read serially; Reader.ParallelNote says which way a read went and why.
//
// Column must be the first column the read is ordered by (the primary
// key's first column, or the first OrderKeys column) and an integer, date
// or timestamp: the ranges are then concatenated in order, so the rows
// come in exactly the serial read's order.
//
// An empty Column picks that column itself (AutoParallel): the read is
// split when the first ORDER BY column is such a column and the table
// holds at least AutoParallelRows rows (by the reader's Totals count, else
// the catalog's estimate); otherwise it stays serial without a note.
type Parallel struct {
	Column string
	Max    int
}

// AutoParallelRows is the smallest table an automatic parallel read
// splits: below it, opening the range connections costs more than it
// saves.
const AutoParallelRows = 100_000

// SetParallel asks for parallel range reads of a table (unit name).
func (s *Source) SetParallel(unit string, p Parallel) error {
	if !slices.ContainsFunc(s.tables, func(t Table) bool { return t.UnitName() == unit }) {
		return fmt.Errorf("sqldb: parallel read of unknown table %q", unit)
	}
	if _, err := QuoteIdent(s.d, p.Column); err != nil && p.Column != "" {
		return fmt.Errorf("sqldb: parallel read of %q: %w", unit, err)
	}
	if p.Max < 1 {
		return fmt.Errorf("sqldb: parallel read of %q: at most %d reads", unit, p.Max)
	}
	s.parallel[unit] = p
	return nil
}

// ParallelNote says how the read went when parallel reads were asked for:
// in how many ranges, or why serially. Empty when they were not asked for
// or before the first Next.
func (r *Reader) ParallelNote() string { return r.parNote }

type parItem struct {
	rows []source.Row
	err  error
	// start: err is the query's own failure (no row was read).
	start bool
}

type parallelRead struct {
	// serial: one stream of the whole read (the native PostgreSQL path).
	serial bool
	chans  []chan parItem
	cur    int
	buf    []source.Row
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// A PostgreSQL snapshot id, e.g. 00000003-0000001B-1.
var snapshotID = regexp.MustCompile(`^[0-9A-Fa-f-]{1,64}$`)

// startParallel starts the range readers, or says (parNote) why the read
// stays serial and returns false.
func (r *Reader) startParallel(ctx context.Context) (bool, error) {
	p := *r.parWant
	serial := func(format string, args ...any) (bool, error) {
		r.parNote = "read serially: " + fmt.Sprintf(format, args...)
		return false, nil
	}
	order := r.orderColumns()
	auto := p.Column == ""
	if auto {
		quiet := func() (bool, error) { return false, nil }
		rows := r.info.RowEstimate
		if r.totalRows >= 0 {
			rows = r.totalRows
		}
		if p.Max < 2 || r.d != Postgres || len(order) == 0 || rows < AutoParallelRows {
			return quiet()
		}
		i := slices.Index(r.names, order[0])
		if i < 0 {
			return quiet()
		}
		switch r.cols[i].PlanType {
		case "int", "long", "date", "timestamp", "timestamptz":
		default:
			return quiet()
		}
		p.Column = order[0]
	}
	if p.Max < 2 {
		return serial("max_parallel_reads is %d", p.Max)
	}
	if r.d != Postgres {
		return serial("%s cannot share one snapshot between connections, and ranges read in separate snapshots would not match the totals", r.d)
	}
	if len(order) == 0 || order[0] != p.Column {
		return serial("%s is not the first column the read is ordered by (%v), so ranges read in parallel could not keep the read order", p.Column, order)
	}
	i := slices.Index(r.names, p.Column)
	if i < 0 {
		return serial("%s is not a readable column", p.Column)
	}
	kind := r.cols[i].PlanType
	switch kind {
	case "int", "long", "date", "timestamp", "timestamptz":
	default:
		return serial("%s is %s; ranges split integer, date and timestamp columns", p.Column, kind)
	}
	var snap string
	if err := r.conn.QueryRowContext(ctx, "SELECT pg_export_snapshot()").Scan(&snap); err != nil {
		return false, fmt.Errorf("export the snapshot: %w", err)
	}
	if !snapshotID.MatchString(snap) {
		return false, fmt.Errorf("unexpected snapshot id %q", snap)
	}
	col, err := QuoteIdent(r.d, p.Column)
	if err != nil {
		return false, err
	}
	from, args, err := r.from()
	if err != nil {
		return false, err
	}
	var lo, hi any
	if err := r.conn.QueryRowContext(ctx, "SELECT min("+col+"), max("+col+")"+from, args...).Scan(&lo, &hi); err != nil {
		return false, fmt.Errorf("range of %s: %w", p.Column, err)
	}
	if lo == nil || hi == nil {
		return serial("no rows with a %s in the read", p.Column)
	}
	bounds, err := splitRange(lo, hi, p.Max)
	if err != nil {
		return false, err
	}
	n := len(bounds) + 1
	pr := &parallelRead{}
	wctx, cancel := context.WithCancel(context.Background())
	pr.cancel = cancel
	for k := 0; k < n; k++ {
		extra := func(first int) (string, []any) {
			ph := func(j int) string { return placeholder(r.d, first+j) }
			switch {
			case n == 1:
				return "TRUE", nil
			case k == 0:
				return col + " < " + ph(0), []any{bounds[0]}
			case k == n-1:
				return col + " >= " + ph(0) + " OR " + col + " IS NULL", []any{bounds[k-1]}
			}
			return col + " >= " + ph(0) + " AND " + col + " < " + ph(1), []any{bounds[k-1], bounds[k]}
		}
		q, qargs, err := r.query(extra)
		if err != nil {
			pr.stop()
			return false, err
		}
		conn, err := r.db.Conn(wctx)
		if err != nil {
			pr.stop()
			return false, err
		}
		for _, stmt := range []string{"BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", "SET TRANSACTION SNAPSHOT '" + snap + "'"} {
			if _, err := conn.ExecContext(wctx, stmt); err != nil {
				_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
				conn.Close()
				pr.stop()
				return false, fmt.Errorf("range reader %d: %s: %w", k+1, stmt, err)
			}
		}
		ch := make(chan parItem, 4)
		pr.chans = append(pr.chans, ch)
		pr.wg.Add(1)
		go r.readRange(wctx, &pr.wg, conn, q, qargs, ch)
	}
	r.par = pr
	r.parNote = fmt.Sprintf("read in %d ranges of %s in parallel (at most %d), every range in the read's exported snapshot", n, p.Column, p.Max)
	if auto {
		r.parNote += " (no split_by: the first column the read is ordered by)"
	}
	return true, nil
}

// splitRange returns up to max-1 bounds that split [lo, hi] into equal
// ranges (integers, or times by microsecond).
func splitRange(lo, hi any, max int) ([]any, error) {
	var a, b int64
	isTime := false
	switch x := lo.(type) {
	case int64:
		y, ok := hi.(int64)
		if !ok {
			return nil, fmt.Errorf("range bounds of different types %T and %T", lo, hi)
		}
		a, b = x, y
	case time.Time:
		y, ok := hi.(time.Time)
		if !ok {
			return nil, fmt.Errorf("range bounds of different types %T and %T", lo, hi)
		}
		a, b, isTime = x.UnixMicro(), y.UnixMicro(), true
	default:
		return nil, fmt.Errorf("cannot split a range of %T", lo)
	}
	span := new(big.Int).Sub(big.NewInt(b), big.NewInt(a))
	span.Add(span, big.NewInt(1))
	var out []any
	last := a
	for k := 1; k < max; k++ {
		v := new(big.Int).Mul(span, big.NewInt(int64(k)))
		v.Quo(v, big.NewInt(int64(max)))
		v.Add(v, big.NewInt(a))
		bound := v.Int64()
		if bound <= last || bound > b {
			continue
		}
		last = bound
		if isTime {
			out = append(out, time.UnixMicro(bound).UTC())
		} else {
			out = append(out, bound)
		}
	}
	return out, nil
}

// readRange streams one range's rows in chunks.
func (r *Reader) readRange(ctx context.Context, wg *sync.WaitGroup, conn *sql.Conn, q string, args []any, ch chan<- parItem) {
	defer wg.Done()
	defer close(ch)
	defer func() {
		_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
		conn.Close()
	}()
	send := func(it parItem) bool {
		select {
		case ch <- it:
			return true
		case <-ctx.Done():
			return false
		}
	}
	if r.native {
		r.streamPG(ctx, conn, q, args, ch, ctx.Done())
		return
	}
	rows, err := conn.QueryContext(ctx, q, args...)
	if err != nil {
		send(parItem{err: err})
		return
	}
	defer rows.Close()
	dest := make([]any, len(r.cols))
	for i := range dest {
		dest[i] = new(any)
	}
	chunk := make([]source.Row, 0, 1024)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			send(parItem{err: err})
			return
		}
		chunk = append(chunk, r.convert(dest))
		if len(chunk) == cap(chunk) {
			if !send(parItem{rows: chunk}) {
				return
			}
			chunk = make([]source.Row, 0, 1024)
		}
	}
	if err := rows.Err(); err != nil {
		send(parItem{err: err})
		return
	}
	if len(chunk) > 0 {
		send(parItem{rows: chunk})
	}
}

// parNext returns the next row of the ranges, in range order.
func (r *Reader) parNext() (source.Row, error) {
	pr := r.par
	for {
		if len(pr.buf) > 0 {
			row := pr.buf[0]
			pr.buf = pr.buf[1:]
			r.n++
			row.Loc.Row = r.n
			return row, nil
		}
		if pr.cur >= len(pr.chans) {
			r.eof = true
			return source.Row{}, io.EOF
		}
		it, ok := <-pr.chans[pr.cur]
		if !ok {
			pr.cur++
			continue
		}
		if it.err != nil {
			if pr.serial && it.start { // as the serial database/sql read says it
				return source.Row{}, fmt.Errorf("%w: %s: %v", source.ErrUnreadable, r.unit, it.err)
			}
			if pr.serial {
				return source.Row{}, fmt.Errorf("sqldb: %s: %w", r.unit, it.err)
			}
			return source.Row{}, fmt.Errorf("sqldb: %s: range %d: %w", r.unit, pr.cur+1, it.err)
		}
		pr.buf = it.rows
	}
}

// stop cancels the range readers and waits for them.
func (pr *parallelRead) stop() error {
	pr.cancel()
	for _, ch := range pr.chans {
		for range ch {
		}
	}
	pr.wg.Wait()
	return nil
}

// ProbeRow reads at most one row of the table (any row, unordered, so the
// database need not sort) in the reader's snapshot: gate 2's proof that
// the user may read every mapped column. It reports whether a row came
// back. Like Totals it must run before the first Next.
func (r *Reader) ProbeRow(ctx context.Context) (bool, error) {
	if r.closed || r.started {
		return false, fmt.Errorf("sqldb: ProbeRow must run on an open reader before the first Next")
	}
	if len(r.cols) == 0 {
		return false, fmt.Errorf("sqldb: %s has no readable column", r.unit)
	}
	exprs := make([]string, len(r.cols))
	for i, c := range r.cols {
		e, err := r.selectExpr(c)
		if err != nil {
			return false, err
		}
		exprs[i] = e
	}
	schema := r.info.Schema
	if r.d == SQLite {
		schema = ""
	}
	q, err := QuoteQualified(r.d, schema, r.info.Name)
	if err != nil {
		return false, err
	}
	rows, err := r.sess().QueryContext(ctx, probeQuery(r.d, strings.Join(exprs, ", "), q))
	if err != nil {
		return false, err
	}
	defer rows.Close()
	dest := make([]any, len(r.cols))
	for i := range dest {
		dest[i] = new(any)
	}
	got := false
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return false, err
		}
		got = true
	}
	return got, rows.Err()
}

// probeQuery selects at most one row in dialect d.
func probeQuery(d Dialect, exprs, from string) string {
	switch d {
	case SQLServer:
		return "SELECT TOP 1 " + exprs + " FROM " + from
	case Oracle:
		return "SELECT " + exprs + " FROM " + from + " FETCH FIRST 1 ROWS ONLY"
	}
	return "SELECT " + exprs + " FROM " + from + " LIMIT 1"
}
