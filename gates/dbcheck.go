package gates

// Gate 2 for database sources: connect with the DSN the plan names by
// environment variable, report the server's version and the session's
// user and database, and, for every table, discover it and read one row
// in a read-only snapshot — each with its evidence and, on failure, the
// fix. The DSN (which may carry a password) never appears in a finding.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/engine/source/sqldb"
	"github.com/lima-lake/lima/internal/redact"
)

// openDB opens a database source; the error is a finished finding.
func (pr Probe) openDB(ctx context.Context, f Finding, name string, s *plan.Source) (*sql.DB, string, *Finding) {
	fail := func(detail, fix string) (*sql.DB, string, *Finding) {
		f.Status, f.Detail, f.Fix = Fail, detail, fix
		return nil, "", &f
	}
	dsn := ""
	if s.DSNEnv != "" {
		v, ok := os.LookupEnv(s.DSNEnv)
		if !ok || v == "" {
			return fail(fmt.Sprintf("environment variable %s (sources.%s.dsn_env) is not set", s.DSNEnv, name),
				fmt.Sprintf("export the DSN of the %s database in %s before running Lima (it is read from there and never written to platform.yaml)", s.Kind, s.DSNEnv))
		}
		dsn = v
	} else {
		if s.Path == "" {
			return fail(fmt.Sprintf("sources.%s names neither dsn_env nor path", name), fmt.Sprintf("set sources.%s.dsn_env to the environment variable holding the DSN", name))
		}
		dsn = s.Path
		if !filepath.IsAbs(dsn) {
			dsn = filepath.Join(pr.Workspace, dsn)
		}
		if _, err := os.Stat(dsn); err != nil {
			return fail(fmt.Sprintf("sqlite database %s: %v", dsn, gate2Err(err)), fmt.Sprintf("correct sources.%s.path or put the database file there", name))
		}
	}
	db, err := sqldb.Open(sqldb.DialectOf(s.Kind), dsn)
	if err != nil {
		return fail(fmt.Sprintf("the value of %s is not a valid %s DSN", s.DSNEnv, s.Kind), dsnFix(s))
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return fail(fmt.Sprintf("connect: %s", redactDSN(err, dsn)),
			fmt.Sprintf("check that the server runs and accepts connections from this host, and the host, port, user, password and TLS options (sslmode / tls / encrypt / ssl) of the DSN in %s", orPath(s)))
	}
	return db, dsn, nil
}

func dsnFix(s *plan.Source) string {
	switch s.Kind {
	case plan.SourcePostgres:
		return fmt.Sprintf("write a PostgreSQL URL in %s, e.g. postgres://user:password@host:5432/db?sslmode=verify-full", s.DSNEnv)
	case plan.SourceMySQL:
		return fmt.Sprintf("write a MySQL DSN in %s, e.g. user:password@tcp(host:3306)/db?tls=true", s.DSNEnv)
	case plan.SourceSQLServer:
		return fmt.Sprintf("write a SQL Server URL in %s, e.g. sqlserver://user:password@host:1433?database=db&encrypt=true", s.DSNEnv)
	case plan.SourceOracle:
		return fmt.Sprintf("write an Oracle URL in %s, e.g. oracle://user:password@host:1521/service_name", s.DSNEnv)
	}
	return "point the source at a SQLite database file"
}

func orPath(s *plan.Source) string {
	if s.DSNEnv != "" {
		return s.DSNEnv
	}
	return "sources.path"
}

// redactDSN removes the DSN (and a password in it) from a driver error
// (internal/redact is the one redaction).
func redactDSN(err error, dsn string) string {
	return redact.String(gate2Err(err), dsn)
}

// checkDatabaseSource connects and reports the server version, user and
// database.
func (pr Probe) checkDatabaseSource(ctx context.Context, name string, s *plan.Source) Finding {
	f := Finding{Name: "source " + name}
	db, _, bad := pr.openDB(ctx, f, name, s)
	if bad != nil {
		return *bad
	}
	defer db.Close()
	q := sqldb.VersionQuery(sqldb.DialectOf(s.Kind))
	var version, user, database string
	if err := db.QueryRowContext(ctx, q).Scan(&version, &user, &database); err != nil {
		f.Status, f.Detail = Fail, "connected, but the version query failed: "+gate2Err(err)
		f.Fix = "let the user of the DSN run simple SELECTs"
		return f
	}
	f.Status = Pass
	f.Detail = fmt.Sprintf("connected to %s as %s, database %s", version, user, database)
	if s.DSNEnv != "" {
		f.Detail += fmt.Sprintf(" (DSN from %s)", s.DSNEnv)
	}
	return f
}

