package sqldb

import (
	"database/sql"
	"fmt"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	_ "modernc.org/sqlite"             // database/sql driver "sqlite"
)

// Open opens a database of dialect d: dsn is a PostgreSQL URL or keyword
// string, a go-sql-driver/mysql DSN (user:pass@tcp(host:port)/db), or a
// SQLite file path (opened read-only). The caller closes the *sql.DB.
func Open(d Dialect, dsn string) (*sql.DB, error) {
	switch d {
	case Postgres:
		return sql.Open("pgx", dsn)
	case MySQL:
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			return nil, fmt.Errorf("sqldb: mysql dsn: %w", err)
		}
		// Values arrive as the server's text; Text converts them.
		cfg.ParseTime = false
		c, err := mysql.NewConnector(cfg)
		if err != nil {
			return nil, err
		}
		return sql.OpenDB(c), nil
	case SQLServer, Oracle:
		return openMSSQLOracle(d, dsn)
	case SQLite:
		return sql.Open("sqlite", "file:"+dsn+"?mode=ro&_pragma=busy_timeout(5000)")
	}
	return nil, fmt.Errorf("sqldb: no driver for dialect %q", d)
}
