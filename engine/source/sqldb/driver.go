package sqldb

import (
	"database/sql"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	_ "modernc.org/sqlite"             // database/sql driver "sqlite"

	"github.com/lima-lake/lima/internal/fileuri"
)

// Open opens a database of dialect d: dsn is a PostgreSQL URL or keyword
// string, a go-sql-driver/mysql DSN (user:pass@tcp(host:port)/db), or a
// SQLite file path (opened read-only). The caller closes the *sql.DB.
func Open(d Dialect, dsn string) (*sql.DB, error) {
	switch d {
	case Postgres:
		return sql.Open("pgx", dsn)
	case MySQL:
		if u, ok := mysqlURL(dsn); ok {
			dsn = u
		}
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
		path := dsn
		if fileuri.Is(dsn) {
			p, err := fileuri.ToPath(dsn)
			if err != nil {
				return nil, fmt.Errorf("sqldb: sqlite: %w", err)
			}
			path = p
		}
		uri, err := fileuri.FromPath(path)
		if err != nil {
			return nil, fmt.Errorf("sqldb: sqlite: %w", err)
		}
		return sql.Open("sqlite", uri+"?mode=ro&_pragma=busy_timeout(5000)")
	}
	return nil, fmt.Errorf("sqldb: no driver for dialect %q", d)
}

// mysqlURL turns a mysql:// (or mariadb://) URL —
// mysql://user:password@host:3306/db?param=value — into the
// go-sql-driver/mysql DSN it means (port 3306 when none). ok is false when
// dsn is not such a URL.
func mysqlURL(dsn string) (string, bool) {
	low := strings.ToLower(dsn)
	if !strings.HasPrefix(low, "mysql://") && !strings.HasPrefix(low, "mariadb://") {
		return "", false
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "", false
	}
	cfg := mysql.NewConfig()
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
	}
	cfg.Net, cfg.Addr = "tcp", u.Host
	if u.Port() == "" {
		cfg.Addr = net.JoinHostPort(u.Hostname(), "3306")
	}
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	out := cfg.FormatDSN()
	if u.RawQuery != "" {
		sep := "?"
		if strings.Contains(out, "?") {
			sep = "&"
		}
		out += sep + u.RawQuery
	}
	return out, true
}
