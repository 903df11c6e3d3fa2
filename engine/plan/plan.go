// Package plan is the model of platform.yaml: the one file that the wizard
// writes, an analyst approves and the headless runner executes.
//
// Field names follow the data-platform contract (platform, storage, tables,
// data_quality_issues, etl, downstream); Lima adds sources, per-table source
// and load, checks, owners, schedule and gates.
//
// Load/Parse read a plan strictly (unknown fields, wrong value types and
// duplicate keys are errors with path, line and a suggestion); Validate
// checks its content; Write saves it atomically (0600); Hash is what gate 3
// approves. Problems are reported as a *ValidationError (errors.Is
// ErrInvalidPlan) listing every FieldError.
package plan

// SchemaVersion is the version of the platform.yaml layout this build reads
// and writes. A plan must state it; Parse refuses newer versions.
const SchemaVersion = 1

// Plan is platform.yaml.
type Plan struct {
	SchemaVersion     int                `yaml:"schema_version"`
	Platform          Platform           `yaml:"platform"`
	Scope             *Scope             `yaml:"scope,omitempty"` // gate 1 answers; see Scope
	Storage           Storage            `yaml:"storage,omitempty"`
	Sources           map[string]*Source `yaml:"sources"`
	Tables            map[string]*Table  `yaml:"tables"`
	DataQualityIssues []QualityIssue     `yaml:"data_quality_issues,omitempty"`
	ETL               ETL                `yaml:"etl,omitempty"`
	Downstream        Downstream         `yaml:"downstream,omitempty"`
	Owners            []Owner            `yaml:"owners,omitempty"`
	Schedule          Schedule           `yaml:"schedule,omitempty"`
	// Maintenance is the retention policy of lima-tui maintain (maintenance.go).
	Maintenance *Maintenance `yaml:"maintenance,omitempty"`
	Gates       Gates        `yaml:"gates,omitempty"`
}

// Platform names the build.
type Platform struct {
	Prefix      string `yaml:"prefix"`
	Region      string `yaml:"region,omitempty"`
	Environment string `yaml:"environment,omitempty"`
	// Pattern is "iceberg" (default) or "hive".
	Pattern string `yaml:"pattern,omitempty"`
	// Catalog is "sqlite" (embedded, default), "glue", "rest" or
	// "s3tables" (S3 Tables through its Iceberg REST endpoint).
	Catalog string `yaml:"catalog,omitempty"`
	Created string `yaml:"created,omitempty"`
	Updated string `yaml:"updated,omitempty"`
}

// Storage says where the lake lives.
type Storage struct {
	// Warehouse is a folder (relative to the workspace) or a URI; default "lake".
	Warehouse string `yaml:"warehouse,omitempty"`
	// Namespace of the tables in the catalog; default: the prefix.
	Namespace string `yaml:"namespace,omitempty"`
	// CatalogURI: for sqlite, the database file relative to the workspace
	// (default .lima/catalog.db).
	CatalogURI string `yaml:"catalog_uri,omitempty"`
	// State is where runs, watermarks, locks and the exception queue live:
	// "sqlite" (default: .lima/state.db) or "postgres" (a team shares one
	// queue); the PostgreSQL DSN is read from the environment variable named
	// by StateDSNEnv — never written here.
	State       string `yaml:"state,omitempty"`
	StateDSNEnv string `yaml:"state_dsn_env,omitempty"`
	// StateSchema is the PostgreSQL schema of the state (default "lima").
	StateSchema string `yaml:"state_schema,omitempty"`
	// Raw lands every source file unchanged under raw/ in the warehouse
	// before it is loaded (see RawEnabled); default on for a warehouse on
	// S3, off for a local one.
	Raw *bool `yaml:"raw,omitempty"`
	// GlueEndpoint overrides the AWS Glue endpoint (catalog glue); empty:
	// AWS_ENDPOINT_URL_GLUE, then AWS_ENDPOINT_URL, then AWS's own. Never
	// credentials: those come from the AWS default chain.
	GlueEndpoint string `yaml:"glue_endpoint,omitempty"`
	// TableBucketARN is the S3 Tables table bucket of catalog s3tables
	// (arn:aws:s3tables:REGION:ACCOUNT:bucket/NAME).
	TableBucketARN string `yaml:"table_bucket_arn,omitempty"`
}

