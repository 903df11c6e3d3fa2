package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lima-lake/lima/engine/source"
)

// ReadRange limits a read to rows whose Column is greater than After (an
// incremental load from a watermark), or at least From (an upsert's
// watermark minus its lookback: >=, so rows equal to the previous maximum
// are read again rather than lost). Bounds are bound as parameters, never
// spliced into the SQL: After as text, From as the Go value given
// (time.Time, int64 or string). An empty After and a nil From read every
// row, still ordered by Column.
//
// OrderKeys orders the rows by these key columns first (then Column), so
// rows of one key are adjacent and Reader.Superseded can tell which of
// them a later row replaces. Column may be empty when only OrderKeys is
// wanted.
type ReadRange struct {
	Column    string
	After     string
	From      any
	OrderKeys []string
}

// Table names one table to read.
type Table struct {
	Schema string // "" for SQLite ("main" also works)
	Name   string
}

// UnitName is schema.table (table alone without a schema).
func (t Table) UnitName() string {
	if t.Schema == "" {
		return t.Name
	}
	return t.Schema + "." + t.Name
}

// Source reads tables of one database as units. It implements
// source.Source: List returns a unit per table (Name = schema.table), Open
// starts a read-only snapshot transaction and streams the table's rows.
type Source struct {
	d      Dialect
	db     *sql.DB
	tables []Table
	ranges map[string]ReadRange // by unit name
	// parallel: range reads by unit name (SetParallel).
	parallel map[string]Parallel
	// fallback: SQL Server's isolation when the database does not allow
	// snapshot isolation (SetSnapshotFallback); "" refuses to read.
	fallback string
	// legacyPG reads PostgreSQL through database/sql's values, as before
	// the native path (pgnative.go): the tests' reference.
	legacyPG bool
}

