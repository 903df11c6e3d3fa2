// Package sqldb reads tables of relational databases (PostgreSQL through
// pgx, MySQL/MariaDB through go-sql-driver/mysql, SQLite through
// modernc.org/sqlite, SQL Server through go-mssqldb, Oracle through
// go-ora) as a source.Source: discovery of schemas, tables,
// columns, keys, indexes and row estimates; lossless mapping of database
// types to Lima plan types; identifier quoting; snapshot-consistent
// extraction with source-side totals.
//
// Every value is yielded as the canonical text of engine/clean
// (FormatCell): dates yyyy-MM-dd, timestamps 2006-01-02T15:04:05.000000
// (naive) or …Z (zoned, in UTC), decimals with their full scale, booleans
// true/false, binary as the raw bytes (the caster stores the text's bytes
// as they are); SQL NULL sets Row.Nulls[i]. SQL Server and Oracle are
// unit-tested only (no server runs on the test machines): see
// mssql_oracle.go.
package sqldb

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Dialect names a database family.
type Dialect string

// Dialects.
const (
	Postgres  Dialect = "postgres"
	MySQL     Dialect = "mysql" // MySQL and MariaDB
	SQLite    Dialect = "sqlite"
	SQLServer Dialect = "sqlserver"
	Oracle    Dialect = "oracle"
)

// DialectOf is the dialect of a plan source kind (the kinds are spelt as
// the dialects); anything else is SQLite, the database-in-a-file kind.
func DialectOf(kind string) Dialect {
	switch d := Dialect(kind); d {
	case Postgres, MySQL, SQLServer, Oracle:
		return d
	}
	return SQLite
}

// ErrIdentifier marks an identifier that cannot be quoted safely.
var ErrIdentifier = errors.New("sqldb: invalid identifier")

// MaxIdentLen is the longest identifier of each dialect, in the unit the
// dialect counts: bytes for PostgreSQL, characters for the others. SQLite
// has no limit (0).
func MaxIdentLen(d Dialect) (n int, bytes bool) {
	switch d {
	case Postgres:
		return 63, true
	case MySQL:
		return 64, false
	case SQLServer, Oracle:
		return 128, false
	}
	return 0, false
}

// CheckIdent reports why name cannot be an identifier of dialect d: empty,
// NUL, invalid UTF-8, or longer than the dialect allows (the database would
// silently truncate or refuse it; Lima refuses it up front).
func CheckIdent(d Dialect, name string) error {
	switch d {
	case Postgres, MySQL, SQLite, SQLServer, Oracle:
	default:
		return fmt.Errorf("%w: unknown dialect %q", ErrIdentifier, d)
	}
	if name == "" {
		return fmt.Errorf("%w: empty name", ErrIdentifier)
	}
	if strings.IndexByte(name, 0) >= 0 {
		return fmt.Errorf("%w: %q contains a NUL byte", ErrIdentifier, name)
	}
	if !utf8.ValidString(name) {
		return fmt.Errorf("%w: %q is not valid UTF-8", ErrIdentifier, name)
	}
	if limit, inBytes := MaxIdentLen(d); limit > 0 {
		n := utf8.RuneCountInString(name)
		unit := "characters"
		if inBytes {
			n, unit = len(name), "bytes"
		}
		if n > limit {
			return fmt.Errorf("%w: %q is %d %s long; %s allows %d", ErrIdentifier, name, n, unit, d, limit)
		}
	}
	return nil
}

// QuoteIdent quotes one identifier for dialect d: "…" doubling " for
// PostgreSQL, SQLite and Oracle; `…` doubling ` for MySQL; […] doubling ]
// for SQL Server. It errors (see CheckIdent) rather than truncate.
func QuoteIdent(d Dialect, name string) (string, error) {
	if err := CheckIdent(d, name); err != nil {
		return "", err
	}
	switch d {
	case MySQL:
		return "`" + strings.ReplaceAll(name, "`", "``") + "`", nil
	case SQLServer:
		return "[" + strings.ReplaceAll(name, "]", "]]") + "]", nil
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`, nil
}

// QuoteQualified quotes schema.name; an empty schema gives the bare name.
func QuoteQualified(d Dialect, schema, name string) (string, error) {
	n, err := QuoteIdent(d, name)
	if err != nil || schema == "" {
		return n, err
	}
	s, err := QuoteIdent(d, schema)
	if err != nil {
		return "", err
	}
	return s + "." + n, nil
}

// placeholder is the bind parameter i (1-based) of dialect d.
func placeholder(d Dialect, i int) string {
	switch d {
	case Postgres:
		return fmt.Sprintf("$%d", i)
	case SQLServer:
		return fmt.Sprintf("@p%d", i)
	case Oracle:
		return fmt.Sprintf(":%d", i)
	}
	return "?"
}