// Source is where rows come from.
type Source struct {
	// Kind: "files" (local folder), or a database: "postgres", "mysql"
	// (MySQL and MariaDB), "sqlite", "sqlserver" or "oracle".
	Kind string `yaml:"kind"`
	// Path is the folder for kind files, or the database file for kind
	// sqlite; relative to the workspace or absolute.
	Path string `yaml:"path,omitempty"`
	// DSNEnv names the environment variable holding the DSN of a postgres
	// or mysql source (for sqlite, instead of path). The DSN itself carries
	// a password and never goes into platform.yaml.
	DSNEnv string `yaml:"dsn_env,omitempty"`
	// Encoding pins the text encoding of the files (utf-8, euc-kr,
	// shift_jis, gb18030, windows-1252, utf-16le, …); empty: detected per
	// file. A table's source can pin its own.
	Encoding string `yaml:"encoding,omitempty"`
	// Timezone of naive timestamps in the files (IANA name, e.g.
	// Asia/Seoul): a timestamptz column without a zone in its text is read
	// in it. Empty: UTC.
	Timezone string `yaml:"timezone,omitempty"`
	// SnapshotFallback (kind sqlserver only): what a read does when the
	// database has ALLOW_SNAPSHOT_ISOLATION OFF. Empty: refuse with the
	// fix; "serializable": read under SERIALIZABLE locks (consistent, but
	// writers to the table wait until it is read).
	SnapshotFallback string `yaml:"snapshot_fallback,omitempty"`
	// DynamoDB holds the read budget of a kind dynamodb source (see
	// DynamoDB in dynamodb.go).
	DynamoDB *DynamoDB `yaml:"dynamodb,omitempty"`
}

// Table is one table of the lake.
type Table struct {
	// Type is "base" (loaded from a source; default) or "mart" (built from
	// other tables; needs columns and grain).
	Type        string       `yaml:"type,omitempty"`
	Description string       `yaml:"description,omitempty"`
	Source      *TableSource `yaml:"source,omitempty"`
	Columns     []Column     `yaml:"columns,omitempty"`
	// Partition entries: col, year(col), month(col), day(col), hour(col),
	// bucket(N, col), truncate(W, col); see ParsePartition.
	Partition []string  `yaml:"partition,omitempty"`
	JoinKeys  []JoinKey `yaml:"join_keys,omitempty"`
	WrittenBy string    `yaml:"written_by,omitempty"`
	// From, Joins, Dimensions and Measures define a mart that Lima builds
	// itself after its base tables load (see Dimension and Measure): the
	// rows of From[0] joined many-to-one to the other From tables, grouped
	// by the dimensions. A mart without From is built outside Lima
	// (written_by) and only declared here.
	From       []string    `yaml:"from,omitempty"`
	Joins      []JoinKey   `yaml:"joins,omitempty"`
	Dimensions []Dimension `yaml:"dimensions,omitempty"`
	// Grain lists the columns that identify one row of a mart (for a mart
	// Lima builds: the names of its dimensions).
	Grain    []string  `yaml:"grain,omitempty"`
	Measures []Measure `yaml:"measures,omitempty"`
	// SumSafeColumns are the mart columns that may be summed across rows
	// of the grain without counting anything twice.
	SumSafeColumns []string `yaml:"sum_safe_columns,omitempty"`
	Load           LoadSpec `yaml:"load,omitempty"`
	Checks         []Check  `yaml:"checks,omitempty"`
	// ErrorBudget is how many held-back rows the table tolerates: a count
	// ("50") or a share of its data rows ("2%"). Above it nothing of the
	// table is committed and the run fails; the exceptions are still kept.
	// Empty: etl.error_budget (a share, 0.02 = 2%), else no limit.
	ErrorBudget string `yaml:"error_budget,omitempty"`
	// ControlColumns are summed on both sides by gate 4; default: every
	// integer and decimal column.
	ControlColumns []string `yaml:"control_columns,omitempty"`
	// History appends every version of every row (operation, valid-from
	// time, load id, source locator) to the append-only table
	// <name>_history in the same run. Change capture (load.mode cdc)
	// always keeps history.
	History bool `yaml:"history,omitempty"`
	// Engine and Glue: where the table's load runs (glue.go).
	Engine string   `yaml:"engine,omitempty"`
	Glue   *GlueJob `yaml:"glue,omitempty"`
}

