package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
)

// ColumnInfo is one column of a discovered table.
type ColumnInfo struct {
	Name      string
	DBType    string // as the catalog spells it, with parameters when known
	Precision int    // numeric precision, 0 when not declared
	Scale     int
	Nullable  bool
	// PlanType is the Lima type (MapType); empty when Lima cannot map it.
	PlanType string
	Note     string
	// Array: a PostgreSQL array, read as JSON text.
	Array bool
}

// IndexInfo is one index.
type IndexInfo struct {
	Name    string
	Columns []string
	Unique  bool
	Primary bool
}

// TableInfo is one discovered table.
type TableInfo struct {
	Schema     string
	Name       string
	Columns    []ColumnInfo
	PrimaryKey []string
	Indexes    []IndexInfo
	// RowEstimate: pg_class.reltuples (PostgreSQL), table_rows (MySQL),
	// count(*) (SQLite); -1 when unknown (a PostgreSQL table never analyzed).
	RowEstimate int64
	// Watermark is the suggested incremental column ("" when none) and
	// WatermarkReason why.
	Watermark       string
	WatermarkReason string
	// Findings are the columns Lima cannot map; they are not extracted.
	Findings []Finding
}

// UnitName is the unit name of the table: schema.table (table alone
// without a schema).
func (t TableInfo) UnitName() string {
	if t.Schema == "" {
		return t.Name
	}
	return t.Schema + "." + t.Name
}

// Discover lists the base tables of db (dialect d) with their columns,
// keys, indexes, row estimates and a suggested watermark. schemas limits
// the schemas (MySQL: databases; SQLite: "main"); none means every
// non-system schema. Tables are sorted by schema, then name.
func Discover(ctx context.Context, d Dialect, db *sql.DB, schemas ...string) ([]TableInfo, error) {
	var tables []TableInfo
	var err error
	switch d {
	case Postgres:
		tables, err = discoverPostgres(ctx, db, schemas)
	case MySQL:
		tables, err = discoverMySQL(ctx, db, schemas)
	case SQLite:
		tables, err = discoverSQLite(ctx, db)
	case SQLServer:
		tables, err = discoverSQLServer(ctx, db, schemas)
	case Oracle:
		tables, err = discoverOracle(ctx, db, schemas)
	default:
		return nil, fmt.Errorf("sqldb: discovery of %s is not supported", d)
	}
	if err != nil {
		return nil, fmt.Errorf("sqldb: discover %s: %w", d, err)
	}
	for i := range tables {
		finish(d, &tables[i])
	}
	return tables, nil
}

// finish maps the column types and suggests a watermark.
func finish(d Dialect, t *TableInfo) {
	for i := range t.Columns {
		c := &t.Columns[i]
		typ := c.DBType
		if c.Array {
			typ = "array"
		}
		pt, note, ok := MapType(d, typ, c.Precision, c.Scale)
		if ok {
			c.PlanType, c.Note = pt, note
		} else {
			t.Findings = append(t.Findings, Finding{Table: t.UnitName(), Column: c.Name, DBType: c.DBType, Reason: note})
		}
	}
	t.Watermark, t.WatermarkReason = suggestWatermark(*t)
}

// suggestWatermark prefers an indexed timestamp whose name says "updated",
// "modified" or "changed", then any indexed timestamp, then a single-column
// integer primary key (monotonic when it is a sequence/auto-increment).
func suggestWatermark(t TableInfo) (string, string) {
	types := map[string]string{}
	for _, c := range t.Columns {
		types[c.Name] = c.PlanType
	}
	var leading []string // first columns of indexes
	for _, ix := range t.Indexes {
		if len(ix.Columns) > 0 && !slices.Contains(leading, ix.Columns[0]) {
			leading = append(leading, ix.Columns[0])
		}
	}
	isTime := func(c string) bool { return types[c] == "timestamp" || types[c] == "timestamptz" }
	for _, c := range leading {
		n := strings.ToLower(c)
		if isTime(c) && (strings.Contains(n, "updated") || strings.Contains(n, "modified") || strings.Contains(n, "changed")) {
			return c, "indexed timestamp named like a last-update time"
		}
	}
	for _, c := range leading {
		if isTime(c) {
			return c, "indexed timestamp (check that it only grows)"
		}
	}
	if len(t.PrimaryKey) == 1 {
		if ty := types[t.PrimaryKey[0]]; ty == "int" || ty == "long" || ty == "decimal(20,0)" {
			return t.PrimaryKey[0], "integer primary key: a watermark only if ids are assigned increasingly (sequence, auto-increment)"
		}
	}
	return "", "no indexed timestamp and no integer primary key: read the table in full"
}

func wantSchema(schemas []string, s string) bool {
	return len(schemas) == 0 || slices.Contains(schemas, s)
}

