package plan

import (
	"fmt"
	"math"
	"net/mail"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

var (
	prefixRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,39}$`)
	nameRE   = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)
	hashRE   = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

const (
	maxNameLen = 128
	nameHelp   = "use lower-case letters, digits and _, starting with a letter or _"
)

// Validate checks the plan against the rules of the platform.yaml layout and
// returns nil or a *ValidationError listing every problem, each with its
// path, its line when the plan was loaded from or written to a file, and a
// message saying what is wrong and what is allowed.
//
// A plan may be unfinished in two ways and still be valid: it may have no
// tables yet (gate 1 done, gate 3 not), and a base table may have no columns
// (they are inferred from a sample). References to columns are checked only
// against declared columns, and type rules only for declared types.
func (p *Plan) Validate() error {
	c := &collector{}
	if p == nil {
		c.add("", "no plan")
		return c.result()
	}
	if o := originOf(p); o != nil {
		c.file, c.lines = o.file, o.lines
	}
	v := &validator{c: c, p: p, tables: map[string]*tableInfo{}}
	for name, t := range p.Tables {
		if t != nil {
			v.tables[name] = newTableInfo(t)
		}
	}
	v.schemaVersion()
	v.platform()
	v.scope()
	v.storage()
	v.budgets()
	v.sources()
	for _, name := range p.TableNames() {
		v.table(name, p.Tables[name])
	}
	v.qualityIssues()
	v.etl()
	v.downstream()
	v.owners()
	v.schedule()
	v.gates()
	v.glueTables() // glue.go
	return c.result()
}

type validator struct {
	c      *collector
	p      *Plan
	tables map[string]*tableInfo
}

// tableInfo indexes the declared columns of a table.
type tableInfo struct {
	t        *Table
	declared bool
	byName   map[string]int // exact name → index
	types    map[string]Type
	names    []string
}

func newTableInfo(t *Table) *tableInfo {
	ti := &tableInfo{t: t, declared: len(t.Columns) > 0, byName: map[string]int{}, types: map[string]Type{}}
	for i, col := range t.Columns {
		if _, dup := ti.byName[col.Name]; dup || col.Name == "" {
			continue
		}
		ti.byName[col.Name] = i
		ti.names = append(ti.names, col.Name)
		if typ, err := col.ParsedType(); err == nil {
			ti.types[col.Name] = typ
		}
	}
	return ti
}

func (v *validator) add(path, format string, args ...any) { v.c.add(path, format, args...) }

// withDefault is "use a (default), b or c" for an enumeration whose first
// value is what the empty string means.
func withDefault(allowed ...string) string {
	return "use " + oneOf(append([]string{allowed[0] + " (default)"}, allowed[1:]...)...)
}

// enum checks that s is empty or one of allowed; help says what to write.
// Values in notYet are reported as not supported yet.
func (v *validator) enum(path, s, what string, allowed []string, help string, notYet ...string) {
	if s == "" || slices.Contains(allowed, s) {
		return
	}
	if slices.Contains(notYet, s) {
		v.add(path, "%s %q is not supported yet; %s", what, s, help)
		return
	}
	sug := ""
	if x, ok := suggest(s, allowed); ok {
		sug = fmt.Sprintf("did you mean %q? ", x)
	}
	v.add(path, "%q is not a %s; %s%s", s, what, sug, help)
}

func (v *validator) schemaVersion() {
	switch p := v.p; {
	case p.SchemaVersion == 0:
		v.add("schema_version", "missing; write schema_version: %d at the top of the file", SchemaVersion)
	case p.SchemaVersion != SchemaVersion:
		v.add("schema_version", "%d is not supported; this build of Lima reads schema_version %d", p.SchemaVersion, SchemaVersion)
	}
}

func (v *validator) platform() {
	pl := v.p.Platform
	const help = "1 to 40 characters: lower-case letters, digits and _, starting with a letter (e.g. acme_sales)"
	switch {
	case pl.Prefix == "":
		v.add("platform.prefix", "required: %s", help)
	case !prefixRE.MatchString(pl.Prefix):
		v.add("platform.prefix", "%q is not allowed; use %s", pl.Prefix, help)
	}
	v.enum("platform.pattern", pl.Pattern, "pattern", []string{PatternIceberg, PatternHive}, withDefault(PatternIceberg, PatternHive))
	v.enum("platform.catalog", pl.Catalog, "catalog", []string{CatalogSQLite, CatalogGlue, CatalogREST, CatalogS3Tables}, withDefault(CatalogSQLite, CatalogGlue, CatalogREST, CatalogS3Tables))
	v.awsCatalog()
	v.timestamp("platform.created", pl.Created)
	v.timestamp("platform.updated", pl.Updated)
}

func (v *validator) timestamp(path, s string) {
	if s == "" {
		return
	}
	if _, err := time.Parse(time.RFC3339, s); err == nil {
		return
	}
	if _, err := time.Parse(time.DateOnly, s); err == nil {
		return
	}
	v.add(path, "%q is not a timestamp; write RFC 3339 (2025-01-31T14:05:00Z) or a date (2025-01-31)", s)
}

func (v *validator) budgets() {
	for _, name := range v.p.TableNames() {
		if t := v.p.Tables[name]; t != nil {
			if _, _, _, err := v.p.Budget(t); err != nil {
				v.add(joinKey(joinKey("tables", name), "error_budget"), "%v", err)
			}
		}
	}
}

func (v *validator) storage() {
	st := v.p.Storage
	if st.Namespace != "" && (!nameRE.MatchString(st.Namespace) || len(st.Namespace) > 255) {
		v.add("storage.namespace", "%q is not allowed; %s (at most 255), or leave it empty to use the prefix", st.Namespace, nameHelp)
	}
	if v.p.Platform.Catalog == CatalogREST && st.CatalogURI == "" {
		v.add("storage.catalog_uri", "required for catalog rest: the URL of the Iceberg REST catalog")
	}
	switch st.State {
	case "", "sqlite":
		if st.StateDSNEnv != "" {
			v.add("storage.state_dsn_env", "only used with state: postgres")
		}
	case "postgres":
		switch {
		case st.StateDSNEnv == "":
			v.add("storage.state_dsn_env", "required for state: postgres: the name of the environment variable holding the DSN, e.g. LIMA_STATE_DSN")
		case strings.Contains(st.StateDSNEnv, "://") || strings.Contains(st.StateDSNEnv, "="):
			v.add("storage.state_dsn_env", "looks like a connection string; secrets never go into platform.yaml: put the DSN in an environment variable and name the variable here")
		case !envNameRE.MatchString(st.StateDSNEnv):
			v.add("storage.state_dsn_env", "%q is not an environment variable name; use letters, digits and _, e.g. LIMA_STATE_DSN", st.StateDSNEnv)
		}
		if st.StateSchema != "" && !nameRE.MatchString(st.StateSchema) {
			v.add("storage.state_schema", "%q is not allowed; %s", st.StateSchema, nameHelp)
		}
	default:
		v.add("storage.state", "%q is not a state store; use sqlite (default) or postgres", st.State)
	}
}

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (v *validator) sources() {
	if len(v.p.Sources) == 0 {
		v.add("sources", "no sources; declare at least one, e.g. sources: {crm: {kind: files, path: data/crm}}")
		return
	}
	for _, name := range v.p.SourceNames() {
		s := v.p.Sources[name]
		sp := joinKey("sources", name)
		if name == "" || !isPlainKey(name) {
			v.add(sp, "source name %q is not allowed; use letters, digits, _ and -", name)
		}
		if s == nil {
			v.add(sp, "empty; give at least kind: files and path")
			continue
		}
		switch s.Kind {
		case "":
			v.add(sp+".kind", "required; use files, postgres, mysql, sqlite, sqlserver, oracle or dynamodb")
		case "postgresql", "mariadb", "mssql":
			v.add(sp+".kind", "%q is spelled %s in a plan", s.Kind, map[string]string{"postgresql": SourcePostgres, "mariadb": SourceMySQL, "mssql": SourceSQLServer}[s.Kind])
		case SourceFiles:
			if strings.TrimSpace(s.Path) == "" {
				v.add(sp+".path", "required for kind files: the folder holding the files, relative to the workspace or absolute")
			}
			if s.DSNEnv != "" {
				v.add(sp+".dsn_env", "only used with a database source (kind postgres, mysql or sqlite)")
			}
		case SourcePostgres, SourceMySQL, SourceSQLite, SourceSQLServer, SourceOracle:
			v.dsnEnv(sp, s)
		case SourceDynamoDB:
			v.dynamoSource(sp, s)
		default:
			v.enum(sp+".kind", s.Kind, "source kind", []string{SourceFiles, SourcePostgres, SourceMySQL, SourceSQLite, SourceSQLServer, SourceOracle, SourceDynamoDB},
				"use files, postgres, mysql (also MariaDB), sqlite, sqlserver, oracle or dynamodb",
				"s3", "excel")
		}
		switch {
		case s.SnapshotFallback == "":
		case s.Kind != SourceSQLServer:
			v.add(sp+".snapshot_fallback", "only used with kind sqlserver (the other databases always read in a snapshot)")
		case s.SnapshotFallback != SnapshotSerializable:
			v.add(sp+".snapshot_fallback", "%q is not a fallback; the only one is serializable (or leave it out to refuse a database without snapshot isolation)", s.SnapshotFallback)
		}
	}
}

// dsnEnv checks how a database source finds its database: dsn_env names
// an environment variable (postgres, mysql; sqlite may use it too), or path
// is the SQLite file.
func (v *validator) dsnEnv(sp string, s *Source) {
	switch {
	case s.Kind == SourceSQLite && s.DSNEnv == "" && strings.TrimSpace(s.Path) == "":
		v.add(sp+".path", "required for kind sqlite: the database file, relative to the workspace or absolute (or dsn_env)")
	case s.Kind == SourceSQLite && s.DSNEnv != "" && s.Path != "":
		v.add(sp+".dsn_env", "give path or dsn_env for kind sqlite, not both")
	case s.Kind != SourceSQLite && s.Path != "":
		v.add(sp+".path", "not used with kind %s; name the environment variable holding the DSN in dsn_env", s.Kind)
	case s.Kind != SourceSQLite && s.DSNEnv == "":
		v.add(sp+".dsn_env", "required for kind %s: the name of the environment variable holding the DSN, e.g. LIMA_SOURCE_DSN", s.Kind)
	}
	switch {
	case s.DSNEnv == "":
	case strings.Contains(s.DSNEnv, "://") || strings.ContainsAny(s.DSNEnv, "=@/ "):
		v.add(sp+".dsn_env", "looks like a connection string; secrets never go into platform.yaml: put the DSN in an environment variable and name the variable here")
	case !envNameRE.MatchString(s.DSNEnv):
		v.add(sp+".dsn_env", "%q is not an environment variable name; use letters, digits and _, e.g. LIMA_SOURCE_DSN", s.DSNEnv)
	}
}

func (v *validator) table(name string, t *Table) {
	tp := joinKey("tables", name)
	if !nameRE.MatchString(name) || len(name) > maxNameLen {
		v.add(tp, "table name %q is not allowed; %s (at most %d)", name, nameHelp, maxNameLen)
	}
	if t == nil {
		v.add(tp, "empty; give at least source.name and source.files")
		return
	}
	ti := v.tables[name]
	v.enum(tp+".type", t.Type, "table type", []string{TableBase, TableMart}, withDefault(TableBase, TableMart))
	isMart := t.Type == TableMart

	// Where the rows come from.
	switch {
	case isMart && t.Source != nil:
		v.add(tp+".source", "a mart is built from other tables, not loaded from a source; remove source or set type: base")
	case isMart:
	case t.Source == nil:
		v.add(tp+".source", `required for a base table: name the source and the files to read, e.g. source: {name: crm, files: ["orders/*.csv"]}`)
	default:
		if v.p.Sources[t.Source.Name].IsDynamoDB() {
			v.dynamoTableSource(tp, t)
		} else {
			v.tableSource(tp+".source", t.Source)
		}
	}

	v.columns(tp, t, isMart)
	v.partitions(tp, ti)
	v.load(tp, ti)

	if isMart && len(t.Grain) == 0 {
		v.add(tp+".grain", "required for a mart: the columns that identify one row")
	}
	v.colList(tp+".grain", ti, t.Grain, nil, "")
	v.colList(tp+".sum_safe_columns", ti, t.SumSafeColumns, Type.IsNumeric, "sum_safe_columns must be numeric (int, long, decimal or double)")
	v.colList(tp+".control_columns", ti, t.ControlColumns, Type.IsNumeric, "control_columns are summed by gate 4 and must be numeric (int, long, decimal or double)")
	v.joinKeys(tp, ti)
	v.checks(tp, ti)
	v.martDefinition(tp, name, ti)
}

func (v *validator) tableSource(sp string, ts *TableSource) {
	switch {
	case ts.Name == "":
		v.add(sp+".name", "required: one of the sources (%s)", listOf(v.p.SourceNames(), 12))
	case !hasKey(v.p.Sources, ts.Name):
		v.add(sp+".name", "no source %q in sources%s", ts.Name, hint(ts.Name, v.p.SourceNames(), "declared sources"))
	}
	if ts.Export != "" {
		v.add(sp+".export", "export applies to a dynamodb source; source %s is not one", ts.Name)
	}
	if src := v.p.Sources[ts.Name]; src.IsDatabase() {
		switch {
		case ts.Table == "":
			v.add(sp+".table", "required for a %s source: the table to read, e.g. table: orders (and schema: sales)", src.Kind)
		case len(ts.Files) > 0:
			v.add(sp+".files", "a %s source is read by table, not files; remove files", src.Kind)
		case ts.Format != "" || ts.CSV != (CSV{}) || ts.Encoding != "" || ts.NullTokens != nil:
			v.add(sp, "format, csv, encoding and null_tokens apply to files only; a database gives typed values and SQL NULL")
		case src.Kind == SourceSQLite && ts.Schema != "":
			v.add(sp+".schema", "not used with kind sqlite (one schema per file)")
		}
		return
	}
	if ts.Table != "" || ts.Schema != "" {
		v.add(sp+".table", "table and schema apply to a database source (kind postgres, mysql or sqlite); source %s reads files", ts.Name)
	}
	if len(ts.Files) == 0 {
		v.add(sp+".files", `required: at least one glob relative to the source path, e.g. ["orders/*.csv"]`)
	}
	for i, g := range ts.Files {
		gp := joinIndex(sp+".files", i)
		switch {
		case strings.TrimSpace(g) == "":
			v.add(gp, `empty glob; write a pattern relative to the source path, e.g. "orders/*.csv"`)
		case strings.HasPrefix(g, "/") || strings.Contains(g, `\`) || (len(g) > 1 && g[1] == ':'):
			v.add(gp, "%q must be relative to the source path, with / as separator", g)
		case slices.Contains(strings.Split(g, "/"), ".."):
			v.add(gp, "%q leaves the source path (..); point the source at the folder instead", g)
		default:
			if _, err := path.Match(g, ""); err != nil {
				v.add(gp, "%q is not a valid glob (unbalanced [ ] or a trailing \\); use *, ? and [abc]", g)
			}
		}
	}
	v.enum(sp+".format", ts.Format, "format", []string{"csv", "tsv", "ndjson", "json", "parquet", "avro", "xlsx"},
		"use csv, tsv, ndjson, json, parquet, avro or xlsx, or leave it empty to go by the file extension")
	csv := ts.CSV
	if csv != (CSV{}) && ts.Format != "" && ts.Format != "csv" {
		v.add(sp+".csv", "csv options apply only to format csv (format is %s)", ts.Format)
	}
	if csv.Delimiter != "" && !oneChar(csv.Delimiter, "\r\n\"") {
		v.add(sp+".csv.delimiter", "%q must be a single character (e.g. \",\", \";\", \"|\" or \"\\t\" for tab), not a quote or line break", csv.Delimiter)
	}
	if csv.Quote != "" && !oneChar(csv.Quote, "\r\n") {
		v.add(sp+".csv.quote", "%q must be a single character, usually '\"'", csv.Quote)
	}
	if csv.Delimiter != "" && csv.Delimiter == csv.Quote {
		v.add(sp+".csv.quote", "the quote cannot be the delimiter")
	}
	v.enum(sp+".csv.header", csv.Header, "header setting", []string{"auto", "yes", "no"}, withDefault("auto", "yes", "no"))
}

func hasKey[V any](m map[string]V, k string) bool { _, ok := m[k]; return ok }

// oneChar reports whether s is exactly one character, none of forbidden.
func oneChar(s, forbidden string) bool {
	r := []rune(s)
	return len(r) == 1 && !strings.ContainsRune(forbidden, r[0])
}

func (v *validator) columns(tp string, t *Table, isMart bool) {
	cp := tp + ".columns"
	if len(t.Columns) == 0 {
		if isMart {
			v.add(cp, "a mart needs its columns declared: there is no source to infer them from")
		}
		return
	}
	seen := map[string]int{} // lower-case name → index
	for i, col := range t.Columns {
		ip := joinIndex(cp, i)
		switch {
		case col.Name == "":
			v.add(ip+".name", "required; %s", nameHelp)
		case !nameRE.MatchString(col.Name) || len(col.Name) > maxNameLen:
			v.add(ip+".name", "%q is not allowed; %s (at most %d); keep the file's header in source_name", col.Name, nameHelp, maxNameLen)
		}
		if col.Name != "" {
			low := strings.ToLower(col.Name)
			if j, dup := seen[low]; dup {
				v.add(ip+".name", "%q duplicates columns[%d] (%q); column names must be unique, ignoring case", col.Name, j, t.Columns[j].Name)
			} else {
				seen[low] = i
			}
		}
		typ, err := col.ParsedType()
		if err != nil {
			v.add(ip+".type", "%v", err)
		}
		if len(col.Formats) > 0 && typ.Kind != Unknown && !typ.IsTemporal() {
			v.add(ip+".formats", "formats apply to date and timestamp columns; this column is %s", typ)
		}
		for j, f := range col.Formats {
			if strings.TrimSpace(f) == "" {
				v.add(joinIndex(ip+".formats", j), "empty format; write a layout such as yyyy-MM-dd")
			}
		}
		if col.Currency != "" {
			if msg := CheckCurrency(col.Currency); msg != "" {
				v.add(ip+".currency", "%s", msg)
			} else if typ.Kind != Unknown && !typ.IsNumeric() {
				v.add(ip+".currency", "a currency applies to numeric columns (decimal, int, long, double); this column is %s", typ)
			}
		}
		for j, fix := range col.Normalize {
			if msg := checkFix(fix); msg != "" {
				v.add(joinIndex(ip+".normalize", j), "%s", msg)
			}
		}
		if r := col.RenamedFrom; r != "" {
			switch {
			case !nameRE.MatchString(r) || len(r) > maxNameLen:
				v.add(ip+".renamed_from", "%q is not a column name; %s", r, nameHelp)
			case strings.EqualFold(r, col.Name):
				v.add(ip+".renamed_from", "%q is the column's own name; remove renamed_from", r)
			default:
				for j, other := range t.Columns {
					if j != i && strings.EqualFold(other.Name, r) {
						v.add(ip+".renamed_from", "%q is the name of columns[%d]; a column can only be renamed from a name the plan no longer has", r, j)
					}
				}
			}
		}
	}
}

// Fixes lists the normalizations a column may name, as documented on
// Column.Normalize. zero_pad takes a width, thousands a separator.
var Fixes = []string{"trim", "upper", "lower", "nfc", "zero_pad:N", "trailing_minus", "thousands:C", "decimal_comma"}

const fixHelp = `use trim, upper, lower, nfc, zero_pad:N, trailing_minus, thousands:"," or decimal_comma`

func checkFix(fix string) string {
	name, arg, hasArg := strings.Cut(fix, ":")
	switch name {
	case "trim", "upper", "lower", "nfc", "trailing_minus", "decimal_comma":
		if hasArg {
			return fmt.Sprintf("%q: %s takes no argument", fix, name)
		}
		return ""
	case "zero_pad":
		n, err := strconv.Atoi(arg)
		if !hasArg || err != nil || n < 1 || n > 1000 {
			return fmt.Sprintf("%q: write zero_pad:N with the width N, e.g. zero_pad:8", fix)
		}
		return ""
	case "thousands":
		sep := arg
		if len(sep) >= 2 && (sep[0] == '"' || sep[0] == '\'') && sep[len(sep)-1] == sep[0] {
			sep = sep[1 : len(sep)-1]
		}
		if !hasArg || !oneChar(sep, "") {
			return fmt.Sprintf(`%q: write thousands:C with the separator C, e.g. thousands:"," or thousands:"."`, fix)
		}
		return ""
	}
	names := []string{"trim", "upper", "lower", "nfc", "zero_pad", "trailing_minus", "thousands", "decimal_comma"}
	if s, ok := suggest(name, names); ok {
		return fmt.Sprintf("unknown fix %q; did you mean %q? %s", fix, s, fixHelp)
	}
	return fmt.Sprintf("unknown fix %q; %s", fix, fixHelp)
}

// colRef checks that name is a declared column of the table (when columns
// are declared) and, when its type is declared, that ok(type) holds. It
// returns the column's type (Unknown when not known).
func (v *validator) colRef(p string, ti *tableInfo, name string, ok func(Type) bool, why string) Type {
	if name == "" {
		v.add(p, "empty column name")
		return Type{}
	}
	if ti == nil || !ti.declared {
		return Type{}
	}
	if _, found := ti.byName[name]; !found {
		v.add(p, "no column %q in this table%s", name, hint(name, ti.names, "columns"))
		return Type{}
	}
	typ := ti.types[name]
	if ok != nil && typ.Kind != Unknown && !ok(typ) {
		v.add(p, "%q is %s; %s", name, typ, why)
	}
	return typ
}

// colList checks a list of column names: each exists, none twice.
func (v *validator) colList(lp string, ti *tableInfo, names []string, ok func(Type) bool, why string) {
	seen := map[string]bool{}
	for i, n := range names {
		ip := joinIndex(lp, i)
		if seen[n] && n != "" {
			v.add(ip, "%q is listed twice", n)
			continue
		}
		seen[n] = true
		v.colRef(ip, ti, n, ok, why)
	}
}

func (v *validator) partitions(tp string, ti *tableInfo) {
	seen := map[string]bool{}
	timeOf := map[string]string{} // column → time transform
	for i, s := range ti.t.Partition {
		ip := joinIndex(tp+".partition", i)
		f, err := ParsePartition(s)
		if err != nil {
			v.add(ip, "%v", err)
			continue
		}
		if seen[f.String()] {
			v.add(ip, "%s is listed twice", f)
			continue
		}
		seen[f.String()] = true
		if f.isTime() {
			if prev, dup := timeOf[f.Column]; dup {
				v.add(ip, "%s and %s(%s) are redundant; partition %s by one of year, month, day or hour", f, prev, f.Column, f.Column)
				continue
			}
			timeOf[f.Column] = f.Transform
		}
		v.colRef(ip, ti, f.Column, f.AcceptsType, fmt.Sprintf("partition %s needs %s", f, f.acceptedTypes()))
	}
}

func (v *validator) load(tp string, ti *tableInfo) {
	l := ti.t.Load
	lp := tp + ".load"
	v.enum(lp+".mode", l.Mode, "load mode", []string{ModeFull, ModeIncremental, ModeUpsert, ModeCDC}, withDefault(ModeFull, ModeIncremental, ModeUpsert, ModeCDC),
		"change_capture", "changes", "micro_batch", "microbatch", "append", "merge")
	v.upsert(lp, ti)
	if (l.Mode == ModeUpsert || l.Mode == ModeCDC) && v.p.Pattern() == PatternHive {
		v.add(lp+".mode", "mode %s deletes rows by key, which Hive-style Parquet folders cannot do atomically; use platform.pattern: iceberg, or mode full or incremental", l.Mode)
	}
	if l.Mode == ModeIncremental && l.Watermark == "" {
		v.add(lp+".watermark", "required for mode incremental: the column whose maximum marks what was loaded (a date, timestamp or increasing number)")
	}
	if l.Watermark != "" {
		v.colRef(lp+".watermark", ti, l.Watermark, func(t Type) bool {
			return t.IsTemporal() || t.IsIntegral() || t.Kind == Decimal || t.Kind == String
		}, "a watermark must be a date, timestamp, timestamptz, int, long, decimal or string column")
	}
	v.colList(lp+".keys", ti, l.Keys, func(t Type) bool { return t.Kind != Double },
		"a key cannot be a double (floats do not compare exactly): use long, decimal or string")
	v.changes(lp, ti)
}

func (v *validator) joinKeys(tp string, ti *tableInfo) {
	for i, jk := range ti.t.JoinKeys {
		jp := joinIndex(tp+".join_keys", i)
		if jk.Column == "" {
			v.add(jp+".column", "required: a column of this table")
		} else {
			v.colRef(jp+".column", ti, jk.Column, nil, "")
		}
		rt, rc, ok := strings.Cut(jk.References, ".")
		switch {
		case jk.References == "":
			v.add(jp+".references", "required: write table.column")
			continue
		case !ok || rt == "" || rc == "" || strings.Contains(rc, "."):
			v.add(jp+".references", "%q: write table.column, e.g. customers.customer_id", jk.References)
			continue
		}
		other, found := v.tables[rt]
		if !found {
			v.add(jp+".references", "no table %q in tables%s", rt, hint(rt, v.p.TableNames(), "tables"))
			continue
		}
		if other.declared {
			if _, ok := other.byName[rc]; !ok {
				v.add(jp+".references", "no column %q in table %s%s", rc, rt, hint(rc, other.names, "columns"))
			}
		}
	}
}

func (v *validator) checks(tp string, ti *tableInfo) {
	names := map[string]int{}
	isString := func(t Type) bool { return t.Kind == String }
	for i, ck := range ti.t.Checks {
		cp := joinIndex(tp+".checks", i)
		if ck.Name != "" {
			if j, dup := names[ck.Name]; dup {
				v.add(cp+".name", "%q is already the name of checks[%d]; check names must be unique in a table", ck.Name, j)
			} else {
				names[ck.Name] = i
			}
		}
		switch ck.Rule {
		case "":
			v.add(cp+".rule", "required; use %s", oneOf(Rules...))
		case RuleNotNull, RuleUnique, RuleRange, RuleRegex, RuleAllowed, RuleMaxLength, RuleReferences, RuleExpression:
		default:
			sug := ""
			if s, ok := suggest(ck.Rule, Rules); ok {
				sug = fmt.Sprintf("did you mean %q? ", s)
			}
			v.add(cp+".rule", "%q is not a rule; %suse %s", ck.Rule, sug, oneOf(Rules...))
		}
		if ck.Column == "" && ck.Rule != RuleExpression {
			v.add(cp+".column", "required: the column the rule checks")
		} else if ck.Column != "" {
			switch ck.Rule {
			case RuleRange:
				v.colRef(cp+".column", ti, ck.Column, Type.IsNumeric, "range needs a numeric column")
			case RuleRegex:
				v.colRef(cp+".column", ti, ck.Column, isString, "regex needs a string column")
			case RuleMaxLength:
				v.colRef(cp+".column", ti, ck.Column, isString, "max_length needs a string column")
			default:
				v.colRef(cp+".column", ti, ck.Column, nil, "")
			}
		}
		// Parameters: required ones, and stray ones for another rule.
		switch ck.Rule {
		case RuleRange:
			switch {
			case ck.Min == nil && ck.Max == nil:
				v.add(cp, "rule range needs min, max or both")
			case ck.Min != nil && math.IsNaN(*ck.Min):
				v.add(cp+".min", "must be a number")
			case ck.Max != nil && math.IsNaN(*ck.Max):
				v.add(cp+".max", "must be a number")
			case ck.Min != nil && ck.Max != nil && *ck.Min > *ck.Max:
				v.add(cp+".max", "%v is less than min %v", *ck.Max, *ck.Min)
			}
		case RuleRegex:
			if ck.Regex == "" {
				v.add(cp+".regex", "required for rule regex: a pattern in Go (RE2) syntax, e.g. ^[A-Z]{2}[0-9]{6}$")
			} else if _, err := regexp.Compile(ck.Regex); err != nil {
				v.add(cp+".regex", "does not compile: %v", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
			}
		case RuleAllowed:
			if len(ck.Values) == 0 {
				v.add(cp+".values", "required for rule allowed: the list of allowed values")
			}
		case RuleMaxLength:
			if ck.Length <= 0 {
				v.add(cp+".length", "rule max_length needs length greater than 0")
			}
		case RuleReferences:
			tbl, col, ok := strings.Cut(ck.References, ".")
			switch {
			case !ok || tbl == "" || col == "":
				v.add(cp+".references", "required for rule references: table.column of another table, e.g. suppliers.supplier_id")
			case v.p.Tables[tbl] == nil:
				v.add(cp+".references", "no table %q in the plan%s", tbl, hint(tbl, v.p.TableNames(), "tables"))
			case v.p.Tables[tbl] == ti.t:
				v.add(cp+".references", "a table cannot reference itself")
			default:
				if rt := v.p.Tables[tbl]; len(rt.Columns) > 0 {
					if _, ok := rt.Column(col); !ok {
						v.add(cp+".references", "table %s has no column %q", tbl, col)
					}
				}
			}
		case RuleExpression:
			if strings.TrimSpace(ck.Expr) == "" {
				v.add(cp+".expr", `required for rule expression, e.g. "defect_qty <= lot_qty"`)
			} else if err := CheckExpr(ck.Expr, ti.t); err != nil {
				v.add(cp+".expr", "%v", err)
			}
		}
		if ck.Rule != "" && slices.Contains(Rules, ck.Rule) {
			stray := func(field, rule string, set bool) {
				if set && ck.Rule != rule {
					v.add(cp+"."+field, "applies only to rule %s; remove it or change the rule", rule)
				}
			}
			stray("min", RuleRange, ck.Min != nil)
			stray("max", RuleRange, ck.Max != nil)
			stray("regex", RuleRegex, ck.Regex != "")
			stray("values", RuleAllowed, len(ck.Values) > 0)
			stray("length", RuleMaxLength, ck.Length != 0)
			stray("references", RuleReferences, ck.References != "")
			stray("expr", RuleExpression, ck.Expr != "")
		}
	}
}

func (v *validator) qualityIssues() {
	for i, q := range v.p.DataQualityIssues {
		ip := joinIndex("data_quality_issues", i)
		if strings.TrimSpace(q.Issue) == "" {
			v.add(ip+".issue", "required: describe the finding")
		}
		v.tableColumnRef(ip, q.Table, q.Column)
	}
}

// tableColumnRef checks optional table and column fields of ip.
func (v *validator) tableColumnRef(ip, table, column string) {
	if table == "" {
		if column != "" {
			v.add(ip+".table", "required when column is given: the table of column %q", column)
		}
		return
	}
	ti, ok := v.tables[table]
	if !ok {
		v.add(ip+".table", "no table %q in tables%s", table, hint(table, v.p.TableNames(), "tables"))
		return
	}
	if column != "" {
		v.colRef(ip+".column", ti, column, nil, "")
	}
}

func (v *validator) etl() {
	e := v.p.ETL
	if e.MaxParallelReads < 0 {
		v.add("etl.max_parallel_reads", "%d is negative; use 0 for the default or a positive number", e.MaxParallelReads)
	}
	if math.IsNaN(e.ErrorBudget) || e.ErrorBudget < 0 || e.ErrorBudget > 1 {
		v.add("etl.error_budget", "%v is out of range; give the fraction of rows that may be held back, from 0 to 1 (0.01 = 1%%)", e.ErrorBudget)
	}
	if n := e.MaxRecordBytes; n != 0 && (n < MinRecordBytes || n > MaxRecordBytes) {
		v.add("etl.max_record_bytes", "%d is out of range; give the longest record in bytes, from %d (1 KiB) to %d (1 GiB), or 0 for the default 16 MiB", n, MinRecordBytes, MaxRecordBytes)
	}
	if n := e.KeyMemoryMB; n < 0 || n > MaxKeyMemoryMB {
		v.add("etl.key_memory_mb", "%d is out of range; give the memory of a key set in MiB, from 1 to %d, or 0 for the default 64", n, MaxKeyMemoryMB)
	}
	if n := e.Parallel; n < 0 || n > MaxParallel {
		v.add("etl.parallel", "%d is out of range; give the number of cast workers from 1 (sequential) to %d, or 0 for one per core", n, MaxParallel)
	}
}

func (v *validator) downstream() {
	consumers := []string{"bi", "c360", "ml", "unknown"}
	v.enum("downstream.consumer", v.p.Downstream.Consumer, "consumer", consumers, "use "+oneOf(consumers...))
}

func (v *validator) owners() {
	defaultAt := -1
	routes := map[[3]string]int{}
	for i, o := range v.p.Owners {
		op := joinIndex("owners", i)
		if strings.TrimSpace(o.Name) == "" {
			v.add(op+".name", "required: who handles these exceptions")
		}
		if o.Email != "" {
			if a, err := mail.ParseAddress(o.Email); err != nil || a.Address != o.Email {
				v.add(op+".email", "%q is not an e-mail address; write name@example.com", o.Email)
			}
		}
		v.tableColumnRef(op, o.Table, o.Column)
		if all := append(slices.Clone(Rules), ExceptionRules...); o.Rule != "" && !slices.Contains(all, o.Rule) {
			v.add(op+".rule", "%q is not a rule%s", o.Rule, hint(o.Rule, all, "rules"))
		}
		if n := o.Notify; n != nil {
			if len(n.Command) == 0 && n.WebhookEnv == "" {
				v.add(op+".notify", "give a command (a list: [program, args…]) or webhook_env (the name of the environment variable holding the URL)")
			}
			if n.WebhookEnv != "" && !envNameRE.MatchString(n.WebhookEnv) {
				v.add(op+".notify.webhook_env", "%q is not an environment variable name; the URL itself never goes into platform.yaml", n.WebhookEnv)
			}
			if len(n.Command) > 0 && strings.TrimSpace(n.Command[0]) == "" {
				v.add(op+".notify.command", "the first element is the program to run")
			}
		}
		if _, _, err := o.DeadlineAt(time.Time{}); err != nil {
			v.add(op+".deadline", "%v", err)
		}
		if o.Default {
			if defaultAt >= 0 {
				v.add(op+".default", "only one owner can be the default; owners[%d] (%q) already is", defaultAt, v.p.Owners[defaultAt].Name)
			} else {
				defaultAt = i
			}
			if o.Table != "" || o.Column != "" || o.Rule != "" {
				v.add(op+".default", "the default owner takes every exception nobody else routes; remove table, column and rule, or default")
			}
			continue
		}
		key := [3]string{o.Table, o.Column, o.Rule}
		if j, dup := routes[key]; dup {
			v.add(op, "routes the same exceptions as owners[%d] (%q); give one owner per table/column/rule", j, v.p.Owners[j].Name)
		} else {
			routes[key] = i
		}
		if o.Table == "" && o.Column == "" && o.Rule == "" {
			v.add(op, "routes nothing: give table, column or rule, or set default: true")
		}
	}
}

func (v *validator) schedule() {
	s := v.p.Schedule
	if _, err := s.Location(); err != nil {
		v.add("schedule.timezone", "%v", err)
	}
	if s.Window != "" {
		if _, _, err := ParseWindow(s.Window); err != nil {
			v.add("schedule.window", "%v", err)
		}
	}
	if s.Deadline != "" {
		if _, err := ParseClock(s.Deadline); err != nil {
			v.add("schedule.deadline", "%v", err)
		}
	}
	if s.Cron != "" {
		if err := CheckCron(s.Cron); err != nil {
			v.add("schedule.cron", "%v", err)
		}
	}
	v.watch()
	v.maintenance()
}

func (v *validator) gates() {
	v.approval("gates.scope", v.p.Gates.Scope)
	v.approval("gates.data_model", v.p.Gates.DataModel)
	v.approval("gates.teardown", v.p.Gates.Teardown)
}

func (v *validator) approval(ap string, a *Approval) {
	if a == nil {
		return
	}
	if strings.TrimSpace(a.ApprovedBy) == "" {
		v.add(ap+".approved_by", "required: who approved")
	}
	if a.ApprovedAt == "" {
		v.add(ap+".approved_at", "required: when, in RFC 3339 (2025-01-31T14:05:00Z)")
	} else if _, err := time.Parse(time.RFC3339, a.ApprovedAt); err != nil {
		v.add(ap+".approved_at", "%q is not a timestamp; write RFC 3339 (2025-01-31T14:05:00Z)", a.ApprovedAt)
	}
	if a.PlanHash != "" && !hashRE.MatchString(a.PlanHash) {
		v.add(ap+".plan_hash", "%q is not a plan hash (64 lower-case hex digits, as lima-tui approve records)", a.PlanHash)
	}
}