// TableSource says which files of which source feed a table.
type TableSource struct {
	Name string `yaml:"name"`
	// Files is a glob (or several) relative to the source path.
	Files []string `yaml:"files,omitempty"`
	// Table is the table to read from a database source (instead of
	// files), in Schema (PostgreSQL schema or MySQL database; empty: the
	// connection's default; unused for SQLite).
	Table  string `yaml:"table,omitempty"`
	Schema string `yaml:"schema,omitempty"`
	// Export is, for a dynamodb source instead of table, the folder of a
	// DynamoDB export to S3 in DynamoDB JSON
	// (s3://bucket/prefix/AWSDynamoDB/<export-id>/): its data files are
	// loaded and the table is never scanned.
	Export string `yaml:"export,omitempty"`
	// SplitBy reads a database table in parallel ranges of this column
	// (an integer, date or timestamp key the read is ordered by: the
	// primary key's first column, or for mode upsert the first key), at
	// most etl.max_parallel_reads (default 4) at once, all in one snapshot.
	// PostgreSQL only; other databases read serially and say so. Without
	// it a PostgreSQL table of at least sqldb.AutoParallelRows rows is
	// read in ranges of the first column its read is ordered by, when
	// that is such a column (the same rows in the same order).
	SplitBy string `yaml:"split_by,omitempty"`
	// Window is this table's own run window ("HH:MM-HH:MM" in the
	// schedule's time zone) for a large read the database's owners agreed
	// to: a run that includes the table is refused outside it unless
	// forced (schedule.window still bounds the whole run).
	Window string `yaml:"window,omitempty"`
	// Format: csv, tsv, ndjson, parquet, avro or xlsx; default from the file extension.
	Format string `yaml:"format,omitempty"`
	CSV    CSV    `yaml:"csv,omitempty"`
	// Encoding pins the text encoding of this table's files, overriding
	// the source's.
	Encoding string `yaml:"encoding,omitempty"`
	// Timezone of naive timestamps in the files (IANA name, e.g.
	// Asia/Seoul): a timestamptz column without a zone in its text is read
	// in it. Empty: UTC.
	Timezone string `yaml:"timezone,omitempty"`
	// NullTokens are values read as null (default: "", "NULL", "null", "\N").
	NullTokens []string `yaml:"null_tokens,omitempty"`
}

// CSV options; zero values mean "detect".
type CSV struct {
	Delimiter string `yaml:"delimiter,omitempty"`
	Quote     string `yaml:"quote,omitempty"`
	// Header: "auto" (default), "yes" or "no".
	Header string `yaml:"header,omitempty"`
}

// Column is one column of a table.
type Column struct {
	Name string `yaml:"name"`
	// Type: string, int, long, double, decimal(p,s), date, timestamp,
	// timestamptz, boolean, binary (bigint, float and bool are accepted as
	// long, double and boolean); see ParseType. Empty: inferred from a sample.
	Type     string `yaml:"type,omitempty"`
	Required bool   `yaml:"required,omitempty"`
	// SourceName is the header in the file when it differs from Name.
	SourceName string `yaml:"source_name,omitempty"`
	// RenamedFrom is the column's previous name in the lake: the next
	// commit renames that column of the Iceberg table (its field id and
	// its values are kept). Without it, a rename is recognised when
	// SourceName names a lake column the plan no longer has; any other new
	// name is a new column (and the old one is dropped). See Field.
	RenamedFrom string `yaml:"renamed_from,omitempty"`
	// Formats lists the date/timestamp layouts accepted, in order
	// (yyyy-MM-dd, yyyy/M/d, yyyyMMdd, dd.MM.yyyy, …); default: ISO forms.
	Formats []string `yaml:"formats,omitempty"`
	// Normalize names the fixes applied before casting: trim, upper, lower,
	// nfc, zero_pad:N, trailing_minus, thousands:",", decimal_comma. Key
	// columns are NFC-normalized by default.
	Normalize   []string `yaml:"normalize,omitempty"`
	Sensitive   bool     `yaml:"sensitive,omitempty"`
	Description string   `yaml:"description,omitempty"`
	// AllowControlChars keeps text values with control characters (NUL
	// and the other C0 controls but TAB, CR and LF); by default such a
	// row is held back under rule control_char.
	AllowControlChars bool `yaml:"allow_control_chars,omitempty"`
	// Currency is the ISO 4217 code of a numeric column's amounts (KRW,
	// USD, EUR, …). A number written with a currency symbol or code is
	// held back under rule currency unless the column declares its
	// currency; then that currency's code and symbols (₩, ￦ and 원 for
	// KRW; $ and US$ for USD; see CurrencySymbols) are removed and counted
	// ("currency symbol removed"), and another currency's symbol is still
	// held back.
	Currency string `yaml:"currency,omitempty"`
}