// tableSet collects tables by schema and name in discovery order.
type tableSet struct {
	order []*TableInfo
	by    map[[2]string]*TableInfo
}

func (ts *tableSet) get(schema, name string) *TableInfo {
	if ts.by == nil {
		ts.by = map[[2]string]*TableInfo{}
	}
	k := [2]string{schema, name}
	if t, ok := ts.by[k]; ok {
		return t
	}
	t := &TableInfo{Schema: schema, Name: name, RowEstimate: -1}
	ts.by[k] = t
	ts.order = append(ts.order, t)
	return t
}

func (ts *tableSet) lookup(schema, name string) *TableInfo { return ts.by[[2]string{schema, name}] }

// indexRow reads one (schema, table, index, unique, primary, column) row of
// an index query: the column joins its index, and the primary key when the
// index is the primary key's.
func (ts *tableSet) indexRow(r *sql.Rows) error {
	var s, n, ix, col string
	var unique, primary bool
	if err := r.Scan(&s, &n, &ix, &unique, &primary, &col); err != nil {
		return err
	}
	if t := ts.lookup(s, n); t != nil {
		addIndexColumn(t, ix, col, unique, primary)
		if primary {
			t.PrimaryKey = append(t.PrimaryKey, col)
		}
	}
	return nil
}

