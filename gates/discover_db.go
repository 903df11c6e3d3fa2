package gates

// Gate 1 and gate 3 for database sources. A database source is named in
// gate 1 as env:NAME, NAME being an environment variable that holds the
// DSN; the DSN (which may carry a password) is read from the environment
// only, and never appears in a finding, an error or platform.yaml.
//
// Gate 3 proposes one table per base table of the database, from the
// catalog (sqldb.Discover: columns, types, primary key, indexes, row
// estimate) and a bounded sample of rows read in one snapshot:
//
//   - types come from the database without loss (sqldb.MapType:
//     numeric(p,s) → decimal(p,s), timestamptz, json → string, bytea →
//     binary, …); a column Lima cannot map is a finding, and stays out of
//     the table (the reader leaves it out too);
//   - the key is the primary key;
//   - the watermark is sqldb's suggestion (an indexed updated_at-like
//     timestamp, else an indexed timestamp, else an integer primary key).
//     With a primary key and a timestamp watermark the mode is upsert (with
//     a one-hour lookback); with only an integer primary key it is upsert
//     from the key's previous maximum (an insert-only table: the finding
//     says so); a table without a primary key, or without a watermark, is
//     read in full. A table read by key compares its keys with the lake's
//     for deletes: every run below DeleteCheckEveryRunRows rows, else once
//     a day.
//
// PostgreSQL proposes the tables of the schemas on the connection's
// search_path (add search_path=… to the URL for others); MySQL/MariaDB those
// of the DSN's database; SQLite those of the file.

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/engine/source/sqldb"
)

// DBSampleRows caps the rows gate 3 reads of each database table for
// evidence (ProposeOptions.MaxRows when smaller).
const DBSampleRows = 10_000

// libpqKV matches a libpq keyword/value connection string (host=… dbname=…).
var libpqKV = regexp.MustCompile(`^\s*(host|hostaddr|port|dbname|user|password|sslmode|service|connect_timeout|application_name|options)\s*=`)

// DSNKind tells which kind of database source a DSN names, from its form:
//
//   - postgres: a postgres:// or postgresql:// URL, or a libpq keyword/value
//     string (host=… dbname=…);
//   - mysql (MySQL and MariaDB): a mysql:// or mariadb:// URL, or a
//     go-sql-driver/mysql DSN (user:password@tcp(host:3306)/db);
//   - sqlite: a path to a file ending in .db, .sqlite, .sqlite3 or .db3.
//
// The error never quotes the DSN.
func DSNKind(dsn string) (string, error) {
	d := strings.TrimSpace(dsn)
	low := strings.ToLower(d)
	switch {
	case d == "":
		return "", fmt.Errorf("it is empty")
	case strings.HasPrefix(low, "postgres://"), strings.HasPrefix(low, "postgresql://"):
		return plan.SourcePostgres, nil
	case strings.HasPrefix(low, "mysql://"), strings.HasPrefix(low, "mariadb://"):
		return plan.SourceMySQL, nil
	case strings.Contains(low, "://"):
		return "", fmt.Errorf("its URL scheme is not one Lima reads (postgres://, postgresql://, mysql://, mariadb://)")
	case libpqKV.MatchString(low):
		return plan.SourcePostgres, nil
	case strings.Contains(d, "@") && strings.Contains(d, "/"):
		if _, err := mysql.ParseDSN(d); err == nil {
			return plan.SourceMySQL, nil
		}
		return "", fmt.Errorf("it looks like a MySQL DSN but does not parse as one (user:password@tcp(host:3306)/db)")
	}
	for _, ext := range []string{".db", ".sqlite", ".sqlite3", ".db3"} {
		if strings.HasSuffix(low, ext) {
			return plan.SourceSQLite, nil
		}
	}
	return "", fmt.Errorf("it is neither a PostgreSQL URL or keyword string, nor a MySQL DSN, nor a SQLite file")
}