// JoinKey relates a column to a column of another table.
type JoinKey struct {
	Column     string `yaml:"column"`
	References string `yaml:"references"` // table.column
}

// LoadSpec is how a table is loaded (the load: block of a table). It is not
// called Load because the package function Load reads a plan.
type LoadSpec struct {
	// Mode: full (default), incremental or upsert (database sources).
	Mode string `yaml:"mode,omitempty"`
	// Keys is the primary key; unique within a load. Key columns are
	// required (not null) whether or not they say so.
	Keys []string `yaml:"keys,omitempty"`
	// Watermark is the column whose maximum is committed with the data.
	Watermark string `yaml:"watermark,omitempty"`
	// Lookback (mode upsert, and mode incremental from a database)
	// re-reads rows this far below the previous watermark, to catch rows
	// committed late with an older value: a duration (10m, 2h, 1d) for a
	// date or timestamp watermark, a count (1000) for a numeric one.
	// Re-read rows replace themselves by key; those equal to the lake's
	// version are skipped as unchanged_in_lookback.
	Lookback string `yaml:"lookback,omitempty"`
	// DetectDeletes (mode upsert): "never" (default), "every_run", or a
	// period (24h, 7d) between comparisons of every source key with the
	// lake's keys; keys gone from the source are deleted from the lake.
	DetectDeletes string `yaml:"detect_deletes,omitempty"`
	// SoftDelete (mode upsert) names a boolean column the source sets to
	// mark a row deleted: such a row's key is deleted from the lake (and
	// the row skipped as soft_deleted), and delete detection counts only
	// the keys not so marked.
	SoftDelete string `yaml:"soft_delete,omitempty"`
	// Changes describes the change files of mode cdc (see Changes).
	Changes *Changes `yaml:"changes,omitempty"`
}

// Check is a data-quality rule declared for a table.
type Check struct {
	Name   string   `yaml:"name,omitempty"`
	Rule   string   `yaml:"rule"` // not_null, unique, range, regex, allowed, max_length, references, expression
	Column string   `yaml:"column,omitempty"`
	Min    *float64 `yaml:"min,omitempty"`
	Max    *float64 `yaml:"max,omitempty"`
	Values []string `yaml:"values,omitempty"`
	Regex  string   `yaml:"regex,omitempty"`
	Length int      `yaml:"length,omitempty"`
	// References is "table.column" of another lake table in which the
	// value must exist (rule references; that table loads first).
	References string `yaml:"references,omitempty"`
	// Expr is a row expression (rule expression): comparisons of columns
	// and literals with = != < <= > >=, joined by and / or, e.g.
	// "defect_qty <= lot_qty". A comparison with a null passes, as in SQL.
	Expr string `yaml:"expr,omitempty"`
}

// QualityIssue is a finding of profiling, with its impact.
type QualityIssue struct {
	Table  string `yaml:"table,omitempty"`
	Column string `yaml:"column,omitempty"`
	Issue  string `yaml:"issue"`
	Impact string `yaml:"impact,omitempty"`
	Fix    string `yaml:"fix,omitempty"`
}