func (ts *tableSet) list() []TableInfo {
	out := make([]TableInfo, 0, len(ts.order))
	for _, t := range ts.order {
		out = append(out, *t)
	}
	slices.SortFunc(out, func(a, b TableInfo) int {
		if c := strings.Compare(a.Schema, b.Schema); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

func addIndexColumn(t *TableInfo, name, col string, unique, primary bool) {
	for i := range t.Indexes {
		if t.Indexes[i].Name == name {
			t.Indexes[i].Columns = append(t.Indexes[i].Columns, col)
			return
		}
	}
	t.Indexes = append(t.Indexes, IndexInfo{Name: name, Columns: []string{col}, Unique: unique, Primary: primary})
}

func each(ctx context.Context, db *sql.DB, q string, args []any, scan func(*sql.Rows) error) error {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

func discoverPostgres(ctx context.Context, db *sql.DB, schemas []string) ([]TableInfo, error) {
	var ts tableSet
	const sys = `n.nspname NOT IN ('pg_catalog','information_schema') AND n.nspname NOT LIKE 'pg\_toast%' AND n.nspname NOT LIKE 'pg\_temp%'`
	err := each(ctx, db, `SELECT n.nspname, c.relname, c.reltuples::bigint FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind IN ('r','p') AND `+sys+` ORDER BY 1, 2`, nil, func(r *sql.Rows) error {
		var s, n string
		var est int64
		if err := r.Scan(&s, &n, &est); err != nil {
			return err
		}
		if wantSchema(schemas, s) {
			ts.get(s, n).RowEstimate = est
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = each(ctx, db, `SELECT n.nspname, c.relname, a.attname, format_type(a.atttypid, a.atttypmod), t.typname,
			NOT a.attnotnull, information_schema._pg_numeric_precision(a.atttypid, a.atttypmod),
			information_schema._pg_numeric_scale(a.atttypid, a.atttypmod), t.typcategory = 'A'
		FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		JOIN pg_type t ON t.oid = a.atttypid
		WHERE c.relkind IN ('r','p') AND a.attnum > 0 AND NOT a.attisdropped AND `+sys+`
		ORDER BY n.nspname, c.relname, a.attnum`, nil, func(r *sql.Rows) error {
		var s, n string
		var c ColumnInfo
		var typname string
		var p, sc sql.NullInt64
		if err := r.Scan(&s, &n, &c.Name, &c.DBType, &typname, &c.Nullable, &p, &sc, &c.Array); err != nil {
			return err
		}
		if t := ts.lookup(s, n); t != nil {
			c.Precision, c.Scale = int(p.Int64), int(sc.Int64)
			if typname == "numeric" && !p.Valid {
				c.Precision = 0
			}
			if !slices.Contains([]string{"numeric", "int2", "int4", "int8", "float4", "float8", "money"}, typname) {
				c.Precision, c.Scale = 0, 0
			}
			t.Columns = append(t.Columns, c)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = each(ctx, db, `SELECT n.nspname, t.relname, ic.relname, ix.indisunique, ix.indisprimary, a.attname
		FROM pg_index ix JOIN pg_class t ON t.oid = ix.indrelid JOIN pg_class ic ON ic.oid = ix.indexrelid
		JOIN pg_namespace n ON n.oid = t.relnamespace
		CROSS JOIN LATERAL unnest(ix.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
		JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
		WHERE `+sys+` ORDER BY 1, 2, 3, k.ord`, nil, ts.indexRow)
	if err != nil {
		return nil, err
	}
	return ts.list(), nil
}

var mysqlSystem = []string{"information_schema", "mysql", "performance_schema", "sys"}

func discoverMySQL(ctx context.Context, db *sql.DB, schemas []string) ([]TableInfo, error) {
	var ts tableSet
	keep := func(s string) bool { return wantSchema(schemas, s) && !slices.Contains(mysqlSystem, s) }
	err := each(ctx, db, `SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_ROWS FROM information_schema.TABLES
		WHERE TABLE_TYPE = 'BASE TABLE' ORDER BY 1, 2`, nil, func(r *sql.Rows) error {
		var s, n string
		var est sql.NullInt64
		if err := r.Scan(&s, &n, &est); err != nil {
			return err
		}
		if keep(s) {
			t := ts.get(s, n)
			if est.Valid {
				t.RowEstimate = est.Int64
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = each(ctx, db, `SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE = 'YES',
			NUMERIC_PRECISION, NUMERIC_SCALE FROM information_schema.COLUMNS ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION`, nil,
		func(r *sql.Rows) error {
			var s, n string
			var c ColumnInfo
			var p, sc sql.NullInt64
			if err := r.Scan(&s, &n, &c.Name, &c.DBType, &c.Nullable, &p, &sc); err != nil {
				return err
			}
			if t := ts.lookup(s, n); t != nil {
				c.Precision, c.Scale = int(p.Int64), int(sc.Int64)
				t.Columns = append(t.Columns, c)
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	err = each(ctx, db, `SELECT TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, NON_UNIQUE = 0, COLUMN_NAME FROM information_schema.STATISTICS
		ORDER BY TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX`, nil, func(r *sql.Rows) error {
		var s, n, ix string
		var col sql.NullString
		var unique bool
		if err := r.Scan(&s, &n, &ix, &unique, &col); err != nil {
			return err
		}
		if t := ts.lookup(s, n); t != nil && col.Valid {
			addIndexColumn(t, ix, col.String, unique, ix == "PRIMARY")
			if ix == "PRIMARY" {
				t.PrimaryKey = append(t.PrimaryKey, col.String)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ts.list(), nil
}

func discoverSQLite(ctx context.Context, db *sql.DB) ([]TableInfo, error) {
	var ts tableSet
	var names []string
	err := each(ctx, db, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`, nil,
		func(r *sql.Rows) error {
			var n string
			if err := r.Scan(&n); err != nil {
				return err
			}
			names = append(names, n)
			return nil
		})
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		t := ts.get("main", n)
		var pk []struct {
			col string
			pos int
		}
		err := each(ctx, db, `SELECT name, type, "notnull", pk FROM pragma_table_info(?) ORDER BY cid`, []any{n}, func(r *sql.Rows) error {
			var c ColumnInfo
			var notNull bool
			var pos int
			if err := r.Scan(&c.Name, &c.DBType, &notNull, &pos); err != nil {
				return err
			}
			c.Nullable = !notNull
			t.Columns = append(t.Columns, c)
			if pos > 0 {
				pk = append(pk, struct {
					col string
					pos int
				}{c.Name, pos})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		slices.SortFunc(pk, func(a, b struct {
			col string
			pos int
		}) int {
			return a.pos - b.pos
		})
		for _, k := range pk {
			t.PrimaryKey = append(t.PrimaryKey, k.col)
		}
		type ix struct {
			name    string
			unique  bool
			primary bool
		}
		var ixs []ix
		err = each(ctx, db, `SELECT name, "unique", origin FROM pragma_index_list(?) ORDER BY name`, []any{n}, func(r *sql.Rows) error {
			var x ix
			var origin string
			if err := r.Scan(&x.name, &x.unique, &origin); err != nil {
				return err
			}
			x.primary = origin == "pk"
			ixs = append(ixs, x)
			return nil
		})
		if err != nil {
			return nil, err
		}
		for _, x := range ixs {
			err = each(ctx, db, `SELECT name FROM pragma_index_info(?) ORDER BY seqno`, []any{x.name}, func(r *sql.Rows) error {
				var col sql.NullString
				if err := r.Scan(&col); err != nil {
					return err
				}
				if col.Valid {
					addIndexColumn(t, x.name, col.String, x.unique, x.primary)
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
		if len(t.PrimaryKey) == 1 && !slices.ContainsFunc(t.Indexes, func(i IndexInfo) bool { return i.Primary }) {
			// INTEGER PRIMARY KEY is the rowid: indexed without an index entry.
			t.Indexes = append(t.Indexes, IndexInfo{Name: "rowid", Columns: slices.Clone(t.PrimaryKey), Unique: true, Primary: true})
		}
		q, err := QuoteIdent(SQLite, n)
		if err != nil {
			return nil, err
		}
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+q).Scan(&t.RowEstimate); err != nil {
			return nil, err
		}
	}
	return ts.list(), nil
}
