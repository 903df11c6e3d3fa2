package sqldb

// SQL Server (github.com/microsoft/go-mssqldb) and Oracle
// (github.com/sijms/go-ora/v2), both pure Go: opening, the snapshot
// transaction, discovery and the conversion of the drivers' values.
//
// No SQL Server or Oracle server runs on the test machines: this code is
// tested through its generated SQL, its type mapping and its value
// conversion (mssql_oracle_test.go, mssql_oracle_values_test.go), not
// against a live server.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	mssql "github.com/microsoft/go-mssqldb" // database/sql driver "sqlserver"
	_ "github.com/sijms/go-ora/v2"          // database/sql driver "oracle"
)

// SnapshotSerializable is the one SQL Server snapshot fallback: read under
// SERIALIZABLE locks (consistent, but writers to the table wait until the
// read ends).
const SnapshotSerializable = "serializable"

// ErrNoSnapshot: the SQL Server database does not allow snapshot
// isolation and the plan names no fallback.
var ErrNoSnapshot = errors.New("sqldb: snapshot isolation is not allowed in this SQL Server database")

// openMSSQLOracle opens SQL Server (a sqlserver:// URL or an ADO string)
// or Oracle (an oracle://user:password@host:port/service URL). The
// drivers parse the DSN here; a bad DSN errors before any connection.
func openMSSQLOracle(d Dialect, dsn string) (*sql.DB, error) {
	name := "sqlserver"
	if d == Oracle {
		name = "oracle"
	}
	db, err := sql.Open(name, dsn)
	if err != nil {
		return nil, fmt.Errorf("sqldb: %s dsn: %w", d, err)
	}
	return db, nil
}

// SetSnapshotFallback sets what a SQL Server read does when the database
// has ALLOW_SNAPSHOT_ISOLATION OFF: "" refuses (ErrNoSnapshot, with the
// fix), SnapshotSerializable reads under SERIALIZABLE locks. Other
// dialects ignore it.
func (s *Source) SetSnapshotFallback(mode string) error {
	switch mode {
	case "", SnapshotSerializable:
		s.fallback = mode
		return nil
	}
	return fmt.Errorf("sqldb: snapshot fallback %q: the only fallback is %q", mode, SnapshotSerializable)
}

// Isolation says how the reader's snapshot was taken (SQL Server and
// Oracle; "" for the other dialects, whose snapshot is always the same).
func (r *Reader) Isolation() string { return r.isolation }

// session is what a reader queries: its connection, or its transaction.
type session interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (r *Reader) sess() session {
	if r.tx != nil {
		return r.tx
	}
	return r.conn
}

// snapshotAllowedQuery tells whether the current SQL Server database
// allows snapshot isolation (1 = ON).
const snapshotAllowedQuery = "SELECT snapshot_isolation_state, DB_NAME() FROM sys.databases WHERE database_id = DB_ID()"

// snapshotFix is the error of a SQL Server database without snapshot
// isolation: what to change, and the plan's way out.
func snapshotFix(db string) error {
	q, err := QuoteIdent(SQLServer, db)
	if err != nil {
		q = "<database>"
	}
	return fmt.Errorf("%w: database %s has ALLOW_SNAPSHOT_ISOLATION OFF, so the count, the sums and the rows could not be read in one consistent snapshot; "+
		"fix: ask its DBA to run ALTER DATABASE %s SET ALLOW_SNAPSHOT_ISOLATION ON (row versions then live in tempdb), "+
		"or set snapshot_fallback: serializable on the source in platform.yaml to read under SERIALIZABLE locks (consistent, but writers to the table wait until it is read)",
		ErrNoSnapshot, strconv.Quote(db), q)
}