// ETL carries limits for the runner.
type ETL struct {
	Tool string `yaml:"tool,omitempty"`
	// MaxParallelReads caps concurrent source reads; 0 means the default.
	MaxParallelReads int `yaml:"max_parallel_reads,omitempty"`
	// ErrorBudget is the fraction of rows (0 to 1) that may be quarantined.
	ErrorBudget float64 `yaml:"error_budget,omitempty"`
	// MaxRecordBytes bounds one record of a text file (a CSV record, an
	// NDJSON line); 0 means 16 MiB. A longer record is held back under rule
	// record_too_large with only its first 64 KiB kept, and the rest of
	// the file loads.
	MaxRecordBytes int `yaml:"max_record_bytes,omitempty"`
	// KeyMemoryMB bounds, in MiB, the memory of each key set of a load
	// (the uniqueness check, the lake's keys of an incremental or upsert
	// load, gate 4's duplicate check); 0 means 64. Keys beyond it spill to
	// sorted temporary files in .lima/tmp.
	KeyMemoryMB int `yaml:"key_memory_mb,omitempty"`
	// Parallel is how many workers cast and check the rows of a load, from
	// files or a database: 0 means one per core (GOMAXPROCS, at most MaxParallel), 1 the
	// sequential path. The result is the same whatever the number.
	Parallel int `yaml:"parallel,omitempty"`
}

// MaxKeyMemoryMB bounds etl.key_memory_mb (64 GiB).
const MaxKeyMemoryMB = 1 << 16

// KeyMemoryBytes is etl.key_memory_mb in bytes; 0 when unset (the key
// set's default then applies).
func (e ETL) KeyMemoryBytes() int64 { return int64(e.KeyMemoryMB) << 20 }

// MaxParallel bounds etl.parallel.
const MaxParallel = 64

// Bounds of etl.max_record_bytes.
const (
	MinRecordBytes = 1 << 10
	MaxRecordBytes = 1 << 30
)

// Downstream names who reads the lake.
type Downstream struct {
	Consumer string   `yaml:"consumer,omitempty"` // bi, c360, ml, unknown
	Tools    []string `yaml:"tools,omitempty"`
}

// Owner routes exceptions to a person.
type Owner struct {
	Name   string `yaml:"name"`
	Email  string `yaml:"email,omitempty"`
	Table  string `yaml:"table,omitempty"`
	Column string `yaml:"column,omitempty"`
	Rule   string `yaml:"rule,omitempty"`
	// Deadline is how long an exception may stay open before it is overdue:
	// a duration such as 48h, 2d or 1w, business days (2bd) or a time of
	// day (17:00 Europe/Berlin); see Owner.DeadlineAt.
	Deadline string `yaml:"deadline,omitempty"`
	// Default marks the one owner who gets every exception no other owner
	// routes (by table, column or rule).
	Default bool `yaml:"default,omitempty"`
	// Notify sends this owner a JSON digest of the run's new exceptions.
	Notify *Notify `yaml:"notify,omitempty"`
}

// Notify is how an owner hears about new exceptions: a command that reads
// the JSON digest on stdin, and/or a webhook whose URL is read from the
// environment variable named by WebhookEnv (a URL may carry a token, so it
// never goes into platform.yaml). Raw rows and values of sensitive columns
// are never sent.
type Notify struct {
	Command    []string `yaml:"command,omitempty"`
	WebhookEnv string   `yaml:"webhook_env,omitempty"`
}

// Schedule is when the plan runs unattended.
type Schedule struct {
	// Cron is a five-field cron expression or @daily, @hourly, ….
	Cron string `yaml:"cron,omitempty"`
	// Timezone is an IANA zone name (Europe/Berlin); empty means UTC.
	Timezone string `yaml:"timezone,omitempty"`
	Window   string `yaml:"window,omitempty"`   // "HH:MM-HH:MM"
	Deadline string `yaml:"deadline,omitempty"` // "HH:MM" in Timezone
	// Watch configures lima-tui run --watch (see watch.go).
	Watch *Watch `yaml:"watch,omitempty"`
}

// Gates records the human answers.
type Gates struct {
	Scope     *Approval `yaml:"scope,omitempty"`
	DataModel *Approval `yaml:"data_model,omitempty"`
	// Teardown records who confirmed the last teardown (gate 5) and when;
	// plan_hash is the plan whose lake was removed.
	Teardown *Approval `yaml:"teardown,omitempty"`
}

// Approval is a recorded human decision.
type Approval struct {
	ApprovedBy string `yaml:"approved_by"`
	ApprovedAt string `yaml:"approved_at"`
	PlanHash   string `yaml:"plan_hash,omitempty"`
}