// checkDatabaseTable discovers a table and reads one row of it in a
// read-only snapshot, as the load will.
func (pr Probe) checkDatabaseTable(ctx context.Context, p *plan.Plan, name string) Finding {
	t := p.Tables[name]
	s := p.Sources[t.Source.Name]
	f := Finding{Name: "table " + name}
	db, _, bad := pr.openDB(ctx, f, t.Source.Name, s)
	if bad != nil {
		bad.Status, bad.Detail, bad.Fix = Skip, fmt.Sprintf("not checked: source %s does not connect; see its finding", t.Source.Name), ""
		return *bad
	}
	defer db.Close()
	d := sqldb.DialectOf(s.Kind)
	schema := t.Source.Schema
	if schema == "" {
		var cur sql.NullString
		switch d {
		case sqldb.Postgres:
			_ = db.QueryRowContext(ctx, "SELECT current_schema()").Scan(&cur)
		case sqldb.MySQL:
			_ = db.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&cur)
		case sqldb.SQLServer, sqldb.Oracle:
			_ = db.QueryRowContext(ctx, sqldb.CurrentSchemaQuery(d)).Scan(&cur)
		}
		schema = cur.String
		if d != sqldb.SQLite && schema == "" {
			f.Status, f.Detail = Fail, "the connection has no default schema or database and the table names none"
			f.Fix = fmt.Sprintf("set tables.%s.source.schema", name)
			return f
		}
	}
	tab := sqldb.Table{Schema: schema, Name: t.Source.Table}
	src, err := sqldb.New(d, db, []sqldb.Table{tab}, nil)
	if err == nil {
		err = src.SetSnapshotFallback(s.SnapshotFallback)
	}
	if err != nil {
		f.Status, f.Detail = Fail, fmt.Sprintf("table name %s: %v", tab.UnitName(), err)
		f.Fix = fmt.Sprintf("correct tables.%s.source.table", name)
		return f
	}
	r, err := src.OpenTable(ctx, source.Unit{Name: tab.UnitName(), Path: tab.UnitName()})
	if errors.Is(err, sqldb.ErrNoSnapshot) {
		f.Status, f.Detail = Fail, fmt.Sprintf("open %s: %s", tab.UnitName(), gate2Err(err))
		f.Fix = fmt.Sprintf("ALTER DATABASE <db> SET ALLOW_SNAPSHOT_ISOLATION ON (a DBA), or set sources.%s.snapshot_fallback: serializable to read under locks", t.Source.Name)
		return f
	}
	if err != nil {
		f.Status, f.Detail = Fail, fmt.Sprintf("open %s: %v", tab.UnitName(), err)
		f.Fix = fmt.Sprintf("check that table %s exists in schema %s and that the user of the DSN may read it (GRANT SELECT), or correct tables.%s.source", t.Source.Table, schema, name)
		return f
	}
	defer r.Close()
	info := r.Table()
	var notes []string
	notes = append(notes, fmt.Sprintf("%d column(s), %d readable", len(info.Columns), len(r.Columns())))
	if len(info.PrimaryKey) > 0 {
		notes = append(notes, "primary key ("+strings.Join(info.PrimaryKey, ", ")+")")
	} else {
		notes = append(notes, "no primary key")
	}
	if info.RowEstimate >= 0 {
		notes = append(notes, fmt.Sprintf("about %d row(s)", info.RowEstimate))
	}
	got, err := r.ProbeRow(ctx)
	switch {
	case err != nil:
		f.Status, f.Detail = Fail, fmt.Sprintf("%s: %s; reading a row failed: %v", tab.UnitName(), strings.Join(notes, ", "), err)
		f.Fix = "let the user of the DSN SELECT every column of the table (GRANT SELECT)"
		return f
	case !got:
		notes = append(notes, "empty: no row to read")
	default:
		notes = append(notes, "read one row in a read-only snapshot")
	}
	f.Status = Pass
	f.Detail = tab.UnitName() + ": " + strings.Join(notes, ", ")
	if n := len(r.Findings()); n > 0 {
		f.Status = Warn
		var cols []string
		for _, x := range r.Findings() {
			cols = append(cols, fmt.Sprintf("%s (%s)", x.Column, x.DBType))
		}
		f.Detail += "; left out, Lima cannot map their type: " + strings.Join(cols, ", ")
		f.Fix = "cast those columns in a view if they are needed, or accept that they are not loaded"
	}
	return f
}
