package plan

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func loadFixture(t *testing.T) *Plan {
	t.Helper()
	p, err := Load("testdata/valid.yaml")
	if err != nil {
		t.Fatalf("Load fixture: %v", err)
	}
	return p
}

// problems flattens err into sorted "path: msg" strings.
func problems(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error is %T, want *ValidationError: %v", err, err)
	}
	if !errors.Is(err, ErrInvalidPlan) {
		t.Errorf("errors.Is(err, ErrInvalidPlan) = false")
	}
	out := make([]string, len(ve.Errors))
	for i, fe := range ve.Errors {
		out[i] = fe.Path + ": " + fe.Msg
	}
	slices.Sort(out)
	return out
}

func f64(v float64) *float64 { return &v }

func TestValidateFixture(t *testing.T) {
	if err := loadFixture(t).Validate(); err != nil {
		t.Fatalf("fixture should be valid:\n%v", err)
	}
}

func TestValidate(t *testing.T) {
	const prefixHelp = "1 to 40 characters: lower-case letters, digits and _, starting with a letter (e.g. acme_sales)"
	const rules = "not_null, unique, range, regex, allowed, max_length, references or expression"
	tests := []struct {
		name string
		mut  func(p *Plan)
		want []string
	}{
		// Top level and platform.
		{"schema version missing", func(p *Plan) { p.SchemaVersion = 0 },
			[]string{"schema_version: missing; write schema_version: 1 at the top of the file"}},
		{"schema version other", func(p *Plan) { p.SchemaVersion = 3 },
			[]string{"schema_version: 3 is not supported; this build of Lima reads schema_version 1"}},
		{"prefix missing", func(p *Plan) { p.Platform.Prefix = "" },
			[]string{"platform.prefix: required: " + prefixHelp}},
		{"prefix bad characters", func(p *Plan) { p.Platform.Prefix = "Acme-Ops" },
			[]string{`platform.prefix: "Acme-Ops" is not allowed; use ` + prefixHelp}},
		{"prefix starts with digit", func(p *Plan) { p.Platform.Prefix = "1acme" },
			[]string{`platform.prefix: "1acme" is not allowed; use ` + prefixHelp}},
		{"prefix 41 characters", func(p *Plan) { p.Platform.Prefix = strings.Repeat("a", 41) },
			[]string{`platform.prefix: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" is not allowed; use ` + prefixHelp}},
		{"prefix 40 characters ok", func(p *Plan) { p.Platform.Prefix = strings.Repeat("a", 40) }, nil},
		{"pattern unknown", func(p *Plan) { p.Platform.Pattern = "delta" },
			[]string{`platform.pattern: "delta" is not a pattern; use iceberg (default) or hive`}},
		{"pattern misspelt", func(p *Plan) { p.Platform.Pattern = "hvie" },
			[]string{`platform.pattern: "hvie" is not a pattern; did you mean "hive"? use iceberg (default) or hive`}},
		{"pattern empty ok", func(p *Plan) { p.Platform.Pattern = "" }, nil},
		{"catalog unknown", func(p *Plan) { p.Platform.Catalog = "nessie" },
			[]string{`platform.catalog: "nessie" is not a catalog; use sqlite (default), glue, rest or s3tables`}},
		{"catalog rest needs uri", func(p *Plan) { p.Platform.Catalog = "rest" },
			[]string{"storage.catalog_uri: required for catalog rest: the URL of the Iceberg REST catalog"}},
		{"created not a timestamp", func(p *Plan) { p.Platform.Created = "yesterday" },
			[]string{`platform.created: "yesterday" is not a timestamp; write RFC 3339 (2025-01-31T14:05:00Z) or a date (2025-01-31)`}},
		{"namespace bad", func(p *Plan) { p.Storage.Namespace = "Sales NS" },
			[]string{`storage.namespace: "Sales NS" is not allowed; use lower-case letters, digits and _, starting with a letter or _ (at most 255), or leave it empty to use the prefix`}},

		// Sources.
		{"no sources and no tables", func(p *Plan) { p.Sources, p.Tables, p.Owners = nil, nil, nil },
			[]string{"sources: no sources; declare at least one, e.g. sources: {crm: {kind: files, path: data/crm}}"}},
		{"no tables ok", func(p *Plan) { p.Tables, p.Owners = nil, nil }, nil},
		{"source kind not yet", func(p *Plan) { p.Sources["field"].Kind = "excel" },
			[]string{`sources.field.kind: source kind "excel" is not supported yet; use files, postgres, mysql (also MariaDB), sqlite, sqlserver, oracle or dynamodb`}},
		{"source kind missing", func(p *Plan) { p.Sources["field"].Kind = "" },
			[]string{"sources.field.kind: required; use files, postgres, mysql, sqlite, sqlserver, oracle or dynamodb"}},
		{"source kind misspelt", func(p *Plan) { p.Sources["field"].Kind = "fles" },
			[]string{`sources.field.kind: "fles" is not a source kind; did you mean "files"? use files, postgres, mysql (also MariaDB), sqlite, sqlserver, oracle or dynamodb`}},
		{"database source", func(p *Plan) {
			p.Sources["field"] = &Source{Kind: "postgres", DSNEnv: "FIELD_DSN"}
			for _, t := range p.Tables {
				if t.Source != nil {
					*t.Source = TableSource{Name: "field", Table: "sites", Schema: "field"}
				}
			}
		}, nil},
		{"database source dsn in plan", func(p *Plan) {
			p.Sources["field"] = &Source{Kind: "mysql", DSNEnv: "root:secret@tcp(db:3306)/erp"}
			for _, t := range p.Tables {
				if t.Source != nil {
					*t.Source = TableSource{Name: "field", Table: "sites"}
				}
			}
		}, []string{"sources.field.dsn_env: looks like a connection string; secrets never go into platform.yaml: put the DSN in an environment variable and name the variable here"}},
		{"database source without dsn_env", func(p *Plan) { p.Sources["field"] = &Source{Kind: "postgres"} },
			[]string{"sources.field.dsn_env: required for kind postgres: the name of the environment variable holding the DSN, e.g. LIMA_SOURCE_DSN",
				"tables.inspections.source.table: required for a postgres source: the table to read, e.g. table: orders (and schema: sales)",
				"tables.sites.source.table: required for a postgres source: the table to read, e.g. table: orders (and schema: sales)"}},
		{"sqlserver source", func(p *Plan) {
			p.Sources["field"] = &Source{Kind: "sqlserver", DSNEnv: "FIELD_DSN", SnapshotFallback: "serializable"}
			for _, t := range p.Tables {
				if t.Source != nil {
					*t.Source = TableSource{Name: "field", Table: "sites", Schema: "dbo"}
				}
			}
		}, nil},
		{"oracle source", func(p *Plan) {
			p.Sources["field"] = &Source{Kind: "oracle", DSNEnv: "FIELD_DSN"}
			for _, t := range p.Tables {
				if t.Source != nil {
					*t.Source = TableSource{Name: "field", Table: "SITES", Schema: "FIELD"}
				}
			}
		}, nil},
		{"mssql spelled sqlserver", func(p *Plan) { p.Sources["field"] = &Source{Kind: "mssql", DSNEnv: "FIELD_DSN"} },
			[]string{`sources.field.kind: "mssql" is spelled sqlserver in a plan`}},
		{"oracle without dsn_env, snapshot_fallback elsewhere", func(p *Plan) {
			p.Sources["field"] = &Source{Kind: "oracle", SnapshotFallback: "serializable"}
			for _, t := range p.Tables {
				if t.Source != nil {
					*t.Source = TableSource{Name: "field", Table: "SITES"}
				}
			}
		}, []string{"sources.field.dsn_env: required for kind oracle: the name of the environment variable holding the DSN, e.g. LIMA_SOURCE_DSN",
			"sources.field.snapshot_fallback: only used with kind sqlserver (the other databases always read in a snapshot)"}},
		{"sqlserver unknown fallback", func(p *Plan) {
			p.Sources["field"] = &Source{Kind: "sqlserver", DSNEnv: "FIELD_DSN", SnapshotFallback: "read_committed"}
			for _, t := range p.Tables {
				if t.Source != nil {
					*t.Source = TableSource{Name: "field", Table: "sites"}
				}
			}
		}, []string{`sources.field.snapshot_fallback: "read_committed" is not a fallback; the only one is serializable (or leave it out to refuse a database without snapshot isolation)`}},
		{"sqlite source without path", func(p *Plan) {
			p.Sources["field"] = &Source{Kind: "sqlite"}
			for _, t := range p.Tables {
				if t.Source != nil {
					*t.Source = TableSource{Name: "field", Table: "sites"}
				}
			}
		}, []string{"sources.field.path: required for kind sqlite: the database file, relative to the workspace or absolute (or dsn_env)"}},
		{"table on a files source", func(p *Plan) { p.Tables["sites"].Source.Table = "sites" },
			[]string{"tables.sites.source.table: table and schema apply to a database source (kind postgres, mysql or sqlite); source field reads files"}},
		{"source path missing", func(p *Plan) { p.Sources["field"].Path = " " },
			[]string{"sources.field.path: required for kind files: the folder holding the files, relative to the workspace or absolute"}},
		{"source empty", func(p *Plan) { p.Sources["field"] = nil },
			[]string{"sources.field: empty; give at least kind: files and path"}},
		{"source name odd", func(p *Plan) { p.Sources["my files"] = &Source{Kind: "files", Path: "x"} },
			[]string{`sources["my files"]: source name "my files" is not allowed; use letters, digits, _ and -`}},

		// Tables.
		{"table name bad", func(p *Plan) { p.Tables["Site-Scores"] = p.Tables["site_scores"]; delete(p.Tables, "site_scores") },
			[]string{`tables.Site-Scores: table name "Site-Scores" is not allowed; use lower-case letters, digits and _, starting with a letter or _ (at most 128)`}},
		{"table empty", func(p *Plan) { p.Tables["extra"] = nil },
			[]string{"tables.extra: empty; give at least source.name and source.files"}},
		{"table type unknown", func(p *Plan) { p.Tables["sites"].Type = "view" },
			[]string{`tables.sites.type: "view" is not a table type; use base (default) or mart`}},
		{"base table without source", func(p *Plan) { p.Tables["sites"].Source = nil },
			[]string{`tables.sites.source: required for a base table: name the source and the files to read, e.g. source: {name: crm, files: ["orders/*.csv"]}`}},
		{"source name missing", func(p *Plan) { p.Tables["sites"].Source.Name = "" },
			[]string{"tables.sites.source.name: required: one of the sources (field)"}},
		{"source name misspelt", func(p *Plan) { p.Tables["sites"].Source.Name = "feild" },
			[]string{`tables.sites.source.name: no source "feild" in sources; did you mean "field"?`}},
		{"source name unknown", func(p *Plan) { p.Tables["sites"].Source.Name = "erp" },
			[]string{`tables.sites.source.name: no source "erp" in sources; declared sources: field`}},
		{"files missing", func(p *Plan) { p.Tables["sites"].Source.Files = nil },
			[]string{`tables.sites.source.files: required: at least one glob relative to the source path, e.g. ["orders/*.csv"]`}},
		{"bad globs", func(p *Plan) { p.Tables["sites"].Source.Files = []string{"/abs/*.csv", "../up/*.csv", "[a.csv", " "} },
			[]string{
				`tables.sites.source.files[0]: "/abs/*.csv" must be relative to the source path, with / as separator`,
				`tables.sites.source.files[1]: "../up/*.csv" leaves the source path (..); point the source at the folder instead`,
				`tables.sites.source.files[2]: "[a.csv" is not a valid glob (unbalanced [ ] or a trailing \); use *, ? and [abc]`,
				`tables.sites.source.files[3]: empty glob; write a pattern relative to the source path, e.g. "orders/*.csv"`,
			}},
		{"format unknown", func(p *Plan) { p.Tables["sites"].Source.Format = "txt" },
			[]string{`tables.sites.source.format: "txt" is not a format; use csv, tsv, ndjson, json, parquet, avro or xlsx, or leave it empty to go by the file extension`}},
		{"csv delimiter two characters", func(p *Plan) { p.Tables["inspections"].Source.CSV.Delimiter = ";;" },
			[]string{`tables.inspections.source.csv.delimiter: ";;" must be a single character (e.g. ",", ";", "|" or "\t" for tab), not a quote or line break`}},
		{"csv quote is delimiter", func(p *Plan) { p.Tables["inspections"].Source.CSV.Quote = ";" },
			[]string{"tables.inspections.source.csv.quote: the quote cannot be the delimiter"}},
		{"csv header unknown", func(p *Plan) { p.Tables["inspections"].Source.CSV.Header = "maybe" },
			[]string{`tables.inspections.source.csv.header: "maybe" is not a header setting; use auto (default), yes or no`}},
		{"csv options on parquet", func(p *Plan) { p.Tables["inspections"].Source.Format = "parquet" },
			[]string{"tables.inspections.source.csv: csv options apply only to format csv (format is parquet)"}},

		// Marts.
		{"mart with source", func(p *Plan) { p.Tables["site_scores"].Source = &TableSource{Name: "field", Files: []string{"x.csv"}} },
			[]string{"tables.site_scores.source: a mart is built from other tables, not loaded from a source; remove source or set type: base"}},
		{"mart without columns", func(p *Plan) { p.Tables["site_scores"].Columns = nil },
			[]string{"tables.site_scores.columns: a mart needs its columns declared: there is no source to infer them from"}},
		{"mart without grain", func(p *Plan) { p.Tables["site_scores"].Grain = nil },
			[]string{"tables.site_scores.grain: required for a mart: the columns that identify one row"}},

		// Columns.
		{"base table without columns ok", func(p *Plan) { p.Tables["sites"].Columns = nil }, nil},
		{"column name missing", func(p *Plan) { p.Tables["sites"].Columns[1].Name = "" },
			[]string{"tables.sites.columns[1].name: required; use lower-case letters, digits and _, starting with a letter or _"}},
		{"column name not allowed", func(p *Plan) { p.Tables["sites"].Columns[1].Name = "Region Name" },
			[]string{`tables.sites.columns[1].name: "Region Name" is not allowed; use lower-case letters, digits and _, starting with a letter or _ (at most 128); keep the file's header in source_name`}},
		{"column name duplicate ignoring case", func(p *Plan) { p.Tables["sites"].Columns[1].Name = "SITE_CODE" },
			[]string{
				`tables.sites.columns[1].name: "SITE_CODE" duplicates columns[0] ("site_code"); column names must be unique, ignoring case`,
				`tables.sites.columns[1].name: "SITE_CODE" is not allowed; use lower-case letters, digits and _, starting with a letter or _ (at most 128); keep the file's header in source_name`,
			}},
		{"column name duplicate", func(p *Plan) { p.Tables["sites"].Columns[1].Name = "site_code" },
			[]string{`tables.sites.columns[1].name: "site_code" duplicates columns[0] ("site_code"); column names must be unique, ignoring case`}},
		{"column type foreign", func(p *Plan) { p.Tables["sites"].Columns[1].Type = "varchar(20)" },
			[]string{`tables.sites.columns[1].type: unknown type "varchar(20)"; did you mean string?`}},
		{"column type precision too large", func(p *Plan) { p.Tables["inspections"].Columns[3].Type = "decimal(39,2)" },
			[]string{"tables.inspections.columns[3].type: decimal(39,2): precision 39 is out of range; use 1 to 38"}},
		{"column type empty ok", func(p *Plan) { p.Tables["sites"].Columns[1].Type = "" }, nil},
		{"formats on a string column", func(p *Plan) { p.Tables["sites"].Columns[1].Formats = []string{"yyyy-MM-dd"} },
			[]string{"tables.sites.columns[1].formats: formats apply to date and timestamp columns; this column is string"}},
		{"normalize", func(p *Plan) {
			p.Tables["sites"].Columns[1].Normalize = []string{"trimm", "zero_pad", "thousands:,,", "upper:x", `thousands:"."`, "decimal_comma"}
		}, []string{
			`tables.sites.columns[1].normalize[0]: unknown fix "trimm"; did you mean "trim"? use trim, upper, lower, nfc, zero_pad:N, trailing_minus, thousands:"," or decimal_comma`,
			`tables.sites.columns[1].normalize[1]: "zero_pad": write zero_pad:N with the width N, e.g. zero_pad:8`,
			`tables.sites.columns[1].normalize[2]: "thousands:,,": write thousands:C with the separator C, e.g. thousands:"," or thousands:"."`,
			`tables.sites.columns[1].normalize[3]: "upper:x": upper takes no argument`,
		}},

		{"currency", func(p *Plan) { p.Tables["inspections"].Columns[3].Currency = "KRW" }, nil},
		{"currency unknown", func(p *Plan) {
			c := p.Tables["inspections"].Columns
			c[3].Currency, c[4].Currency, c[0].Currency = "WON", "krw", "₩"
			p.Tables["sites"].Columns[1].Currency = "USD"
		}, []string{
			`tables.inspections.columns[0].currency: "₩" is a symbol, not a code: write its ISO 4217 code (KRW)`,
			`tables.inspections.columns[3].currency: "WON" is not an ISO 4217 currency code; write the column's currency as its three-letter code, e.g. KRW, USD, EUR, JPY`,
			`tables.inspections.columns[4].currency: "krw": write the ISO 4217 code in capitals: currency: KRW`,
			"tables.sites.columns[1].currency: a currency applies to numeric columns (decimal, int, long, double); this column is string",
		}},

		// Partitions.
		{"partitions", func(p *Plan) {
			tb := p.Tables["inspections"]
			tb.Columns[2].Type = "date"
			tb.Partition = []string{"hour(inspected_at)", "month(score)", "bucket(0, site_code)", "year(inspected)",
				"month(inspected_at)", "day(inspected_at)", "truncate(4, site_code)", "month(inspected_at)"}
		}, []string{
			`tables.inspections.partition[0]: "inspected_at" is date; partition hour(inspected_at) needs a timestamp or timestamptz column`,
			`tables.inspections.partition[1]: "score" is decimal(5,2); partition month(score) needs a date, timestamp or timestamptz column`,
			`tables.inspections.partition[2]: "bucket(0, site_code)": bucket count must be from 1 to 2147483647`,
			`tables.inspections.partition[3]: no column "inspected" in this table; did you mean "inspected_at"?`,
			"tables.inspections.partition[4]: month(inspected_at) and hour(inspected_at) are redundant; partition inspected_at by one of year, month, day or hour",
			"tables.inspections.partition[5]: day(inspected_at) and hour(inspected_at) are redundant; partition inspected_at by one of year, month, day or hour",
			"tables.inspections.partition[7]: month(inspected_at) is listed twice",
		}},
		{"identity partition on double", func(p *Plan) {
			tb := p.Tables["inspections"]
			tb.Columns[4].Type = "double"
			tb.Partition = []string{"defects"}
		}, []string{`tables.inspections.partition[0]: "defects" is double; partition defects needs a column that is not double or binary`}},
		{"bucket on timestamp", func(p *Plan) { p.Tables["inspections"].Partition = []string{"bucket(4, inspected_at)"} },
			[]string{`tables.inspections.partition[0]: "inspected_at" is timestamptz; partition bucket(4, inspected_at) needs an int, long, string, date or decimal column`}},
		{"partition on inferred columns unchecked", func(p *Plan) {
			p.Tables["sites"].Columns = nil
			p.Tables["sites"].Partition = []string{"hour(region)", "month("}
		}, []string{`tables.sites.partition[1]: "month(": missing closing parenthesis; write col, year(col), month(col), day(col), hour(col), bucket(N, col) or truncate(W, col)`}},

		// Load.
		{"mode not yet", func(p *Plan) { p.Tables["sites"].Load.Mode = "merge" },
			[]string{`tables.sites.load.mode: load mode "merge" is not supported yet; use full (default), incremental, upsert or cdc`}},
		{"mode misspelt", func(p *Plan) { p.Tables["sites"].Load.Mode = "fulll" },
			[]string{`tables.sites.load.mode: "fulll" is not a load mode; did you mean "full"? use full (default), incremental, upsert or cdc`}},
		{"cdc without keys and changes", func(p *Plan) { p.Tables["sites"].Load = LoadSpec{Mode: "cdc"} },
			[]string{`tables.sites.load.keys: required for mode cdc: the key that identifies a row across changes`,
				`tables.sites.load.changes: required for mode cdc: name the operation and ordering columns, e.g. changes: {operation: op, ordering: seq}`}},
		{"cdc on hive folders", func(p *Plan) {
			p.Platform.Pattern, p.Platform.Catalog = "hive", "glue"
			p.Tables["inspections"].Partition = p.Tables["inspections"].Partition[:1]
			p.Tables["sites"].Load = LoadSpec{Mode: "cdc"}
		}, []string{`tables.sites.load.keys: required for mode cdc: the key that identifies a row across changes`,
			`tables.sites.load.changes: required for mode cdc: name the operation and ordering columns, e.g. changes: {operation: op, ordering: seq}`,
			`tables.sites.load.mode: mode cdc deletes rows by key, which Hive-style Parquet folders cannot do atomically; use platform.pattern: iceberg, or mode full or incremental`}},
		{"history on a mart", func(p *Plan) {
			p.Tables["sites"].Type, p.Tables["sites"].Source, p.Tables["sites"].Grain, p.Tables["sites"].History = TableMart, nil, []string{"site_code"}, true
		}, []string{`tables.sites.history: a mart is rebuilt from its base tables; keep history on the base tables`}},
		{"changes without cdc", func(p *Plan) { p.Tables["sites"].Load.Changes = &Changes{Operation: "op", Ordering: "seq"} },
			[]string{`tables.sites.load.changes: only for mode cdc`}},
		{"incremental without watermark", func(p *Plan) { p.Tables["sites"].Load.Mode = "incremental" },
			[]string{"tables.sites.load.watermark: required for mode incremental: the column whose maximum marks what was loaded (a date, timestamp or increasing number)"}},
		{"watermark boolean", func(p *Plan) {
			tb := p.Tables["inspections"]
			tb.Columns[4].Type = "boolean"
			tb.Load.Watermark = "defects"
		}, []string{
			`tables.inspections.control_columns[1]: "defects" is boolean; control_columns are summed by gate 4 and must be numeric (int, long, decimal or double)`,
			`tables.inspections.load.watermark: "defects" is boolean; a watermark must be a date, timestamp, timestamptz, int, long, decimal or string column`,
		}},
		{"keys", func(p *Plan) { p.Tables["inspections"].Load.Keys = []string{"inspection_id", "inspection_id", "nope"} },
			[]string{
				`tables.inspections.load.keys[1]: "inspection_id" is listed twice`,
				`tables.inspections.load.keys[2]: no column "nope" in this table; columns: inspection_id, site_code, inspected_at, score, defects`,
			}},
		{"key double", func(p *Plan) { p.Tables["sites"].Columns[0].Type = "double" },
			[]string{`tables.sites.load.keys[0]: "site_code" is double; a key cannot be a double (floats do not compare exactly): use long, decimal or string`}},
		{"key on inferred columns unchecked", func(p *Plan) {
			p.Tables["sites"].Columns = nil
			p.Tables["sites"].Load = LoadSpec{Mode: "incremental", Keys: []string{"anything"}, Watermark: "whatever"}
		}, nil},

		// Column lists.
		{"grain unknown column", func(p *Plan) { p.Tables["site_scores"].Grain = []string{"site_code", "nope"} },
			[]string{`tables.site_scores.grain[1]: no column "nope" in this table; columns: site_code, month, total_score`}},
		{"sum safe not numeric", func(p *Plan) { p.Tables["site_scores"].SumSafeColumns = []string{"site_code"} },
			[]string{`tables.site_scores.sum_safe_columns[0]: "site_code" is string; sum_safe_columns must be numeric (int, long, decimal or double)`}},
		{"control column not numeric", func(p *Plan) { p.Tables["inspections"].ControlColumns = []string{"site_code", ""} },
			[]string{
				`tables.inspections.control_columns[0]: "site_code" is string; control_columns are summed by gate 4 and must be numeric (int, long, decimal or double)`,
				"tables.inspections.control_columns[1]: empty column name",
			}},
		{"join keys", func(p *Plan) {
			p.Tables["inspections"].JoinKeys = []JoinKey{
				{Column: "site_code", References: "sites"},
				{Column: "", References: "site.site_code"},
				{Column: "site_code", References: "sites.code"},
				{Column: "site", References: ""},
			}
		}, []string{
			`tables.inspections.join_keys[0].references: "sites": write table.column, e.g. customers.customer_id`,
			"tables.inspections.join_keys[1].column: required: a column of this table",
			`tables.inspections.join_keys[1].references: no table "site" in tables; did you mean "sites"?`,
			`tables.inspections.join_keys[2].references: no column "code" in table sites; columns: site_code, region`,
			`tables.inspections.join_keys[3].column: no column "site" in this table; columns: inspection_id, site_code, inspected_at, score, defects`,
			"tables.inspections.join_keys[3].references: required: write table.column",
		}},

		// Checks.
		{"checks", func(p *Plan) {
			p.Tables["inspections"].Checks = []Check{
				{Rule: "", Column: "score"},
				{Rule: "notnull", Column: "score"},
				{Rule: "not_null"},
				{Rule: "range", Column: "score"},
				{Rule: "range", Column: "score", Min: f64(10), Max: f64(1)},
				{Rule: "regex", Column: "site_code", Regex: "("},
				{Rule: "allowed", Column: "site_code"},
				{Rule: "max_length", Column: "site_code"},
				{Rule: "range", Column: "score", Min: f64(0), Values: []string{"a"}},
				{Rule: "range", Column: "site_code", Max: f64(5)},
				{Name: "a", Rule: "not_null", Column: "score"},
				{Name: "a", Rule: "unique", Column: "score"},
				{Rule: "regex", Column: "score", Regex: "x"},
				{Rule: "allowed", Column: "site_code", Values: []string{"A"}, Length: 3},
			}
		}, []string{
			"tables.inspections.checks[0].rule: required; use " + rules,
			`tables.inspections.checks[1].rule: "notnull" is not a rule; did you mean "not_null"? use ` + rules,
			"tables.inspections.checks[2].column: required: the column the rule checks",
			"tables.inspections.checks[3]: rule range needs min, max or both",
			"tables.inspections.checks[4].max: 1 is less than min 10",
			"tables.inspections.checks[5].regex: does not compile: missing closing ): `(`",
			"tables.inspections.checks[6].values: required for rule allowed: the list of allowed values",
			"tables.inspections.checks[7].length: rule max_length needs length greater than 0",
			"tables.inspections.checks[8].values: applies only to rule allowed; remove it or change the rule",
			`tables.inspections.checks[9].column: "site_code" is string; range needs a numeric column`,
			`tables.inspections.checks[11].name: "a" is already the name of checks[10]; check names must be unique in a table`,
			`tables.inspections.checks[12].column: "score" is decimal(5,2); regex needs a string column`,
			"tables.inspections.checks[13].length: applies only to rule max_length; remove it or change the rule",
		}},

		// The rest of the plan.
		{"quality issues", func(p *Plan) {
			p.DataQualityIssues = []QualityIssue{
				{Issue: ""},
				{Issue: "x", Table: "sitez"},
				{Issue: "y", Column: "c"},
				{Issue: "z", Table: "sites", Column: "regoin"},
				{Issue: "fine", Table: "sites", Column: "region"},
			}
		}, []string{
			"data_quality_issues[0].issue: required: describe the finding",
			`data_quality_issues[1].table: no table "sitez" in tables; did you mean "sites"?`,
			`data_quality_issues[2].table: required when column is given: the table of column "c"`,
			`data_quality_issues[3].column: no column "regoin" in this table; did you mean "region"?`,
		}},
		{"etl", func(p *Plan) { p.ETL = ETL{MaxParallelReads: -1, ErrorBudget: 5} },
			[]string{
				"etl.error_budget: 5 is out of range; give the fraction of rows that may be held back, from 0 to 1 (0.01 = 1%)",
				"etl.max_parallel_reads: -1 is negative; use 0 for the default or a positive number",
			}},
		{"etl record limit low", func(p *Plan) { p.ETL = ETL{MaxRecordBytes: 1023} },
			[]string{"etl.max_record_bytes: 1023 is out of range; give the longest record in bytes, from 1024 (1 KiB) to 1073741824 (1 GiB), or 0 for the default 16 MiB"}},
		{"etl record limit high", func(p *Plan) { p.ETL = ETL{MaxRecordBytes: 1<<30 + 1} },
			[]string{"etl.max_record_bytes: 1073741825 is out of range; give the longest record in bytes, from 1024 (1 KiB) to 1073741824 (1 GiB), or 0 for the default 16 MiB"}},
		{"etl record limit in range", func(p *Plan) { p.ETL = ETL{MaxRecordBytes: 1024} }, nil},
		{"etl key memory negative", func(p *Plan) { p.ETL = ETL{KeyMemoryMB: -1} },
			[]string{"etl.key_memory_mb: -1 is out of range; give the memory of a key set in MiB, from 1 to 65536, or 0 for the default 64"}},
		{"etl key memory high", func(p *Plan) { p.ETL = ETL{KeyMemoryMB: 1<<16 + 1} },
			[]string{"etl.key_memory_mb: 65537 is out of range; give the memory of a key set in MiB, from 1 to 65536, or 0 for the default 64"}},
		{"etl key memory in range", func(p *Plan) { p.ETL = ETL{KeyMemoryMB: 1} }, nil},
		{"consumer", func(p *Plan) { p.Downstream.Consumer = "tableau" },
			[]string{`downstream.consumer: "tableau" is not a consumer; use bi, c360, ml or unknown`}},
		{"owners", func(p *Plan) {
			p.Owners = []Owner{
				{Name: "Ana", Email: "ana(at)example", Table: "inspections"},
				{Name: "", Table: "inspection", Rule: "regexp", Deadline: "soon"},
				{Name: "Bo", Table: "inspections"},
				{Name: "Cy"},
				{Name: "Ops", Default: true},
				{Name: "Night", Default: true, Table: "sites"},
			}
		}, []string{
			`owners[0].email: "ana(at)example" is not an e-mail address; write name@example.com`,
			`owners[1].deadline: "soon" is not a duration; write e.g. 4h, 48h, 2d, 1w or 2bd (business days)`,
			"owners[1].name: required: who handles these exceptions",
			`owners[1].rule: "regexp" is not a rule; did you mean "regex"?`,
			`owners[1].table: no table "inspection" in tables; did you mean "inspections"?`,
			`owners[2]: routes the same exceptions as owners[0] ("Ana"); give one owner per table/column/rule`,
			"owners[3]: routes nothing: give table, column or rule, or set default: true",
			`owners[5].default: only one owner can be the default; owners[4] ("Ops") already is`,
			"owners[5].default: the default owner takes every exception nobody else routes; remove table, column and rule, or default",
		}},
		{"schedule", func(p *Plan) {
			p.Schedule = Schedule{Timezone: "Mars/Olympus", Window: "1-5", Deadline: "25:00", Cron: "0 25 * * *"}
		}, []string{
			`schedule.cron: "0 25 * * *": hour 25 is out of range 0-23; use five fields "minute hour day-of-month month day-of-week", e.g. "0 2 * * *" (02:00 every day), or @daily, @hourly, @weekly, @monthly`,
			`schedule.deadline: "25:00" is out of range; use 00:00 to 23:59`,
			`schedule.timezone: "Mars/Olympus" is not a known time zone; use an IANA name such as Europe/Berlin, America/New_York or UTC`,
			`schedule.window: window "1-5": start "1" is not a time of day; write HH:MM in 24-hour time, e.g. 06:30`,
		}},
		{"schedule empty window", func(p *Plan) { p.Schedule.Window = "05:00-05:00" },
			[]string{`schedule.window: window "05:00-05:00" is empty: start and end are the same`}},
		{"schedule across midnight ok", func(p *Plan) { p.Schedule.Window = "22:00-04:00"; p.Schedule.Cron = "@daily" }, nil},
		{"gates", func(p *Plan) {
			p.Gates.Scope = &Approval{ApprovedAt: "yesterday", PlanHash: "abc"}
			p.Gates.DataModel = &Approval{ApprovedBy: "Ana"}
		}, []string{
			`gates.data_model.approved_at: required: when, in RFC 3339 (2025-01-31T14:05:00Z)`,
			`gates.scope.approved_at: "yesterday" is not a timestamp; write RFC 3339 (2025-01-31T14:05:00Z)`,
			"gates.scope.approved_by: required: who approved",
			`gates.scope.plan_hash: "abc" is not a plan hash (64 lower-case hex digits, as lima-tui approve records)`,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := loadFixture(t)
			tc.mut(p)
			got := problems(t, p.Validate())
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("problems:\n got: %s\nwant: %s", strings.Join(got, "\n      "), strings.Join(want, "\n      "))
			}
		})
	}
}