// beginTx starts the SQL Server or Oracle read transaction on conn.
//
// SQL Server: a SNAPSHOT isolation transaction (every statement of it
// reads the database as of its first data access), after checking that
// the database allows it; SERIALIZABLE only when the plan says so.
// Oracle: SET TRANSACTION READ ONLY, whose statements all see the
// database as of the transaction's start.
func (r *Reader) beginTx(ctx context.Context, conn *sql.Conn) error {
	fail := func(what string, err error) error {
		conn.Close()
		return fmt.Errorf("%s: %w", what, err)
	}
	var opts *sql.TxOptions
	switch r.d {
	case SQLServer:
		var state int64
		var name string
		if err := conn.QueryRowContext(ctx, snapshotAllowedQuery).Scan(&state, &name); err != nil {
			return fail("snapshot isolation state", err)
		}
		opts = &sql.TxOptions{Isolation: sql.LevelSnapshot}
		r.isolation = "snapshot"
		if state != 1 {
			if r.fallback != SnapshotSerializable {
				conn.Close()
				return snapshotFix(name)
			}
			opts = &sql.TxOptions{Isolation: sql.LevelSerializable}
			r.isolation = "serializable (fallback named in the plan: the database does not allow snapshot isolation)"
		}
	case Oracle:
		r.isolation = "read only"
	}
	// The transaction lives until Close, not until Open's context ends
	// (database/sql rolls a transaction back when its context is done).
	tx, err := conn.BeginTx(context.WithoutCancel(ctx), opts)
	if err != nil {
		return fail("begin", err)
	}
	if r.d == Oracle {
		// The first statement of the transaction: every later query sees
		// the database as of now.
		if _, err := tx.ExecContext(ctx, "SET TRANSACTION READ ONLY"); err != nil {
			_ = tx.Rollback()
			return fail("SET TRANSACTION READ ONLY", err)
		}
	}
	r.conn, r.tx = conn, tx
	return nil
}

// CurrentSchemaQuery is the query of the connection's default schema in
// dialect d ("" for SQLite, which has none).
func CurrentSchemaQuery(d Dialect) string {
	switch d {
	case Postgres:
		return "SELECT current_schema()"
	case MySQL:
		return "SELECT DATABASE()"
	case SQLServer:
		return "SELECT SCHEMA_NAME()"
	case Oracle:
		return "SELECT SYS_CONTEXT('USERENV', 'CURRENT_SCHEMA') FROM DUAL"
	}
	return ""
}

// VersionQuery returns the server's version, the session's user and its
// database in dialect d (gate 2).
func VersionQuery(d Dialect) string {
	switch d {
	case Postgres:
		return "SELECT 'PostgreSQL ' || current_setting('server_version'), current_user, current_database()"
	case MySQL:
		return "SELECT CONCAT(IF(VERSION() LIKE '%MariaDB%', 'MariaDB ', 'MySQL '), VERSION()), CURRENT_USER(), COALESCE(DATABASE(), '(none)')"
	case SQLServer:
		return "SELECT REPLACE(REPLACE(CAST(@@VERSION AS NVARCHAR(400)), CHAR(10), ' '), CHAR(9), ' '), SUSER_SNAME(), DB_NAME()"
	case Oracle:
		return "SELECT (SELECT banner FROM v$version WHERE ROWNUM = 1), USER, SYS_CONTEXT('USERENV', 'DB_NAME') FROM DUAL"
	}
	return "SELECT 'SQLite ' || sqlite_version(), 'file', 'main'"
}

// cellText renders a value a driver returned for column c of dialect d.
func cellText(d Dialect, c ColumnInfo, v any) string {
	switch d {
	case SQLServer:
		return mssqlText(c, v)
	case Oracle:
		return oracleText(c, v)
	}
	return Text(c.PlanType, v)
}