// DSNKindOf is DSNKind of the value of the environment variable name; the
// error names the variable, never its value.
func DSNKindOf(name string) (string, error) {
	v, ok := os.LookupEnv(name)
	if !ok || strings.TrimSpace(v) == "" {
		return "", &AnswerError{Problem: fmt.Sprintf("env:%s: the environment variable %s is not set", name, name),
			Fix: fmt.Sprintf("export the database DSN in %s (e.g. postgres://user:password@host:5432/db or user:password@tcp(host:3306)/db), then answer again", name)}
	}
	kind, err := DSNKind(v)
	if err != nil {
		return "", &AnswerError{Problem: fmt.Sprintf("env:%s: the value of %s is not a DSN Lima recognises: %v", name, name, err),
			Fix: "write a postgres:// URL or libpq key=value string, a mysql:// URL or a go-sql-driver DSN (user:password@tcp(host:3306)/db), or a SQLite file path ending in .db"}
	}
	return kind, nil
}

// DatabaseSummary is what connecting to a database source found.
type DatabaseSummary struct {
	Kind    string
	Version string   // server product and version
	Schemas []string // the schemas gate 3 proposes tables from
	Tables  int
}

// CheckDatabase connects to the database of a source once (as init does
// for a new env:NAME source): it must be reachable and its tables listed.
// The error never contains the DSN or its password.
func CheckDatabase(ctx context.Context, name string, s *plan.Source) (DatabaseSummary, error) {
	sum := DatabaseSummary{Kind: s.Kind}
	db, _, bad := Probe{}.openDB(ctx, Finding{}, name, s)
	if bad != nil {
		return sum, &AnswerError{Problem: bad.Detail, Fix: bad.Fix}
	}
	defer db.Close()
	d := sqldb.DialectOf(s.Kind)
	var q string
	switch d {
	case sqldb.Postgres:
		q = "SELECT 'PostgreSQL ' || current_setting('server_version')"
	case sqldb.MySQL:
		q = "SELECT CONCAT(IF(VERSION() LIKE '%MariaDB%', 'MariaDB ', 'MySQL '), VERSION())"
	default:
		q = "SELECT 'SQLite ' || sqlite_version()"
	}
	if err := db.QueryRowContext(ctx, q).Scan(&sum.Version); err != nil {
		return sum, fmt.Errorf("connected, but the version query failed: %s", gate2Err(err))
	}
	schemas, err := proposeSchemas(ctx, d, db)
	if err != nil {
		return sum, err
	}
	sum.Schemas = schemas
	tables, err := sqldb.Discover(ctx, d, db, schemas...)
	if err != nil {
		return sum, fmt.Errorf("cannot list the tables: %s", gate2Err(err))
	}
	sum.Tables = len(tables)
	return sum, nil
}

// proposeSchemas are the schemas gate 3 discovers: PostgreSQL's
// search_path (current_schemas), MySQL's database of the DSN; none for
// SQLite.
func proposeSchemas(ctx context.Context, d sqldb.Dialect, db *sql.DB) ([]string, error) {
	switch d {
	case sqldb.Postgres:
		var out []string
		rows, err := db.QueryContext(ctx, "SELECT s::text FROM unnest(current_schemas(false)) AS s")
		if err != nil {
			return nil, fmt.Errorf("cannot read the search_path: %s", gate2Err(err))
		}
		defer rows.Close()
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("no schema of the search_path exists; add search_path=SCHEMA to the DSN")
		}
		return out, nil
	case sqldb.MySQL:
		var cur sql.NullString
		if err := db.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&cur); err != nil {
			return nil, fmt.Errorf("cannot read the current database: %s", gate2Err(err))
		}
		if !cur.Valid || cur.String == "" {
			return nil, fmt.Errorf("the DSN names no database; add it after the slash (user:password@tcp(host:3306)/DB)")
		}
		return []string{cur.String}, nil
	}
	return nil, nil
}

// proposeDatabases proposes the tables of every database source of the
// plan; taken holds the table names already proposed (it is updated).
func proposeDatabases(ctx context.Context, p *plan.Plan, o ProposeOptions, taken map[string]bool, pr *Proposal) {
	for _, sname := range p.SourceNames() {
		s := p.Sources[sname]
		if !s.IsDatabase() {
			continue
		}
		proposeDatabase(ctx, p, o, sname, s, taken, pr)
	}
}