func TestValidateNilPlan(t *testing.T) {
	var p *Plan
	if got := problems(t, p.Validate()); !slices.Equal(got, []string{": no plan"}) {
		t.Errorf("got %q", got)
	}
}

// TestValidateLines checks that validation problems carry the line of the
// field, or of the nearest enclosing field when the field is missing, and
// that Error() prints them as file:line: path: msg, in line order.
func TestValidateLines(t *testing.T) {
	const doc = `schema_version: 1
platform:
  prefix: Acme
sources:
  crm:
    kind: files
tables:
  orders:
    source:
      name: crm
      files: ["*.csv"]
    columns:
      - name: id
        type: lng
    load:
      mode: incremental
`
	p, err := Parse([]byte(doc), "platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	err = p.Validate()
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("want *ValidationError, got %v", err)
	}
	type pl struct {
		path string
		line int
	}
	var got []pl
	for _, fe := range ve.Errors {
		got = append(got, pl{fe.Path, fe.Line})
	}
	want := []pl{
		{"platform.prefix", 3},
		{"sources.crm.path", 5}, // missing: the line of sources.crm
		{"tables.orders.columns[0].type", 14},
		{"tables.orders.load.watermark", 15}, // missing: the line of load
	}
	if !slices.Equal(got, want) {
		t.Errorf("lines:\n got %v\nwant %v", got, want)
	}
	wantText := `platform.yaml:3: platform.prefix: "Acme" is not allowed; use 1 to 40 characters: lower-case letters, digits and _, starting with a letter (e.g. acme_sales)
platform.yaml:5: sources.crm.path: required for kind files: the folder holding the files, relative to the workspace or absolute
platform.yaml:14: tables.orders.columns[0].type: unknown type "lng"; did you mean long?
platform.yaml:15: tables.orders.load.watermark: required for mode incremental: the column whose maximum marks what was loaded (a date, timestamp or increasing number)`
	if err.Error() != wantText {
		t.Errorf("Error():\n%s\nwant:\n%s", err, wantText)
	}
}