// New returns a Source over tables of db (dialect Postgres, MySQL,
// SQLite, SQLServer or Oracle). ranges, keyed by unit name (schema.table), are optional
// incremental ranges. db stays the caller's: Source never closes it.
func New(d Dialect, db *sql.DB, tables []Table, ranges map[string]ReadRange) (*Source, error) {
	switch d {
	case Postgres, MySQL, SQLite, SQLServer, Oracle:
	default:
		return nil, fmt.Errorf("sqldb: no driver for dialect %q", d)
	}
	seen := map[string]bool{}
	for _, t := range tables {
		if _, err := QuoteQualified(d, t.Schema, t.Name); err != nil {
			return nil, err
		}
		if seen[t.UnitName()] {
			return nil, fmt.Errorf("sqldb: table %q listed twice (or its schema.table name is ambiguous)", t.UnitName())
		}
		seen[t.UnitName()] = true
	}
	s := &Source{d: d, db: db, tables: slices.Clone(tables), ranges: map[string]ReadRange{}, parallel: map[string]Parallel{}}
	for name, r := range ranges {
		if err := s.SetRange(name, r); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// SetRange sets (or replaces) the read range of the table with unit name
// (schema.table); readers opened afterwards use it.
func (s *Source) SetRange(unit string, r ReadRange) error {
	if !slices.ContainsFunc(s.tables, func(t Table) bool { return t.UnitName() == unit }) {
		return fmt.Errorf("sqldb: range for unknown table %q", unit)
	}
	if r.Column == "" && (r.After != "" || r.From != nil) {
		return fmt.Errorf("sqldb: range of %q has a bound but no column", unit)
	}
	for _, c := range append([]string{r.Column}, r.OrderKeys...) {
		if c == "" && len(r.OrderKeys) > 0 {
			continue
		}
		if _, err := QuoteIdent(s.d, c); err != nil {
			return fmt.Errorf("sqldb: range of %q: %w", unit, err)
		}
	}
	r.OrderKeys = slices.Clone(r.OrderKeys)
	s.ranges[unit] = r
	return nil
}

// List returns the tables whose unit name equals or matches a glob (path.Match; "*"
// and "**" match every table), sorted by name.
func (s *Source) List(ctx context.Context, globs []string) ([]source.Unit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []source.Unit
	for _, t := range s.tables {
		name := t.UnitName()
		for _, g := range globs {
			ok := g == name || g == "*" || g == "**"
			if !ok {
				ok, _ = path.Match(g, name)
			}
			if ok {
				out = append(out, source.Unit{Path: name, Name: name})
				break
			}
		}
	}
	slices.SortFunc(out, func(a, b source.Unit) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func (s *Source) table(u source.Unit) (Table, bool) {
	for _, t := range s.tables {
		if t.UnitName() == u.Name {
			return t, true
		}
	}
	return Table{}, false
}

// Open starts a read-only REPEATABLE READ transaction on a connection of
// its own, fixes its snapshot, and returns a Reader of the table's mapped
// columns (columns Lima cannot map are left out: see Reader.Findings).
// opts is ignored: a database table has no format options. Failures wrap
// source.ErrUnreadable.
func (s *Source) Open(ctx context.Context, u source.Unit, _ source.Options) (source.RowReader, error) {
	return s.OpenTable(ctx, u)
}

// OpenTable is Open returning the concrete *Reader (for Totals).
func (s *Source) OpenTable(ctx context.Context, u source.Unit) (*Reader, error) {
	t, ok := s.table(u)
	if !ok {
		return nil, fmt.Errorf("%w: %s: no such table in this source", source.ErrUnreadable, u.Name)
	}
	info, err := s.describe(ctx, t)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", source.ErrUnreadable, u.Name, err)
	}
	r := &Reader{d: s.d, unit: u.Name, info: info, findings: info.Findings, db: s.db, fallback: s.fallback, legacyPG: s.legacyPG, totalRows: -1}
	if p, ok := s.parallel[u.Name]; ok {
		r.parWant = &p
	}
	if rg, ok := s.ranges[u.Name]; ok {
		r.rng = &rg
		if rg.Column != "" && !slices.ContainsFunc(info.Columns, func(c ColumnInfo) bool { return c.Name == rg.Column }) {
			return nil, fmt.Errorf("%w: %s: watermark column %q not found", source.ErrUnreadable, u.Name, rg.Column)
		}
	}
	for _, c := range info.Columns {
		if c.PlanType != "" {
			r.cols = append(r.cols, c)
			r.names = append(r.names, c.Name)
		}
	}
	if r.rng != nil {
		for _, k := range r.rng.OrderKeys {
			i := slices.Index(r.names, k)
			if i < 0 {
				return nil, fmt.Errorf("%w: %s: key column %q not found among the readable columns", source.ErrUnreadable, u.Name, k)
			}
			r.keyIdx = append(r.keyIdx, i)
		}
	}
	if err := r.begin(ctx, s.db); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", source.ErrUnreadable, u.Name, err)
	}
	return r, nil
}

// describe discovers one table.
func (s *Source) describe(ctx context.Context, t Table) (TableInfo, error) {
	schema := t.Schema
	if s.d == SQLite {
		schema = "main"
	}
	var schemas []string
	if s.d != SQLite {
		schemas = []string{schema}
	}
	all, err := Discover(ctx, s.d, s.db, schemas...)
	if err != nil {
		return TableInfo{}, err
	}
	for _, ti := range all {
		if ti.Schema == schema && ti.Name == t.Name {
			ti.Schema = t.Schema
			for i := range ti.Findings {
				ti.Findings[i].Table = t.UnitName()
			}
			return ti, nil
		}
	}
	return TableInfo{}, fmt.Errorf("table not found")
}

// Reader streams one table inside its snapshot transaction. Call Totals
// before the first Next to reconcile against the same snapshot.
type Reader struct {
	d        Dialect
	unit     string
	info     TableInfo
	cols     []ColumnInfo
	names    []string
	findings []Finding
	rng      *ReadRange
	keyIdx   []int // positions of rng.OrderKeys in cols

	// Lookahead (only with OrderKeys): the row after the one Next
	// returned, and whether that row replaces it.
	peek       *source.Row
	peekErr    error
	superseded bool

	// Parallel range reads (see Source.SetParallel).
	db      *sql.DB
	parWant *Parallel
	par     *parallelRead
	parNote string

	// native: PostgreSQL rows are read through pgx and decoded from the
	// binary results (pgnative.go); legacyPG turns it off.
	native   bool
	legacyPG bool

	conn *sql.Conn
	tx   *sql.Tx // SQL Server and Oracle: the snapshot transaction
	// fallback and isolation: see Source.SetSnapshotFallback and
	// Reader.Isolation.
	fallback  string
	isolation string
	rows      *sql.Rows
	dest      []any
	// totalRows is Totals' count (-1 before it ran).
	totalRows int64
	n         int64
	started   bool
	eof       bool
	closed    bool
}

var _ source.RowReader = (*Reader)(nil)

// Columns are the mapped columns, in table order.
func (r *Reader) Columns() []string { return slices.Clone(r.names) }

// PlanTypes are the Lima types of Columns.
func (r *Reader) PlanTypes() []string {
	out := make([]string, len(r.cols))
	for i, c := range r.cols {
		out[i] = c.PlanType
	}
	return out
}

// Findings are the columns left out because Lima cannot map their type.
func (r *Reader) Findings() []Finding { return slices.Clone(r.findings) }

// Table is the discovered table.
func (r *Reader) Table() TableInfo { return r.info }

func (r *Reader) begin(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	if r.d == SQLServer || r.d == Oracle {
		return r.beginTx(ctx, conn)
	}
	var stmts []string
	switch r.d {
	case Postgres:
		// SELECT 1 takes the snapshot now, not at the first read.
		stmts = []string{"BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", "SELECT 1"}
	case MySQL:
		stmts = []string{"SET SESSION time_zone = '+00:00'", "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
			"START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY"}
	case SQLite:
		// A deferred transaction takes its snapshot at its first read.
		stmts = []string{"BEGIN DEFERRED", "SELECT count(*) FROM sqlite_schema"}
	}
	for _, q := range stmts {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
			conn.Close()
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	r.conn = conn
	r.native = r.d == Postgres && !r.legacyPG && nativeUsable(conn)
	return nil
}

func (r *Reader) from() (string, []any, error) { return r.fromWhere(nil) }

// fromWhere is the FROM clause with the range condition and, when extra is
// given, a further condition ANDed to it; extra receives the number of its
// first placeholder.
func (r *Reader) fromWhere(extra func(first int) (string, []any)) (string, []any, error) {
	schema := r.info.Schema
	if r.d == SQLite {
		schema = ""
	}
	q, err := QuoteQualified(r.d, schema, r.info.Name)
	if err != nil {
		return "", nil, err
	}
	sqlText := " FROM " + q
	var args []any
	if r.rng != nil && (r.rng.After != "" || r.rng.From != nil) {
		c, err := QuoteIdent(r.d, r.rng.Column)
		if err != nil {
			return "", nil, err
		}
		if r.rng.From != nil {
			sqlText += " WHERE " + c + " >= " + placeholder(r.d, 1)
			args = append(args, r.rng.From)
		} else {
			sqlText += " WHERE " + c + " > " + placeholder(r.d, 1)
			args = append(args, r.rng.After)
		}
	}
	if extra != nil {
		cond, xargs := extra(len(args) + 1)
		if len(args) == 0 {
			sqlText += " WHERE (" + cond + ")"
		} else {
			sqlText += " AND (" + cond + ")"
		}
		args = append(args, xargs...)
	}
	return sqlText, args, nil
}

// selectExpr is the select-list expression of a column: the quoted name,
// or a conversion in SQL where the driver's text is not Lima's.
func (r *Reader) selectExpr(c ColumnInfo) (string, error) {
	q, err := QuoteIdent(r.d, c.Name)
	if err != nil {
		return "", err
	}
	switch r.d {
	case Postgres:
		switch {
		case c.Array:
			return "array_to_json(" + q + ")::text", nil
		case c.DBType == "money":
			return q + "::numeric(19,2)::text", nil
		}
	case SQLServer:
		// datetimeoffset as ISO 8601 in UTC; uniqueidentifier as its
		// canonical text (the driver's bytes depend on a DSN option).
		switch {
		case strings.HasPrefix(c.DBType, "datetimeoffset"):
			return "CONVERT(VARCHAR(40), SWITCHOFFSET(" + q + ", 0), 127)", nil
		case c.DBType == "uniqueidentifier":
			return "CONVERT(CHAR(36), " + q + ")", nil
		}
	case Oracle:
		// Zoned timestamps in UTC; NUMBER without precision and intervals
		// as their exact text.
		switch {
		case strings.HasPrefix(c.DBType, "timestamp") && strings.Contains(c.DBType, "time zone"):
			return "TO_CHAR(SYS_EXTRACT_UTC(" + q + `), 'YYYY-MM-DD"T"HH24:MI:SS.FF6"Z"')`, nil
		case c.PlanType == "string" && (c.DBType == "number" || strings.HasPrefix(c.DBType, "float") || strings.HasPrefix(c.DBType, "interval")):
			return "TO_CHAR(" + q + ")", nil
		}
	}
	return q, nil
}

// Query is the SELECT the reader runs and its bind parameters.
func (r *Reader) Query() (string, []any, error) { return r.query(nil) }

// orderColumns are the columns of the read's ORDER BY, in order.
func (r *Reader) orderColumns() []string {
	var order []string
	if r.rng != nil {
		order = append(order, r.rng.OrderKeys...)
		if r.rng.Column != "" && !slices.Contains(order, r.rng.Column) {
			order = append(order, r.rng.Column)
		}
	}
	for _, k := range r.info.PrimaryKey {
		if !slices.Contains(order, k) {
			order = append(order, k)
		}
	}
	return order
}

func (r *Reader) query(extra func(first int) (string, []any)) (string, []any, error) {
	if len(r.cols) == 0 {
		return "", nil, fmt.Errorf("no readable columns")
	}
	exprs := make([]string, len(r.cols))
	for i, c := range r.cols {
		e, err := r.selectExpr(c)
		if err != nil {
			return "", nil, err
		}
		exprs[i] = e
	}
	from, args, err := r.fromWhere(extra)
	if err != nil {
		return "", nil, err
	}
	order := r.orderColumns()
	q := "SELECT " + strings.Join(exprs, ", ") + from
	if len(order) > 0 {
		for i, o := range order {
			if order[i], err = QuoteIdent(r.d, o); err != nil {
				return "", nil, err
			}
		}
		q += " ORDER BY " + strings.Join(order, ", ")
	}
	return q, args, nil
}

// Totals counts the rows in the reader's range and sums columns (nil:
// every int, long and decimal column) exactly, as text, in the reader's
// snapshot. It must run before the first Next. A sum over no non-null
// values is "0".
func (r *Reader) Totals(ctx context.Context, columns []string) (int64, map[string]string, error) {
	if r.closed {
		return 0, nil, errors.New("sqldb: Totals on a closed reader")
	}
	if r.started {
		return 0, nil, errors.New("sqldb: Totals must run before the first Next (one statement at a time per snapshot connection)")
	}
	if columns == nil {
		for _, c := range r.cols {
			if c.PlanType == "int" || c.PlanType == "long" || strings.HasPrefix(c.PlanType, "decimal") {
				columns = append(columns, c.Name)
			}
		}
	}
	query, args, err := r.TotalsQuery(columns)
	if err != nil {
		return 0, nil, err
	}
	vals := make([]sql.NullString, len(columns))
	dest := []any{new(int64)}
	for i := range vals {
		dest = append(dest, &vals[i])
	}
	if err := r.sess().QueryRowContext(ctx, query, args...).Scan(dest...); err != nil {
		return 0, nil, fmt.Errorf("sqldb: totals of %s: %w", r.unit, err)
	}
	sums := map[string]string{}
	for i, c := range columns {
		sums[c] = "0"
		if vals[i].Valid {
			sums[c] = vals[i].String
			if r.d == Oracle {
				sums[c] = oracleText(ColumnInfo{DBType: "number", PlanType: "string"}, sums[c]) // TO_CHAR's ".5"
			}
		}
	}
	r.totalRows = *dest[0].(*int64)
	return r.totalRows, sums, nil
}

// Next returns the next row: Kind Data, Values in canonical text, Nulls
// for SQL NULL, Loc.Row the 1-based row number, Raw nil.
func (r *Reader) Next() (source.Row, error) {
	if len(r.keyIdx) == 0 {
		return r.next()
	}
	// Rows are ordered by key: look one row ahead to see whether the next
	// row has the same key (and so replaces this one).
	if r.peek == nil && r.peekErr == nil {
		row, err := r.next()
		r.peek, r.peekErr = &row, err
	}
	if r.peekErr != nil {
		r.superseded = false
		return source.Row{}, r.peekErr
	}
	cur := *r.peek
	row, err := r.next()
	r.peek, r.peekErr = &row, err
	r.superseded = err == nil && sameKey(cur, row, r.keyIdx)
	return cur, nil
}

// Superseded reports whether the row Next returned last has the same key
// as the row after it — a later version of the same key in read order
// (rows are ordered by ReadRange.OrderKeys, then the watermark column, then
// the primary key), which replaces it. Always false without OrderKeys.
func (r *Reader) Superseded() bool { return r.superseded }

func sameKey(a, b source.Row, idx []int) bool {
	for _, i := range idx {
		an := a.Nulls != nil && a.Nulls[i]
		bn := b.Nulls != nil && b.Nulls[i]
		if an || bn || a.Values[i] != b.Values[i] {
			return false // a null key identifies nothing
		}
	}
	return true
}

// Keys reads the given key columns of every row of the table (ignoring the
// read range) in the reader's snapshot and calls fn with each row's values
// in canonical text (nulls marked). Like Totals it must run before the
// first Next. Delete detection compares them with the lake's keys.
func (r *Reader) Keys(ctx context.Context, columns []string, fn func(vals []string, nulls []bool) error) error {
	return r.KeysExcept(ctx, columns, "", fn)
}

// KeysExcept is Keys leaving out the rows whose boolean column flag is
// true (rows marked deleted at the source); an empty flag leaves out none.
func (r *Reader) KeysExcept(ctx context.Context, columns []string, flag string, fn func(vals []string, nulls []bool) error) error {
	if r.closed {
		return errors.New("sqldb: Keys on a closed reader")
	}
	if r.started {
		return errors.New("sqldb: Keys must run before the first Next (one statement at a time per snapshot connection)")
	}
	var exprs []string
	var kcols []ColumnInfo
	for _, k := range columns {
		i := slices.Index(r.names, k)
		if i < 0 {
			return fmt.Errorf("sqldb: key column %q is not a readable column of %s", k, r.unit)
		}
		e, err := r.selectExpr(r.cols[i])
		if err != nil {
			return err
		}
		exprs = append(exprs, e)
		kcols = append(kcols, r.cols[i])
	}
	if len(exprs) == 0 {
		return errors.New("sqldb: Keys needs at least one column")
	}
	schema := r.info.Schema
	if r.d == SQLite {
		schema = ""
	}
	q, err := QuoteQualified(r.d, schema, r.info.Name)
	if err != nil {
		return err
	}
	where := ""
	if flag != "" {
		f, err := QuoteIdent(r.d, flag)
		if err != nil {
			return err
		}
		where = " WHERE " + f + " IS NOT TRUE"
		if r.d == SQLServer || r.d == Oracle {
			// No IS NOT TRUE: the flag is a bit (SQL Server) or a NUMBER(1) (Oracle).
			where = " WHERE (" + f + " IS NULL OR " + f + " <> 1)"
		}
	}
	rows, err := r.sess().QueryContext(ctx, "SELECT "+strings.Join(exprs, ", ")+" FROM "+q+where)
	if err != nil {
		return fmt.Errorf("sqldb: keys of %s: %w", r.unit, err)
	}
	defer rows.Close()
	dest := make([]any, len(exprs))
	for i := range dest {
		dest[i] = new(any)
	}
	vals := make([]string, len(exprs))
	nulls := make([]bool, len(exprs))
	for n := 0; rows.Next(); n++ {
		if n&4095 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("sqldb: keys of %s: %w", r.unit, err)
		}
		for i := range dest {
			v := *(dest[i].(*any))
			nulls[i] = v == nil
			vals[i] = ""
			if v != nil {
				vals[i] = cellText(r.d, kcols[i], v)
			}
		}
		if err := fn(vals, nulls); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqldb: keys of %s: %w", r.unit, err)
	}
	return nil
}

func (r *Reader) next() (source.Row, error) {
	if r.closed {
		return source.Row{}, errors.New("sqldb: Next on a closed reader")
	}
	if r.eof {
		return source.Row{}, io.EOF
	}
	if !r.started && r.parWant != nil {
		ok, err := r.startParallel(context.Background())
		if err != nil {
			return source.Row{}, fmt.Errorf("%w: %s: %v", source.ErrUnreadable, r.unit, err)
		}
		r.started = ok
	}
	if r.par != nil {
		return r.parNext()
	}
	if !r.started && r.native {
		r.started = true
		if err := r.startSerialPG(); err != nil {
			return source.Row{}, fmt.Errorf("%w: %s: %v", source.ErrUnreadable, r.unit, err)
		}
		return r.parNext()
	}
	if !r.started {
		r.started = true
		q, args, err := r.Query()
		if err != nil {
			return source.Row{}, fmt.Errorf("%w: %s: %v", source.ErrUnreadable, r.unit, err)
		}
		// The rows outlive Open's context: the reader's lifetime is Close.
		rows, err := r.sess().QueryContext(context.Background(), q, args...)
		if err != nil {
			return source.Row{}, fmt.Errorf("%w: %s: %v", source.ErrUnreadable, r.unit, err)
		}
		r.rows = rows
		r.dest = make([]any, len(r.cols))
		for i := range r.dest {
			r.dest[i] = new(any)
		}
	}
	if !r.rows.Next() {
		r.eof = true
		if err := r.rows.Err(); err != nil {
			return source.Row{}, fmt.Errorf("sqldb: %s: %w", r.unit, err)
		}
		return source.Row{}, io.EOF
	}
	if err := r.rows.Scan(r.dest...); err != nil {
		return source.Row{}, fmt.Errorf("sqldb: %s: %w", r.unit, err)
	}
	r.n++
	row := r.convert(r.dest)
	row.Loc.Row = r.n
	return row, nil
}

// convert turns scanned driver values into a row (Loc.Row left to the
// caller).
func (r *Reader) convert(dest []any) source.Row {
	row := source.Row{Kind: source.Data, Values: make([]string, len(r.cols)), Loc: source.Locator{Unit: r.unit}}
	for i, c := range r.cols {
		v := *(dest[i].(*any))
		if v == nil {
			if row.Nulls == nil {
				row.Nulls = make([]bool, len(r.cols))
			}
			row.Nulls[i] = true
			continue
		}
		row.Values[i] = cellText(r.d, c, v)
	}
	return row
}

// Close ends the transaction (ROLLBACK: it only read) and returns the
// connection. It is idempotent.
func (r *Reader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	var errs []error
	if r.par != nil {
		errs = append(errs, r.par.stop())
	}
	if r.rows != nil {
		errs = append(errs, r.rows.Close())
	}
	if r.tx != nil {
		errs = append(errs, r.tx.Rollback())
	}
	if r.conn != nil && r.tx == nil {
		if _, err := r.conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
			errs = append(errs, err)
		}
		if r.d == MySQL {
			// Hand the pooled connection back with its own time zone.
			if _, err := r.conn.ExecContext(context.Background(), "SET SESSION time_zone = @@GLOBAL.time_zone"); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if r.conn != nil {
		errs = append(errs, r.conn.Close())
	}
	return errors.Join(errs...)
}

// Text renders a driver value as the canonical text of planType (see
// clean.FormatCell), so that Lima's caster reads back the same value.
// Doubles are the exception: FormatCell writes exponents ("1e+300") that
// the caster refuses, so they are written as the shortest plain decimal
// that parses back to the same float.
func Text(planType string, v any) string {
	switch x := v.(type) {
	case []byte:
		return textOf(planType, string(x))
	case string:
		return textOf(planType, x)
	case time.Time:
		switch planType {
		case "date":
			return x.Format("2006-01-02")
		case "timestamptz":
			return x.UTC().Format("2006-01-02T15:04:05.000000Z")
		case "timestamp":
			return x.Format("2006-01-02T15:04:05.000000")
		}
		return x.Format(time.RFC3339Nano)
	case bool:
		return strconv.FormatBool(x)
	case int64:
		if planType == "boolean" && (x == 0 || x == 1) {
			return strconv.FormatBool(x == 1)
		}
		if sc, ok := decimalScale(planType); ok {
			return padScale(strconv.FormatInt(x, 10), sc)
		}
		return strconv.FormatInt(x, 10)
	case float64:
		if sc, ok := decimalScale(planType); ok {
			return padScale(strconv.FormatFloat(x, 'f', -1, 64), sc)
		}
		return strconv.FormatFloat(x, 'f', -1, 64)
	case float32:
		return strconv.FormatFloat(float64(x), 'f', -1, 32)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int16:
		return strconv.FormatInt(int64(x), 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	}
	return fmt.Sprint(v)
}

// textOf normalizes a driver's text form.
func textOf(planType, s string) string {
	switch planType {
	case "boolean":
		switch s {
		case "1", "t":
			return "true"
		case "0", "f":
			return "false"
		}
	case "timestamp", "timestamptz":
		// MySQL (without parseTime) and SQLite texts: 2006-01-02 15:04:05[.ffffff].
		if planType == "timestamptz" {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				return t.UTC().Format("2006-01-02T15:04:05.000000Z")
			}
		}
		for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02T15:04:05"} {
			if t, err := time.Parse(layout, s); err == nil {
				if planType == "timestamptz" {
					return t.Format("2006-01-02T15:04:05.000000Z")
				}
				return t.Format("2006-01-02T15:04:05.000000")
			}
		}
	case "double":
		// The caster reads no exponent: write the shortest plain decimal
		// that parses back to the same float.
		if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			return strconv.FormatFloat(f, 'f', -1, 64)
		}
	default:
		if sc, ok := decimalScale(planType); ok {
			return padScale(s, sc)
		}
	}
	return s
}

// decimalScale is s of "decimal(p,s)".
func decimalScale(planType string) (int, bool) {
	rest, ok := strings.CutPrefix(planType, "decimal(")
	if !ok {
		return 0, false
	}
	_, sc, ok := strings.Cut(strings.TrimSuffix(rest, ")"), ",")
	if !ok {
		return 0, true
	}
	n, err := strconv.Atoi(sc)
	return n, err == nil
}

// padScale writes a plain decimal with exactly scale fraction digits when
// that only adds zeros; anything else is left for the caster to judge.
func padScale(s string, scale int) string {
	if s == "" || strings.ContainsAny(s, "eE") {
		return s
	}
	intPart, frac, _ := strings.Cut(s, ".")
	if len(frac) > scale {
		return s
	}
	frac += strings.Repeat("0", scale-len(frac))
	if scale == 0 {
		return intPart
	}
	return intPart + "." + frac
}

// TotalsQuery is the statement Totals runs: the row count and the exact
// sum of each column, as text, over the read's range. SQL Server counts
// with COUNT_BIG and sums in DECIMAL(38,s) (its SUM of an int would
// overflow at 2^31); Oracle's NUMBER sums exactly.
func (r *Reader) TotalsQuery(columns []string) (string, []any, error) {
	count := "count(*)"
	if r.d == SQLServer {
		count = "COUNT_BIG(*)"
	}
	exprs := []string{count}
	for _, c := range columns {
		q, err := QuoteIdent(r.d, c)
		if err != nil {
			return "", nil, err
		}
		switch r.d {
		case MySQL:
			exprs = append(exprs, "CAST(SUM("+q+") AS CHAR)")
		case SQLServer:
			scale := 0
			for _, ci := range r.cols {
				if ci.Name == c {
					scale, _ = decimalScale(ci.PlanType)
				}
			}
			exprs = append(exprs, fmt.Sprintf("CAST(SUM(CAST(%s AS DECIMAL(38,%d))) AS VARCHAR(50))", q, scale))
		case Oracle:
			exprs = append(exprs, "TO_CHAR(SUM("+q+"))")
		default:
			exprs = append(exprs, "CAST(SUM("+q+") AS TEXT)")
		}
	}
	from, args, err := r.from()
	if err != nil {
		return "", nil, err
	}
	return "SELECT " + strings.Join(exprs, ", ") + from, args, nil
}