func proposeDatabase(ctx context.Context, p *plan.Plan, o ProposeOptions, sname string, s *plan.Source, taken map[string]bool, pr *Proposal) {
	add := func(name, status, detail, fix string) {
		pr.Findings = append(pr.Findings, Finding{Name: name, Status: status, Detail: detail, Fix: fix})
	}
	db, _, bad := Probe{Workspace: o.Workspace}.openDB(ctx, Finding{Name: "source " + sname}, sname, s)
	if bad != nil {
		pr.Findings = append(pr.Findings, *bad)
		return
	}
	defer db.Close()
	d := sqldb.DialectOf(s.Kind)
	schemas, err := proposeSchemas(ctx, d, db)
	if err != nil {
		add("source "+sname, Fail, err.Error(), "fix the DSN, then propose again")
		return
	}
	tables, err := sqldb.Discover(ctx, d, db, schemas...)
	if err != nil {
		add("source "+sname, Fail, "cannot list the tables: "+gate2Err(err), "let the DSN's user read the catalog (information_schema / pg_catalog), then propose again")
		return
	}
	where := "the database file"
	if len(schemas) > 0 {
		where = "schema(s) " + strings.Join(schemas, ", ")
	}
	if len(tables) == 0 {
		add("source "+sname, Warn, fmt.Sprintf("no tables in %s", where),
			"PostgreSQL: add search_path=SCHEMA to the DSN; MySQL: name the database in the DSN")
		return
	}
	add("source "+sname, Pass, fmt.Sprintf("%s: %d table(s) in %s, discovered from the catalog", s.Kind, len(tables), where), "")
	rows := o.MaxRows
	if rows <= 0 || rows > DBSampleRows {
		rows = DBSampleRows
	}
	for _, ti := range tables {
		name := SnakeName(ti.Name, "t")
		if name == "" {
			name = "table"
		}
		for _, alt := range []string{name, SnakeName(ti.Schema+"_"+name, "t"), SnakeName(sname+"_"+name, "t")} {
			if alt != "" && !taken[alt] {
				name = alt
				break
			}
		}
		for i := 2; taken[name]; i++ {
			name = fmt.Sprintf("%s_%d", strings.TrimRight(name, "_0123456789"), i)
		}
		taken[name] = true
		t, fs := proposeDBTable(name, sname, s, ti, o.Sensitive)
		pr.Findings = append(pr.Findings, fs...)
		ev, f := sampleDBTable(ctx, d, db, name, ti, t, rows)
		pr.Findings = append(pr.Findings, f)
		pr.Plan.Tables[name] = t
		pr.Evidence[name] = ev
	}
}