func TestValidateWithoutFile(t *testing.T) {
	p := &Plan{SchemaVersion: 1, Platform: Platform{Prefix: "x"}, Sources: map[string]*Source{"s": {Kind: "files"}}}
	err := p.Validate()
	if err == nil || err.Error() != "sources.s.path: required for kind files: the folder holding the files, relative to the workspace or absolute" {
		t.Errorf("got %v", err)
	}
	// A copy has no lines: still plain "path: msg".
	q := *loadFixture(t)
	q.Platform.Prefix = ""
	if err := q.Validate(); err == nil || !strings.HasPrefix(err.Error(), "platform.prefix: required") {
		t.Errorf("copy: got %v", err)
	}
}

func TestFieldErrorFormat(t *testing.T) {
	tests := []struct {
		fe   FieldError
		file string
		want string
	}{
		{FieldError{Path: "a.b", Line: 3, Msg: "bad"}, "p.yaml", "p.yaml:3: a.b: bad"},
		{FieldError{Path: "a.b", Msg: "bad"}, "p.yaml", "p.yaml: a.b: bad"},
		{FieldError{Path: "a.b", Line: 3, Msg: "bad"}, "", "line 3: a.b: bad"},
		{FieldError{Path: "a.b", Msg: "bad"}, "", "a.b: bad"},
		{FieldError{Line: 7, Msg: "bad"}, "p.yaml", "p.yaml:7: bad"},
	}
	for _, tc := range tests {
		if got := (&ValidationError{File: tc.file, Errors: []FieldError{tc.fe}}).Error(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
		if tc.file == "" && tc.fe.Error() != tc.want {
			t.Errorf("FieldError.Error() = %q, want %q", tc.fe.Error(), tc.want)
		}
	}
}

func TestParentPath(t *testing.T) {
	tests := []struct{ in, want string }{
		{"tables.orders.columns[2].name", "tables.orders.columns[2]"},
		{"tables.orders.columns[2]", "tables.orders.columns"},
		{"tables.orders", "tables"},
		{"tables", ""},
		{`tables["a.b]"].load`, `tables["a.b]"]`},
		{`tables["a.b]"]`, "tables"},
		{"", ""},
	}
	for _, tc := range tests {
		if got := parentPath(tc.in); got != tc.want {
			t.Errorf("parentPath(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