// mssqlText converts go-mssqldb's values: decimal, numeric, money and
// smallmoney arrive as []byte holding the exact decimal text ("-12.3400");
// datetime2, datetime, smalldatetime and date as time.Time (wall clock,
// the DSN's time zone, UTC by default); datetimeoffset as time.Time in
// its own offset (the reader converts it in SQL, see selectExpr); time as
// a time.Time on 0001-01-01; bit as bool; integers as int64; float and
// real as float64; uniqueidentifier as 16 bytes in the server's byte order
// (the reader converts it in SQL to its text; mssql.UniqueIdentifier is
// accepted too).
func mssqlText(c ColumnInfo, v any) string {
	base, _, _ := splitType(c.DBType)
	switch x := v.(type) {
	case time.Time:
		if base == "time" {
			return timeOfDay(x)
		}
	case mssql.UniqueIdentifier:
		return x.String()
	case []byte:
		if base == "uniqueidentifier" && len(x) == 16 {
			var u mssql.UniqueIdentifier
			if u.Scan(x) == nil {
				return u.String()
			}
		}
	}
	return Text(c.PlanType, v)
}

// timeOfDay is HH:MM:SS with the fraction's significant digits.
func timeOfDay(t time.Time) string {
	s := t.Format("15:04:05.000000000")
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// oracleText converts go-ora's values: NUMBER (and FLOAT) arrive as the
// exact decimal text ("-0.5", "123"), which decimal columns pad to their
// scale; DATE and TIMESTAMP as time.Time (wall clock); TIMESTAMP WITH
// [LOCAL] TIME ZONE are converted to UTC text in SQL (see selectExpr);
// CLOB and NCLOB as string; RAW and BLOB as []byte; BINARY_FLOAT and
// BINARY_DOUBLE as float64. TO_CHAR of a NUMBER writes ".5" for 0.5: the
// leading zero is restored (in numeric columns only).
func oracleText(c ColumnInfo, v any) string {
	base, _, _ := splitType(c.DBType)
	numeric := base == "number" || base == "float" || base == "integer" || base == "decimal" || base == "numeric"
	if s, ok := v.(string); ok && numeric {
		switch {
		case strings.HasPrefix(s, "."):
			s = "0" + s
		case strings.HasPrefix(s, "-."):
			s = "-0" + s[1:]
		}
		return Text(c.PlanType, s)
	}
	return Text(c.PlanType, v)
}

// discoverSQLServer reads sys.tables / sys.partitions (row estimates),
// INFORMATION_SCHEMA.COLUMNS (columns and types) and sys.indexes (keys
// and indexes).
func discoverSQLServer(ctx context.Context, db *sql.DB, schemas []string) ([]TableInfo, error) {
	var ts tableSet
	keep := func(s string) bool { return wantSchema(schemas, s) && s != "sys" && s != "INFORMATION_SCHEMA" }
	err := each(ctx, db, sqlServerTablesQuery, nil, func(r *sql.Rows) error {
		var s, n string
		var est int64
		if err := r.Scan(&s, &n, &est); err != nil {
			return err
		}
		if keep(s) {
			ts.get(s, n).RowEstimate = est
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = each(ctx, db, sqlServerColumnsQuery, nil, func(r *sql.Rows) error {
		var s, n, typ string
		var c ColumnInfo
		var p, sc, dtp sql.NullInt64
		if err := r.Scan(&s, &n, &c.Name, &typ, &c.Nullable, &p, &sc, &dtp); err != nil {
			return err
		}
		if t := ts.lookup(s, n); t != nil {
			c.DBType, c.Precision, c.Scale = sqlServerType(typ, p, sc, dtp)
			t.Columns = append(t.Columns, c)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = each(ctx, db, sqlServerIndexesQuery, nil, ts.indexRow)
	if err != nil {
		return nil, err
	}
	return ts.list(), nil
}

const (
	sqlServerTablesQuery = `SELECT s.name, t.name,
		COALESCE((SELECT SUM(p.rows) FROM sys.partitions p WHERE p.object_id = t.object_id AND p.index_id IN (0, 1)), -1)
		FROM sys.tables t JOIN sys.schemas s ON s.schema_id = t.schema_id
		WHERE t.is_ms_shipped = 0 ORDER BY s.name, t.name`
	sqlServerColumnsQuery = `SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, DATA_TYPE,
		CAST(CASE WHEN IS_NULLABLE = 'YES' THEN 1 ELSE 0 END AS BIT),
		CAST(NUMERIC_PRECISION AS INT), CAST(NUMERIC_SCALE AS INT), CAST(DATETIME_PRECISION AS INT)
		FROM INFORMATION_SCHEMA.COLUMNS ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION`
	sqlServerIndexesQuery = `SELECT s.name, t.name, i.name, i.is_unique, i.is_primary_key, c.name
		FROM sys.indexes i JOIN sys.tables t ON t.object_id = i.object_id
		JOIN sys.schemas s ON s.schema_id = t.schema_id
		JOIN sys.index_columns ic ON ic.object_id = i.object_id AND ic.index_id = i.index_id
		JOIN sys.columns c ON c.object_id = ic.object_id AND c.column_id = ic.column_id
		WHERE i.name IS NOT NULL AND ic.is_included_column = 0 AND ic.key_ordinal > 0
		ORDER BY s.name, t.name, i.name, ic.key_ordinal`
)

// sqlServerType spells a column's type as the reader expects it:
// decimal(p,s) and numeric(p,s) with their parameters, datetime2(n),
// datetimeoffset(n) and time(n) with their fraction digits, anything else
// by its name.
func sqlServerType(typ string, p, s, dtp sql.NullInt64) (string, int, int) {
	typ = strings.ToLower(typ)
	switch typ {
	case "decimal", "numeric":
		return fmt.Sprintf("%s(%d,%d)", typ, p.Int64, s.Int64), int(p.Int64), int(s.Int64)
	case "datetime2", "datetimeoffset", "time":
		if dtp.Valid {
			return fmt.Sprintf("%s(%d)", typ, dtp.Int64), 0, 0
		}
	}
	return typ, 0, 0
}

// discoverOracle reads ALL_TABLES (row estimates from the optimizer's
// statistics), ALL_TAB_COLUMNS, ALL_CONSTRAINTS / ALL_CONS_COLUMNS
// (primary keys) and ALL_INDEXES / ALL_IND_COLUMNS. Without schemas it
// lists every schema that is not Oracle-maintained.
func discoverOracle(ctx context.Context, db *sql.DB, schemas []string) ([]TableInfo, error) {
	var ts tableSet
	owners, args := oracleOwnerFilter("OWNER", schemas)
	err := each(ctx, db, oracleTablesQuery(owners), args, func(r *sql.Rows) error {
		var s, n string
		var est sql.NullInt64
		if err := r.Scan(&s, &n, &est); err != nil {
			return err
		}
		t := ts.get(s, n)
		if est.Valid {
			t.RowEstimate = est.Int64
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = each(ctx, db, oracleColumnsQuery(owners), args, func(r *sql.Rows) error {
		var s, n, typ, nullable string
		var c ColumnInfo
		var p, sc sql.NullInt64
		if err := r.Scan(&s, &n, &c.Name, &typ, &nullable, &p, &sc); err != nil {
			return err
		}
		if t := ts.lookup(s, n); t != nil {
			c.Nullable = nullable == "Y"
			c.DBType, c.Precision, c.Scale = oracleType(typ, p, sc)
			t.Columns = append(t.Columns, c)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	pkIndex := map[[2]string]string{}
	err = each(ctx, db, oraclePrimaryKeysQuery(owners), args, func(r *sql.Rows) error {
		var s, n, col string
		var ix sql.NullString
		if err := r.Scan(&s, &n, &col, &ix); err != nil {
			return err
		}
		if t := ts.lookup(s, n); t != nil {
			t.PrimaryKey = append(t.PrimaryKey, col)
			pkIndex[[2]string{s, n}] = ix.String
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	iowners, _ := oracleOwnerFilter("i.TABLE_OWNER", schemas)
	err = each(ctx, db, oracleIndexesQuery(iowners), args, func(r *sql.Rows) error {
		var s, n, ix, uniq, col string
		if err := r.Scan(&s, &n, &ix, &uniq, &col); err != nil {
			return err
		}
		if t := ts.lookup(s, n); t != nil {
			addIndexColumn(t, ix, col, uniq == "UNIQUE", pkIndex[[2]string{s, n}] == ix)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ts.list(), nil
}

// oracleOwnerFilter is the condition on the owner column: the schemas
// given, as bind parameters, or every schema Oracle does not maintain.
func oracleOwnerFilter(col string, schemas []string) (string, []any) {
	if len(schemas) == 0 {
		return col + " IN (SELECT USERNAME FROM ALL_USERS WHERE ORACLE_MAINTAINED = 'N')", nil
	}
	ph := make([]string, len(schemas))
	args := make([]any, len(schemas))
	for i, s := range schemas {
		ph[i], args[i] = placeholder(Oracle, i+1), s
	}
	return col + " IN (" + strings.Join(ph, ", ") + ")", args
}

func oracleTablesQuery(owners string) string {
	return `SELECT OWNER, TABLE_NAME, NUM_ROWS FROM ALL_TABLES WHERE ` + owners +
		` AND TEMPORARY = 'N' AND NESTED = 'NO' AND SECONDARY = 'N' AND (IOT_TYPE IS NULL OR IOT_TYPE = 'IOT') AND NVL(DROPPED, 'NO') = 'NO' ORDER BY OWNER, TABLE_NAME`
}

func oracleColumnsQuery(owners string) string {
	return `SELECT OWNER, TABLE_NAME, COLUMN_NAME, DATA_TYPE, NULLABLE, DATA_PRECISION, DATA_SCALE FROM ALL_TAB_COLUMNS WHERE ` +
		owners + ` ORDER BY OWNER, TABLE_NAME, COLUMN_ID`
}

func oraclePrimaryKeysQuery(owners string) string {
	return `SELECT k.OWNER, k.TABLE_NAME, cc.COLUMN_NAME, k.INDEX_NAME FROM ALL_CONSTRAINTS k
		JOIN ALL_CONS_COLUMNS cc ON cc.OWNER = k.OWNER AND cc.CONSTRAINT_NAME = k.CONSTRAINT_NAME AND cc.TABLE_NAME = k.TABLE_NAME
		WHERE k.CONSTRAINT_TYPE = 'P' AND k.` + owners + ` ORDER BY k.OWNER, k.TABLE_NAME, cc.POSITION`
}

func oracleIndexesQuery(owners string) string {
	return `SELECT i.TABLE_OWNER, i.TABLE_NAME, i.INDEX_NAME, i.UNIQUENESS, c.COLUMN_NAME FROM ALL_INDEXES i
		JOIN ALL_IND_COLUMNS c ON c.INDEX_OWNER = i.OWNER AND c.INDEX_NAME = i.INDEX_NAME
		WHERE ` + owners + ` ORDER BY i.TABLE_OWNER, i.TABLE_NAME, i.INDEX_NAME, c.COLUMN_POSITION`
}

// oracleType spells an ALL_TAB_COLUMNS type in lower case the way MapType
// and the reader expect it. NUMBER is the subtle one: no precision and no
// scale is an unconstrained NUMBER ("number"); no precision with a scale
// (INTEGER is NUMBER(*,0)) is "number(*,s)"; else "number(p,s)". FLOAT(b)
// keeps its binary precision.
func oracleType(typ string, p, s sql.NullInt64) (string, int, int) {
	t := strings.ToLower(strings.TrimSpace(typ))
	switch t {
	case "number":
		switch {
		case !p.Valid && !s.Valid:
			return "number", 0, 0
		case !p.Valid:
			return fmt.Sprintf("number(*,%d)", s.Int64), 0, int(s.Int64)
		}
		return fmt.Sprintf("number(%d,%d)", p.Int64, s.Int64), int(p.Int64), int(s.Int64)
	case "float":
		if p.Valid {
			return fmt.Sprintf("float(%d)", p.Int64), 0, 0
		}
	}
	return t, 0, 0
}