// proposeDBTable proposes the lake table of a discovered database table.
func proposeDBTable(name, sname string, s *plan.Source, ti sqldb.TableInfo, sensitive []string) (*plan.Table, []Finding) {
	var fs []Finding
	add := func(aspect, status, detail, fix string) {
		fs = append(fs, Finding{Name: name + aspect, Status: status, Detail: detail, Fix: fix})
	}
	t := &plan.Table{Type: plan.TableBase, WrittenBy: "lima",
		Source: &plan.TableSource{Name: sname, Table: ti.Name}}
	if s.Kind != plan.SourceSQLite {
		t.Source.Schema = ti.Schema
	}
	est := "row count unknown (never analyzed)"
	if ti.RowEstimate >= 0 {
		est = fmt.Sprintf("about %s", countNoun(int(ti.RowEstimate), "row", "rows"))
	}
	t.Description = fmt.Sprintf("Proposed by gate 3 from %s table %s (%s)", s.Kind, ti.UnitName(), est)
	names := map[string]string{} // database column → lake column
	used := map[string]bool{}
	types := map[string]string{}
	for _, c := range ti.Columns {
		if c.PlanType == "" {
			continue
		}
		cn := SnakeName(c.Name, "c")
		if cn == "" {
			cn = "column"
		}
		for i := 2; used[cn]; i++ {
			cn = fmt.Sprintf("%s_%d", strings.TrimRight(cn, "_0123456789"), i)
		}
		used[cn] = true
		names[c.Name], types[cn] = cn, c.PlanType
		pc := plan.Column{Name: cn, Type: c.PlanType, Required: !c.Nullable}
		if cn != c.Name {
			pc.SourceName = c.Name
		}
		pc.Sensitive = matchesAny(sensitive, cn) || matchesAny(sensitive, c.Name)
		t.Columns = append(t.Columns, pc)
		if c.Note != "" {
			add("."+cn+": type", Warn, fmt.Sprintf("%s %s → %s: %s", c.Name, c.DBType, c.PlanType, c.Note), "check the type before approving")
		} else {
			add("."+cn+": type", Pass, fmt.Sprintf("%s %s → %s", c.Name, c.DBType, c.PlanType), "")
		}
	}
	for _, f := range ti.Findings {
		add(": column left out", Warn, fmt.Sprintf("column %s (%s) is not extracted: %s", f.Column, f.DBType, f.Reason),
			"cast it in a view (to text or a number) and read the view, or accept that the column stays out of the lake")
	}
	// The key: the primary key, when every column of it is mapped.
	var keys []string
	for _, k := range ti.PrimaryKey {
		cn, ok := names[k]
		if !ok || types[cn] == "double" {
			keys = nil
			break
		}
		keys = append(keys, cn)
	}
	switch {
	case len(keys) > 0:
		t.Load.Keys = keys
		add(": key", Pass, fmt.Sprintf("(%s): the primary key of %s", strings.Join(keys, ", "), ti.UnitName()), "")
	case len(ti.PrimaryKey) > 0:
		add(": key", Warn, fmt.Sprintf("the primary key (%s) has a column Lima cannot key on; no key proposed", strings.Join(ti.PrimaryKey, ", ")),
			"declare load.keys by hand from columns that identify a row")
	default:
		add(": key", Warn, fmt.Sprintf("%s has no primary key: no key proposed, the table is read in full every run and duplicates go unnoticed", ti.UnitName()),
			"give the table a primary key at the source, or declare load.keys by hand")
	}
	// The watermark and the mode.
	wm := names[ti.Watermark]
	temporal := types[wm] == "timestamp" || types[wm] == "timestamptz" || types[wm] == "date"
	switch {
	case wm == "":
		add(": load", Pass, "mode full: "+ti.WatermarkReason, "")
	case len(keys) > 0 && temporal:
		t.Load.Mode, t.Load.Watermark, t.Load.Lookback = plan.ModeUpsert, wm, "1h"
		var why string
		t.Load.DetectDeletes, why = proposeDeleteDetection(ti.RowEstimate)
		add(": load", Pass, fmt.Sprintf("mode upsert by (%s), watermark %s (%s), lookback 1h for rows committed late; %s",
			strings.Join(keys, ", "), wm, ti.WatermarkReason, why), "")
	case len(keys) > 0:
		// Read from the key's previous maximum like an incremental table,
		// but by key, so rows deleted at the source can be found and
		// deleted (mode incremental only appends).
		t.Load.Mode, t.Load.Watermark = plan.ModeUpsert, wm
		var why string
		t.Load.DetectDeletes, why = proposeDeleteDetection(ti.RowEstimate)
		add(": load", Warn, fmt.Sprintf("mode upsert by (%s), watermark %s: %s; rows updated at the source after they were read are not read again; %s",
			strings.Join(keys, ", "), wm, ti.WatermarkReason, why),
			"keep it for an insert-only table; otherwise set mode full, or give the table an indexed updated_at column as the watermark")
	default:
		add(": load", Warn, fmt.Sprintf("mode full: %s would be a watermark (%s), but without a key an updated row would be loaded twice", wm, ti.WatermarkReason),
			fmt.Sprintf("for an insert-only table set load.mode incremental and load.watermark %s", wm))
	}
	return t, fs
}

// DeleteCheckEveryRunRows is the table size (the catalog's row estimate)
// from which gate 3 proposes comparing the source's keys with the lake's
// once a day instead of every run: a comparison reads every key of both
// and holds the source's in memory (about 40 bytes a key), so below a
// million rows it costs little next to the read itself.
const DeleteCheckEveryRunRows = 1_000_000

// DeleteCheckPeriod is the period gate 3 proposes for a table of at least
// DeleteCheckEveryRunRows rows.
const DeleteCheckPeriod = "24h"

// proposeDeleteDetection is load.detect_deletes for a table read by key
// from its watermark, and why, from the catalog's row estimate (negative:
// unknown).
func proposeDeleteDetection(est int64) (string, string) {
	if est >= DeleteCheckEveryRunRows {
		return DeleteCheckPeriod, fmt.Sprintf("rows deleted at the source are found by comparing every key with the lake's once a day (detect_deletes %s: about %d rows, at least %d)",
			DeleteCheckPeriod, est, DeleteCheckEveryRunRows)
	}
	size := "size unknown"
	if est >= 0 {
		size = fmt.Sprintf("about %d rows, fewer than %d", est, DeleteCheckEveryRunRows)
	}
	return plan.DetectEveryRun, fmt.Sprintf("rows deleted at the source are found by comparing every key with the lake's on every run (detect_deletes every_run: %s)", size)
}

// sampleDBTable reads up to rows rows of the table in one snapshot for
// gate 3's evidence (the profile of each column) and checks the proposed
// key on them.
func sampleDBTable(ctx context.Context, d sqldb.Dialect, db *sql.DB, name string, ti sqldb.TableInfo, t *plan.Table, rows int64) (*TableEvidence, Finding) {
	ev := &TableEvidence{Name: ti.Name, Base: ti.Name, Source: t.Source.Name, Units: []string{ti.UnitName()}}
	f := Finding{Name: name + ": sample"}
	tab := sqldb.Table{Schema: ti.Schema, Name: ti.Name}
	if d == sqldb.SQLite {
		tab.Schema = ""
	}
	src, err := sqldb.New(d, db, []sqldb.Table{tab}, nil)
	if err == nil {
		var units []source.Unit
		units, err = src.List(ctx, []string{tab.UnitName()})
		if err == nil && len(units) == 1 {
			var got *TableEvidence
			got, err = ReadEvidence(ctx, src, units, source.Options{}, rows)
			if err == nil {
				got.Name, got.Base, got.Source = ev.Name, ev.Base, ev.Source
				ev = got
			}
		}
	}
	if err != nil {
		f.Status, f.Detail = Warn, "no rows sampled: "+gate2Err(err)
		f.Fix = "the proposal stands on the catalog alone; check it before approving"
		return ev, f
	}
	for _, fr := range ev.Files {
		if fr.Error != "" {
			f.Status, f.Detail = Warn, "no rows sampled: "+fr.Error
			f.Fix = "the proposal stands on the catalog alone; check it before approving"
			return ev, f
		}
	}
	f.Status = Pass
	f.Detail = fmt.Sprintf("%s read in one snapshot", countNoun(int(ev.Rows), "row", "rows"))
	if ev.Sampled {
		f.Detail += fmt.Sprintf(" (the first %d; the table has more)", rows)
	}
	if len(t.Load.Keys) == 1 {
		for _, c := range ev.Columns {
			if c.Profile.Name == t.Load.Keys[0] || c.Profile.Name == sourceNameOf(t, t.Load.Keys[0]) {
				if c.Dups > 0 {
					f.Status = Warn
					f.Detail += fmt.Sprintf("; key %s repeats in the sample (e.g. %q) after trimming and number normalisation", t.Load.Keys[0], c.DupExample)
					f.Fix = "check the key's values: Lima compares keys trimmed and in NFC"
				} else {
					f.Detail += fmt.Sprintf("; key %s distinct in the sample", t.Load.Keys[0])
				}
			}
		}
	}
	return ev, f
}

func sourceNameOf(t *plan.Table, col string) string {
	i := slices.IndexFunc(t.Columns, func(c plan.Column) bool { return c.Name == col })
	if i >= 0 && t.Columns[i].SourceName != "" {
		return t.Columns[i].SourceName
	}
	return col
}
