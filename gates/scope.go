package gates

// Gate 1 — scope & residency: the answers a build starts from, asked one
// question at a time (the wizard) or given as flags and defaults (lima-tui
// init), recorded in platform.yaml and judged here.

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/internal/fileuri"
	"github.com/lima-lake/lima/internal/redact"
	"github.com/lima-lake/lima/internal/s3x"
)

// Question ids, in the order Questions asks them.
const (
	QSources       = "sources"
	QPrefix        = "prefix"
	QRegion        = "region"
	QEnvironment   = "environment"
	QPattern       = "pattern"
	QConsumer      = "consumer"
	QVolume        = "volume"
	QSchedule      = "schedule"
	QTimezone      = "timezone"
	QOwner         = "owner"
	QDeadline      = "owner_deadline"
	QPartitioning  = "partitioning"
	QSensitive     = "sensitive_columns"
	QSplitRegion   = "split_region"
	QCatalogRegion = "catalog_region"
	QQueryRegion   = "query_region"
	QDriver        = "residency_driver"
	QZeroEgress    = "zero_egress"
	QAcknowledged  = "acknowledged"
)

// Answers maps a question id to its answer. A list answer (Question.Multi)
// is comma-separated.
type Answers map[string]string

// List splits a list answer at commas, trimming blanks and dropping empty
// items.
func (a Answers) List(id string) []string {
	var out []string
	for _, s := range strings.Split(a[id], ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Choice is one option of a question with its one-line help.
type Choice struct {
	Value string
	Help  string
}

// Question is one input of a build, asked one at a time.
type Question struct {
	ID string
	// Field is where the answer is recorded in platform.yaml.
	Field  string
	Prompt string
	// Help is one line on what the answer decides.
	Help string
	// Choices are the options with their help. Free questions accept other
	// answers too (their Validate decides); the others accept only these.
	Choices []Choice
	Free    bool
	// Multi: the answer is a comma-separated list (empty: none).
	Multi bool
	// Default is the recommended answer; "" for questions a person must
	// answer themselves (the residency driver, the acknowledgement).
	Default string
	// Suggest derives the recommended answer from earlier answers (the
	// prefix from the source folder); nil or "" falls back to Default.
	Suggest func(earlier Answers) string
	// Ask reports whether the question applies after the earlier answers;
	// nil: always.
	Ask func(earlier Answers) bool
	// Explain is text computed from earlier answers to show with the
	// prompt (what would cross the region boundary); nil: none.
	Explain func(earlier Answers) string
	// Validate returns nil or an *AnswerError saying what is wrong and what
	// to answer instead. It sees the earlier answers.
	Validate func(answer string, earlier Answers) error
}

// Applies reports whether q is asked after the answers a.
func (q Question) Applies(a Answers) bool { return q.Ask == nil || q.Ask(a) }

// Recommended is the answer q recommends after the answers a.
func (q Question) Recommended(a Answers) string {
	if q.Suggest != nil {
		if s := q.Suggest(a); s != "" {
			return s
		}
	}
	return q.Default
}

// Check validates an answer to q after the earlier answers.
func (q Question) Check(answer string, earlier Answers) error {
	answer = strings.TrimSpace(answer)
	if len(q.Choices) > 0 && !q.Free && !q.Multi && answer != "" {
		if !slices.ContainsFunc(q.Choices, func(c Choice) bool { return c.Value == answer }) {
			return &AnswerError{Problem: fmt.Sprintf("%q is not an answer to this question", answer), Fix: "answer " + choiceList(q.Choices)}
		}
	}
	if q.Validate == nil {
		return nil
	}
	return q.Validate(answer, earlier)
}

// AnswerError is what a question's Validate returns.
type AnswerError struct {
	// Problem says what is wrong with the answer.
	Problem string
	// Fix says what to answer instead.
	Fix string
}

func (e *AnswerError) Error() string { return e.Problem + "; " + e.Fix }

func choiceList(cs []Choice) string {
	vals := make([]string, len(cs))
	for i, c := range cs {
		vals[i] = c.Value
	}
	switch len(vals) {
	case 0:
		return ""
	case 1:
		return vals[0]
	}
	return strings.Join(vals[:len(vals)-1], ", ") + " or " + vals[len(vals)-1]
}

var (
	scopePrefixRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,39}$`)
	scopeRegionRE = regexp.MustCompile(`^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9]{1,2}$`)
	scopeEnvRE    = regexp.MustCompile(`^[a-z][a-z0-9-]{0,19}$`)
	scopeEnvVarRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// RegionLocal is the region answer for a lake on this machine's disk.
const RegionLocal = "local"

// ScheduleManual is the schedule answer for a plan run only when started.
const ScheduleManual = "manual"

// DeadlineNone is the owner_deadline answer for a default owner without a
// due date.
const DeadlineNone = "none"

const (
	regionFix = "answer local for a lake on this machine, or an AWS region code such as eu-central-1"
	prefixFix = "answer 1 to 40 characters: lower-case letters, digits and _, starting with a letter (e.g. acme_sales)"
)

func scopeSplit(a Answers) bool { return a[QSplitRegion] == "yes" }

// Questions returns the questions of gate 1 in the order they are asked.
func Questions() []Question {
	required := func(fix string) func(string, Answers) error {
		return func(s string, _ Answers) error {
			if s == "" {
				return &AnswerError{Problem: "not answered", Fix: fix}
			}
			return nil
		}
	}
	region := func(s string, _ Answers) error {
		switch {
		case s == "":
			return &AnswerError{Problem: "not answered", Fix: regionFix}
		case s == RegionLocal || scopeRegionRE.MatchString(s):
			return nil
		}
		return &AnswerError{Problem: fmt.Sprintf("%q is not a region", s), Fix: regionFix}
	}
	return []Question{
		{
			ID: QSources, Field: "sources", Multi: true, Free: true, Default: "data",
			Prompt: "Which folder, S3 prefix or database holds the data to land?",
			Help:   "a folder (relative or absolute), s3://bucket/prefix, or env:NAME for a database whose DSN is in $NAME; several separated by commas",
			Validate: func(s string, a Answers) error {
				list := Answers{QSources: s}.List(QSources)
				if len(list) == 0 {
					return &AnswerError{Problem: "not answered", Fix: "answer the folder holding the files, e.g. data/erp"}
				}
				for _, u := range list {
					if _, err := ParseSource(u); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: QPrefix, Field: "platform.prefix", Default: "lake",
			Prompt: "Which prefix names this build (namespace and tables)?",
			Help:   "1 to 40 lower-case letters, digits and _; it is typed again to confirm a teardown",
			Suggest: func(a Answers) string {
				first := scopeFirst(a.List(QSources))
				if s, err := ParseSource(first); err == nil && s.Kind == "env" {
					first = envStem(s.EnvVar)
				} else if err == nil && s.Kind == "dynamodb" && s.Table != "*" {
					first = s.Table
				}
				return PrefixFor(first)
			},
			Validate: func(s string, _ Answers) error {
				switch {
				case s == "":
					return &AnswerError{Problem: "not answered", Fix: prefixFix}
				case !scopePrefixRE.MatchString(s):
					return &AnswerError{Problem: fmt.Sprintf("%q is not allowed", s), Fix: prefixFix}
				}
				return nil
			},
		},
		{
			ID: QRegion, Field: "platform.region", Free: true, Default: RegionLocal,
			Prompt: "In which region is the data stored?",
			Help:   "where the lake's files live; residency is judged against it",
			Choices: []Choice{
				{RegionLocal, "on this machine's disk (the embedded lake); no cloud region"},
				{"eu-central-1", "AWS Europe (Frankfurt)"},
				{"eu-west-1", "AWS Europe (Ireland)"},
				{"us-east-1", "AWS US East (N. Virginia)"},
				{"ap-northeast-2", "AWS Asia Pacific (Seoul)"},
			},
			Validate: region,
		},
		{
			ID: QEnvironment, Field: "platform.environment", Free: true, Default: "dev",
			Prompt: "Which environment is this?",
			Choices: []Choice{
				{"dev", "development: try things, tear down freely"},
				{"test", "acceptance tests with production-like data"},
				{"prod", "production: the numbers people decide on"},
			},
			Validate: func(s string, _ Answers) error {
				const fix = "answer lower-case letters, digits and -, e.g. dev, test or prod"
				switch {
				case s == "":
					return &AnswerError{Problem: "not answered", Fix: fix}
				case !scopeEnvRE.MatchString(s):
					return &AnswerError{Problem: fmt.Sprintf("%q is not an environment name", s), Fix: fix}
				}
				return nil
			},
		},
		{
			ID: QPattern, Field: "platform.pattern", Default: plan.PatternIceberg,
			Prompt: "How are the tables stored?",
			Choices: []Choice{
				{plan.PatternIceberg, "Apache Iceberg: atomic snapshots, schema evolution, time travel; read by Athena, Trino, Spark, DuckDB"},
				{plan.PatternHive, "Hive-style Parquet folders (load_date=…/col=value/), published per run with a manifest (registered in Glue with catalog glue): for tools that cannot read Iceberg; no time travel"},
			},
			Validate: func(s string, _ Answers) error {
				switch s {
				case "":
					return &AnswerError{Problem: "not answered", Fix: "answer iceberg (recommended) or hive"}
				}
				return nil
			},
		},
		{
			ID: QConsumer, Field: "downstream.consumer", Default: "unknown",
			Prompt: "Who reads the lake first?",
			Choices: []Choice{
				{"bi", "dashboards and reports: marts with a declared grain and SUM-safe measures"},
				{"c360", "a customer 360: entity keys and join keys across sources"},
				{"ml", "machine learning: wide tables, full history, reproducible snapshots"},
				{"unknown", "not decided yet: base tables only; marts come later"},
			},
			Validate: required("answer bi, c360, ml or unknown"),
		},
		{
			ID: QVolume, Field: "scope.volume", Default: plan.Volumes[0],
			Prompt: "How much data arrives per run?",
			Choices: []Choice{
				{"small", "under 1 GB per run: the embedded catalog and a local lake are plenty"},
				{"medium", "1 to 100 GB per run: plan disk and a nightly window"},
				{"large", "over 100 GB per run: plan S3 and a shared catalog"},
			},
			Validate: required("answer small, medium or large"),
		},
		{
			ID: QSchedule, Field: "schedule.cron", Free: true, Default: "0 2 * * *",
			Prompt: "When does the plan run unattended?",
			Choices: []Choice{
				{"0 2 * * *", "every night at 02:00"},
				{"@hourly", "every hour"},
				{ScheduleManual, "only when someone starts it (lima-tui run)"},
			},
			Validate: func(s string, _ Answers) error {
				const fix = "answer a cron expression (0 2 * * * = 02:00 every day), @daily, @hourly or manual"
				switch {
				case s == "":
					return &AnswerError{Problem: "not answered", Fix: fix}
				case s == ScheduleManual:
					return nil
				}
				if err := plan.CheckCron(s); err != nil {
					return &AnswerError{Problem: fmt.Sprintf("%q is not a schedule", s), Fix: fix}
				}
				return nil
			},
		},
		{
			ID: QTimezone, Field: "schedule.timezone", Free: true, Default: "UTC",
			Prompt: "In which time zone is the schedule?",
			Help:   "an IANA zone name such as Europe/Berlin, Asia/Seoul or UTC",
			Ask:    func(a Answers) bool { return a[QSchedule] != ScheduleManual },
			Validate: func(s string, _ Answers) error {
				const fix = "answer an IANA zone name such as Europe/Berlin, America/New_York or UTC"
				if s == "" {
					return &AnswerError{Problem: "not answered", Fix: fix}
				}
				if _, err := (plan.Schedule{Timezone: s}).Location(); err != nil {
					return &AnswerError{Problem: fmt.Sprintf("%q is not a known time zone", s), Fix: fix}
				}
				return nil
			},
		},
		{
			ID: QOwner, Field: "owners[default].name", Free: true,
			Prompt: "Who handles the rows that fail a check?",
			Help:   "the default owner: every exception no other owner takes is theirs, with a due date; empty: exceptions stay unassigned",
			Validate: func(s string, _ Answers) error {
				const fix = "answer a person's or a team's name, e.g. Data platform on-call (or nothing: unassigned)"
				switch {
				case len([]rune(s)) > 100:
					return &AnswerError{Problem: "the name is longer than 100 characters", Fix: fix}
				case strings.ContainsFunc(s, unicode.IsControl):
					return &AnswerError{Problem: "the name holds control characters", Fix: fix}
				}
				return nil
			},
		},
		{
			ID: QDeadline, Field: "owners[default].deadline", Free: true, Default: "2bd",
			Prompt: "How long may an exception stay open before it is overdue?",
			Help:   "business days (2bd: weekends do not count), hours (48h), days (2d) or a time of day (17:00 Europe/Berlin)",
			Ask:    func(a Answers) bool { return strings.TrimSpace(a[QOwner]) != "" },
			Choices: []Choice{
				{"1bd", "the next business day"},
				{"2bd", "two business days"},
				{"5bd", "a working week"},
				{DeadlineNone, "no due date: exceptions are never overdue"},
			},
			Validate: func(s string, _ Answers) error {
				const fix = "answer business days (2bd), hours (48h), days (2d), a time of day (17:00 Europe/Berlin) or none"
				switch s {
				case "":
					return &AnswerError{Problem: "not answered", Fix: fix}
				case DeadlineNone:
					return nil
				}
				if _, _, err := (plan.Owner{Deadline: s}).DeadlineAt(time.Time{}); err != nil {
					return &AnswerError{Problem: err.Error(), Fix: fix}
				}
				return nil
			},
		},
		{
			ID: QPartitioning, Field: "scope.partitioning", Default: plan.Partitionings[0],
			Prompt: "How should tables be partitioned?",
			Choices: []Choice{
				{"auto", "gate 3 proposes per table from the data (recommended)"},
				{"date", "by a date column of each table (month or day)"},
				{"none", "no partitions: small tables read whole"},
			},
			Validate: required("answer auto, date or none"),
		},
		{
			ID: QSensitive, Field: "scope.sensitive_columns", Multi: true, Free: true,
			Prompt: "Which columns hold personal or confidential values?",
			Help:   "names or patterns (email, phone, *_iban), separated by commas; empty: none",
			Validate: func(s string, _ Answers) error {
				for _, c := range (Answers{QSensitive: s}).List(QSensitive) {
					if msg := plan.CheckColumnPattern(c); msg != "" {
						return &AnswerError{Problem: fmt.Sprintf("%q: %s", c, msg), Fix: "answer column names or patterns such as email, *_iban, separated by commas"}
					}
				}
				return nil
			},
		},
		{
			ID: QSplitRegion, Field: "scope.residency.split_region", Default: "no",
			Prompt: "Do the catalog or the query layer live in another region than the storage?",
			Choices: []Choice{
				{"no", "storage, catalog and query engine in one region (recommended)"},
				{"yes", "the catalog or the query layer is elsewhere: residency questions follow"},
			},
			Validate: required("answer no or yes"),
		},
		{
			ID: QCatalogRegion, Field: "scope.residency.catalog_region", Free: true,
			Prompt:   "In which region is the catalog?",
			Ask:      scopeSplit,
			Suggest:  func(a Answers) string { return a[QRegion] },
			Validate: region,
		},
		{
			ID: QQueryRegion, Field: "scope.residency.query_region", Free: true,
			Prompt:  "In which region does the query layer run?",
			Ask:     scopeSplit,
			Suggest: func(a Answers) string { return a[QRegion] },
			Validate: func(s string, a Answers) error {
				if err := region(s, a); err != nil {
					return err
				}
				if s == a[QRegion] && a[QCatalogRegion] == a[QRegion] {
					return &AnswerError{Problem: fmt.Sprintf("the catalog and the query layer are both in the storage region %s: that is not a split", a[QRegion]),
						Fix: "answer the other region, or answer split_region no"}
				}
				return nil
			},
		},
		{
			ID: QDriver, Field: "scope.residency.driver",
			Prompt: "Why must the data stay in the storage region?",
			Ask:    scopeSplit,
			Choices: []Choice{
				{"mandate", "a law, regulation or contract requires it"},
				{"preference", "the organisation prefers it; no legal requirement"},
			},
			Validate: required("answer mandate (law, regulation or contract) or preference: a split-region build needs its residency driver recorded"),
		},
		{
			ID: QZeroEgress, Field: "scope.residency.zero_egress",
			Prompt: "Does the mandate forbid anything, metadata included, to leave the storage region (zero egress)?",
			Ask:    func(a Answers) bool { return scopeSplit(a) && a[QDriver] == "mandate" },
			Choices: []Choice{
				{"no", "the mandate covers the data; the listed crossings may be acknowledged"},
				{"yes", "zero egress: nothing may leave the region; a split-region build stops here"},
			},
			Validate: required("answer no or yes: what the mandate allows decides whether a split-region build is possible"),
		},
		{
			ID: QAcknowledged, Field: "scope.residency.acknowledged", Multi: true,
			Prompt:  "Acknowledge what crosses the region boundary:",
			Ask:     func(a Answers) bool { return scopeSplit(a) && a[QZeroEgress] != "yes" },
			Explain: func(a Answers) string { return crossingText(CrossingsFor(a)) },
			Choices: []Choice{
				{plan.CrossTableMetadata, "table metadata and catalog entries: table and column names, types, partitioning, properties, snapshot summaries (load ids, watermark values)"},
				{plan.CrossColumnStatistics, "column statistics: min/max values of every column, read from the manifests to plan queries"},
				{plan.CrossDataScans, "data scans: the rows of every data file a query reads"},
				{plan.CrossQueryResults, "query results, produced and usually stored in the query region"},
			},
			Validate: checkAcknowledged,
		},
	}
}

// checkAcknowledged validates the acknowledgement: known crossings only,
// and every crossing of the answers' setup among them.
func checkAcknowledged(s string, a Answers) error {
	given := Answers{QAcknowledged: s}.List(QAcknowledged)
	for _, g := range given {
		if !slices.Contains(plan.Crossings, g) {
			return &AnswerError{Problem: fmt.Sprintf("%q is not a crossing", g), Fix: "answer " + strings.Join(plan.Crossings, ", ")}
		}
	}
	cs := CrossingsFor(a)
	var missing []string
	for _, c := range cs {
		if !slices.Contains(given, c.ID) {
			missing = append(missing, c.ID)
		}
	}
	if len(missing) > 0 {
		return &AnswerError{Problem: "not acknowledged: " + strings.Join(missing, ", "),
			Fix: "acknowledge every crossing of this setup (" + strings.Join(crossingIDs(cs), ", ") + "), or keep the catalog and the query layer in the storage region"}
	}
	return nil
}

func scopeFirst(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// Defaults returns the recommended answer of every question that applies
// after the recommended answers before it: what lima-tui init --defaults
// records.
func Defaults() Answers {
	a := Answers{}
	for _, q := range Questions() {
		if q.Applies(a) {
			a[q.ID] = q.Recommended(a)
		}
	}
	return a
}

// Crossing is one kind of data that crosses the region boundary.
type Crossing struct {
	ID   string // one of plan.Crossings
	What string
}

// CrossingsFor lists what crosses the boundary between the storage region
// and the catalog and query regions of the answers, in plan.Crossings
// order; none when nothing is split.
func CrossingsFor(a Answers) []Crossing {
	if !scopeSplit(a) {
		return nil
	}
	store := a[QRegion]
	cat, query := a[QCatalogRegion], a[QQueryRegion]
	if cat == "" {
		cat = store
	}
	if query == "" {
		query = store
	}
	what := map[string]string{}
	if cat != store {
		what[plan.CrossTableMetadata] = fmt.Sprintf("table metadata and catalog entries (table and column names, types, partitioning, properties, snapshot summaries with load ids and watermark values) are kept in %s", cat)
	}
	if query != store {
		if what[plan.CrossTableMetadata] == "" {
			what[plan.CrossTableMetadata] = fmt.Sprintf("table metadata (table and column names, types, partitioning, snapshot summaries with load ids and watermark values) is read in %s", query)
		}
		what[plan.CrossColumnStatistics] = fmt.Sprintf("column statistics (min/max of every column, from the manifests) are read in %s to plan queries", query)
		what[plan.CrossDataScans] = fmt.Sprintf("the rows of every data file a query reads travel from %s to %s", store, query)
		what[plan.CrossQueryResults] = fmt.Sprintf("query results are produced and usually stored in %s (e.g. an Athena results bucket)", query)
	}
	var out []Crossing
	for _, id := range plan.Crossings {
		if w := what[id]; w != "" {
			out = append(out, Crossing{ID: id, What: w})
		}
	}
	return out
}

func crossingIDs(cs []Crossing) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

func crossingText(cs []Crossing) string {
	if len(cs) == 0 {
		return "nothing crosses the region boundary"
	}
	var b strings.Builder
	b.WriteString("Crosses the region boundary:")
	for _, c := range cs {
		fmt.Fprintf(&b, "\n  %s: %s", c.ID, c.What)
	}
	return b.String()
}

// ErrSourceNotSupported marks a source URI this build recognises but cannot
// read yet (S3, a database DSN).
var ErrSourceNotSupported = errors.New("source not supported in this build yet")

// SourceURI is a parsed --source: a folder, an S3 prefix or a database DSN
// held in an environment variable.
type SourceURI struct {
	Kind string // "folder", "s3", "env" or "dynamodb"
	// Table is a dynamodb: source's DynamoDB table ("*": every table of
	// the region).
	Table  string
	Path   string // folder
	Bucket string // s3
	Prefix string // s3
	EnvVar string // env: the variable's name; its value is never read here
}

// ParseSource reads a source URI: a folder (a path or file:///path),
// s3://bucket/prefix (Path holds the s3:// URI), or env:NAME (a database
// DSN in the environment variable NAME; EnvVar holds NAME, the value is
// not read here, so a plan's gate 1 passes where the variable is not set).
func ParseSource(uri string) (SourceURI, error) {
	u := strings.TrimSpace(uri)
	const folderFix = "answer a folder holding the files, e.g. data/erp"
	switch {
	case u == "":
		return SourceURI{}, &AnswerError{Problem: "empty source", Fix: folderFix}
	case strings.HasPrefix(u, "s3://"):
		bucket, prefix, _ := strings.Cut(strings.TrimPrefix(u, "s3://"), "/")
		s := SourceURI{Kind: "s3", Bucket: bucket, Prefix: prefix}
		if bucket == "" {
			return s, &AnswerError{Problem: fmt.Sprintf("%q names no bucket", u), Fix: "write s3://bucket/prefix"}
		}
		if _, err := s3x.ParseURI(u); err != nil || strings.Contains(u, ",") {
			return s, &AnswerError{Problem: fmt.Sprintf("%q is not an S3 prefix Lima can read", u), Fix: "write s3://bucket/prefix without . or .. segments or commas"}
		}
		// Read like a folder: the objects below the prefix (files sources
		// with an s3:// path, listed by engine/source/s3src).
		s.Path = u
		return s, nil
	case strings.HasPrefix(u, "dynamodb:"):
		return parseDynamoSource(u) // scope_dynamodb.go
	case strings.HasPrefix(u, "env:"):
		name := strings.TrimPrefix(u, "env:")
		s := SourceURI{Kind: "env", EnvVar: name}
		const fix = "write env:NAME, where the variable NAME holds the database DSN (the DSN itself never goes on the command line or into platform.yaml)"
		if strings.ContainsAny(name, ":/@=") {
			// Possibly a DSN with a password: do not echo it.
			s.EnvVar = ""
			return s, &AnswerError{Problem: "env: takes the name of an environment variable, not a connection string", Fix: fix}
		}
		if !scopeEnvVarRE.MatchString(name) {
			return s, &AnswerError{Problem: fmt.Sprintf("%q is not an environment variable name", name), Fix: fix}
		}
		// The variable's value (the DSN) is read only where the source is
		// recorded (ApplyAnswers: its kind) and checked (init, gate 2).
		return s, nil
	case fileuri.Is(u):
		p, err := fileuri.ToPath(u)
		if err != nil {
			return SourceURI{}, &AnswerError{Problem: fmt.Sprintf("%q is not a file URI of a local folder", u), Fix: "write file:///absolute/folder (a %, # or ? in it as %25, %23, %3F) or just the folder"}
		}
		return SourceURI{Kind: "folder", Path: p}, nil
	}
	const dsnFix = "put the DSN in an environment variable (export ERP_DSN='...') and answer env:ERP_DSN; a DSN never goes on the command line or into platform.yaml"
	if redact.HasPassword(u) {
		// A database DSN given as is: never echo it.
		return SourceURI{}, &AnswerError{Problem: "this is a database connection string with a password, not a source", Fix: dsnFix}
	}
	if i := strings.Index(u, "://"); i > 0 && !strings.ContainsAny(u[:i], `/\`) {
		fix := "answer a folder, s3://bucket/prefix or env:NAME"
		switch strings.ToLower(u[:i]) {
		case "postgres", "postgresql", "mysql", "mariadb", "sqlserver", "oracle":
			fix = dsnFix
		}
		return SourceURI{}, &AnswerError{Problem: fmt.Sprintf("%q: the scheme %s:// is not a source Lima knows", redact.String(u), u[:i]), Fix: fix}
	}
	return SourceURI{Kind: "folder", Path: u}, nil
}

// PrefixFor derives a prefix from a folder: its last element in lower
// case, every run of other characters replaced by _, starting with a
// letter, at most 40 characters; "lake" when nothing is left.
func PrefixFor(folder string) string {
	base := strings.ToLower(path.Base(filepath.ToSlash(filepath.Clean(strings.TrimSpace(folder)))))
	var b strings.Builder
	for _, r := range base {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "_"):
			b.WriteByte('_')
		}
	}
	s := strings.Trim(b.String(), "_")
	if s == "" || s == "." {
		return "lake"
	}
	if s[0] < 'a' || s[0] > 'z' {
		s = "lake_" + s
	}
	if len(s) > 40 {
		s = strings.TrimRight(s[:40], "_")
	}
	return s
}

// SourceNameFor derives a source name from a folder: its last element in
// lower case with letters, digits, _ and - kept; "files" when nothing is
// left.
func SourceNameFor(folder string) string {
	base := strings.ToLower(path.Base(filepath.ToSlash(filepath.Clean(strings.TrimSpace(folder)))))
	var b strings.Builder
	for _, r := range base {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := strings.Trim(b.String(), "_-")
	if s == "" {
		return "files"
	}
	return s
}

// CheckAnswers judges answers: one finding per question that applies (pass
// with the answer as evidence, or fail with what is wrong and what to
// answer), then the residency verdict. A zero-egress mandate with a split
// region fails the residency finding: the build stops there.
func CheckAnswers(a Answers) []Finding {
	var out []Finding
	for _, q := range Questions() {
		if !q.Applies(a) {
			continue
		}
		v := strings.TrimSpace(a[q.ID])
		shown := fmt.Sprintf("%q", v)
		if v == "" {
			shown = "(empty)"
			if q.Multi {
				shown = "(none)"
			}
		}
		if err := q.Check(v, a); err != nil {
			f := Finding{Name: q.ID, Status: Fail, Detail: fmt.Sprintf("%s = %s: %v", q.Field, shown, err)}
			var ae *AnswerError
			if errors.As(err, &ae) {
				f.Detail, f.Fix = fmt.Sprintf("%s = %s: %s", q.Field, shown, ae.Problem), ae.Fix
			}
			out = append(out, f)
			continue
		}
		out = append(out, Finding{Name: q.ID, Status: Pass, Detail: fmt.Sprintf("%s = %s", q.Field, shown)})
	}
	return append(out, residencyFinding(a))
}

func residencyFinding(a Answers) Finding {
	f := Finding{Name: "residency", Status: Pass}
	store := a[QRegion]
	if !scopeSplit(a) {
		f.Detail = fmt.Sprintf("storage, catalog and query layer in one region (%s): nothing crosses a region boundary", scopeOrDash(store))
		return f
	}
	cs := CrossingsFor(a)
	f.Detail = fmt.Sprintf("split regions: storage %s, catalog %s, query layer %s; driver %s", store, scopeOrDash(a[QCatalogRegion]), scopeOrDash(a[QQueryRegion]), scopeOrDash(a[QDriver]))
	if a[QDriver] == "mandate" && a[QZeroEgress] == "yes" {
		f.Status = Fail
		what := []string{"the catalog or the query layer would sit in another region"}
		if len(cs) > 0 {
			what = what[:0]
			for _, c := range cs {
				what = append(what, c.What)
			}
		}
		f.Detail = fmt.Sprintf("a zero-egress mandate forbids anything to leave %s, but in this split-region setup %s. Lima does not build a split-region lake under a zero-egress mandate: the build stops here",
			store, strings.Join(what, "; "))
		f.Fix = fmt.Sprintf("put the catalog and the query layer in %s (answer split_region no), or have the mandate's owner allow the crossings listed (%s) in writing and answer zero_egress no",
			store, strings.Join(crossingIDs(cs), ", "))
		return f
	}
	if len(cs) > 0 {
		f.Detail += "; crossings: " + strings.Join(crossingIDs(cs), ", ")
		var ae *AnswerError
		if err := checkAcknowledged(a[QAcknowledged], a); errors.As(err, &ae) {
			f.Status = Fail
			f.Detail += " — " + ae.Problem
			f.Fix = ae.Fix
		} else {
			f.Detail += " — all acknowledged"
		}
	}
	return f
}

func scopeOrDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// AnswersOf reads the gate 1 answers recorded in a plan. Fields whose
// empty value has a documented default (pattern, volume, partitioning,
// schedule, time zone) give that default; the others give "".
func AnswersOf(p *plan.Plan) Answers {
	a := Answers{
		QPrefix:      p.Platform.Prefix,
		QRegion:      p.Platform.Region,
		QEnvironment: p.Platform.Environment,
		QPattern:     p.Pattern(),
		QConsumer:    p.Downstream.Consumer,
		QSchedule:    p.Schedule.Cron,
		QTimezone:    p.Schedule.Timezone,
		QSplitRegion: "no",
	}
	var srcs []string
	for _, name := range p.SourceNames() {
		if s := p.Sources[name]; s != nil && s.Path != "" {
			srcs = append(srcs, s.Path)
		} else if s != nil && s.IsDatabase() && s.DSNEnv != "" {
			srcs = append(srcs, "env:"+s.DSNEnv) // a database: its DSN's variable
		} else if s.IsDynamoDB() {
			srcs = append(srcs, dynamoAnswers(s)...)
		}
	}
	a[QSources] = strings.Join(srcs, ", ")
	a[QOwner] = ""
	if i := slices.IndexFunc(p.Owners, func(o plan.Owner) bool { return o.Default }); i >= 0 {
		a[QOwner] = p.Owners[i].Name
		a[QDeadline] = scopeOr(p.Owners[i].Deadline, DeadlineNone)
	}
	if a[QSchedule] == "" {
		a[QSchedule] = ScheduleManual
	}
	if a[QTimezone] == "" {
		a[QTimezone] = "UTC"
	}
	sc := p.Scope
	if sc == nil {
		sc = &plan.Scope{}
	}
	a[QVolume] = scopeOr(sc.Volume, plan.Volumes[0])
	a[QPartitioning] = scopeOr(sc.Partitioning, plan.Partitionings[0])
	a[QSensitive] = strings.Join(sc.SensitiveColumns, ", ")
	if r := sc.Residency; r != nil && r.SplitRegion {
		a[QSplitRegion] = "yes"
		a[QCatalogRegion] = scopeOr(r.CatalogRegion, p.Platform.Region)
		a[QQueryRegion] = scopeOr(r.QueryRegion, p.Platform.Region)
		a[QDriver] = r.Driver
		if r.Driver == "mandate" {
			a[QZeroEgress] = "no"
			if r.ZeroEgress {
				a[QZeroEgress] = "yes"
			}
		}
		a[QAcknowledged] = strings.Join(r.Acknowledged, ", ")
	}
	return a
}

func scopeOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// ApplyAnswers records answers in a plan: platform (prefix, region, environment,
// pattern), downstream.consumer, the default owner and its deadline, sources (one source of kind files per
// folder, named after it; an existing source with the same path keeps its
// name and settings), schedule (cron and time zone; manual clears the
// cron) and scope. Answers to questions that do not apply are ignored. It
// refuses answers that fail their question (an error listing each), so
// nothing invalid reaches the plan; a valid answer that stops the build (a
// zero-egress mandate) is recorded, and Scope reports it.
func ApplyAnswers(p *plan.Plan, a Answers) error {
	var errs []error
	for _, q := range Questions() {
		if q.Applies(a) {
			if err := q.Check(a[q.ID], a); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", q.ID, err))
			}
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	p.Platform.Prefix = a[QPrefix]
	p.Platform.Region = a[QRegion]
	p.Platform.Environment = a[QEnvironment]
	p.Platform.Pattern = a[QPattern]
	p.Downstream.Consumer = a[QConsumer]

	srcs, err := scopeSources(p.Sources, a.List(QSources))
	if err != nil {
		return fmt.Errorf("%s: %w", QSources, err)
	}
	p.Sources = srcs
	if a[QSchedule] == ScheduleManual {
		p.Schedule.Cron, p.Schedule.Timezone = "", ""
	} else {
		p.Schedule.Cron, p.Schedule.Timezone = a[QSchedule], a[QTimezone]
	}
	applyOwner(p, strings.TrimSpace(a[QOwner]), a[QDeadline])
	sc := &plan.Scope{Volume: a[QVolume], Partitioning: a[QPartitioning], SensitiveColumns: a.List(QSensitive)}
	if scopeSplit(a) {
		r := &plan.Residency{SplitRegion: true, Driver: a[QDriver], Acknowledged: a.List(QAcknowledged)}
		if a[QCatalogRegion] != a[QRegion] {
			r.CatalogRegion = a[QCatalogRegion]
		}
		if a[QQueryRegion] != a[QRegion] {
			r.QueryRegion = a[QQueryRegion]
		}
		r.ZeroEgress = a[QDriver] == "mandate" && a[QZeroEgress] == "yes"
		if r.ZeroEgress {
			r.Acknowledged = nil
		}
		sc.Residency = r
	}
	p.Scope = sc
	return nil
}

// applyOwner records the default owner and its deadline: a new name is a
// new owner (the old one's e-mail and notification do not carry over); the
// same name keeps them and takes the deadline; no name removes the default
// owner (exceptions nobody routes stay unassigned). Owners of a table,
// column or rule are kept as they are.
func applyOwner(p *plan.Plan, name, deadline string) {
	if deadline == DeadlineNone {
		deadline = ""
	}
	i := slices.IndexFunc(p.Owners, func(o plan.Owner) bool { return o.Default })
	switch {
	case name == "" && i >= 0:
		p.Owners = slices.Delete(p.Owners, i, i+1)
	case name == "":
	case i < 0:
		p.Owners = append(p.Owners, plan.Owner{Name: name, Default: true, Deadline: deadline})
	default:
		if p.Owners[i].Name != name {
			p.Owners[i] = plan.Owner{Name: name, Default: true}
		}
		p.Owners[i].Deadline = deadline
	}
}

// scopeSources builds the sources of the folders: an old source with the
// same path (or, for env:NAME, the same dsn_env) keeps its name and
// settings; a new one is named after its folder (name_2, name_3, … when
// taken). A new env:NAME source is a database whose kind DSNKind reads
// from the variable's value; it fails when the variable is unset or holds
// no DSN Lima recognises (the error never quotes the value).
func scopeSources(old map[string]*plan.Source, folders []string) (map[string]*plan.Source, error) {
	out := map[string]*plan.Source{}
	var fresh []SourceURI
	for _, f := range folders {
		s, _ := ParseSource(f)
		kept := false
		for _, name := range slices.Sorted(maps.Keys(old)) {
			o := old[name]
			if o == nil || out[name] != nil {
				continue
			}
			same := s.Kind != "env" && o.Path != "" && (o.Kind == plan.SourceFiles || o.Kind == plan.SourceSQLite) && filepath.Clean(o.Path) == filepath.Clean(s.Path)
			if s.Kind == "env" {
				same = o.IsDatabase() && o.DSNEnv == s.EnvVar
			}
			if s.Kind == "dynamodb" {
				same = o.IsDynamoDB() && dynamoListsTable(o, s.Table)
			}
			if same {
				out[name], kept = o, true
				break
			}
		}
		if !kept {
			fresh = append(fresh, s)
		}
	}
	fresh = addDynamoSources(out, fresh) // scope_dynamodb.go
	for _, s := range fresh {
		src := &plan.Source{Kind: plan.SourceFiles, Path: s.Path}
		base := SourceNameFor(s.Path)
		if s.Kind == "env" {
			kind, err := DSNKindOf(s.EnvVar)
			if err != nil {
				return nil, err
			}
			src = &plan.Source{Kind: kind, DSNEnv: s.EnvVar}
			base = SourceNameFor(envStem(s.EnvVar))
		}
		name := base
		for i := 2; out[name] != nil; i++ {
			name = fmt.Sprintf("%s_%d", base, i)
		}
		out[name] = src
	}
	return out, nil
}

// envStem is the name a source or prefix takes from a DSN variable: the
// name without a trailing _DSN, _URL or _DATABASE_URL (ERP_DSN → ERP).
func envStem(name string) string {
	for _, suf := range []string{"_DATABASE_URL", "_DSN", "_URL"} {
		if s, ok := strings.CutSuffix(strings.ToUpper(name), suf); ok && s != "" {
			return name[:len(s)]
		}
	}
	return name
}

// Scope is gate 1 on a plan: CheckAnswers of the answers recorded in it, plus
// what only the plan tells: a cloud target (an S3 warehouse, a Glue or
// REST catalog) needs a cloud region. Approval (gates.scope) is recorded
// only when no finding failed.
func Scope(p *plan.Plan) []Finding {
	out := CheckAnswers(AnswersOf(p))
	if cloud, what := cloudTarget(p); cloud {
		f := Finding{Name: "target region", Status: Pass, Detail: fmt.Sprintf("%s; platform.region = %q", what, p.Platform.Region)}
		if p.Platform.Region == RegionLocal {
			f.Status = Fail
			f.Detail = fmt.Sprintf("%s, but platform.region is local", what)
			f.Fix = "set platform.region to the AWS region of the bucket and catalog, e.g. eu-central-1"
		}
		out = append(out, f)
	}
	out = append(out, awsCatalogScope(p)...)
	return out
}

func cloudTarget(p *plan.Plan) (bool, string) {
	switch {
	case strings.HasPrefix(p.Warehouse(), "s3://"):
		return true, "the warehouse is on S3 (" + p.Warehouse() + ")"
	case p.Catalog() == plan.CatalogGlue:
		return true, "the catalog is AWS Glue"
	case p.Catalog() == plan.CatalogREST:
		return true, "the catalog is an Iceberg REST catalog"
	case p.Catalog() == plan.CatalogS3Tables:
		return true, "the catalog is S3 Tables"
	}
	return false, ""
}

// FailedFindings returns the findings that failed.
func FailedFindings(fs []Finding) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Status == Fail {
			out = append(out, f)
		}
	}
	return out
}

// SensitiveByScope reports whether scope.sensitive_columns names the
// column, by name or pattern, ignoring case (gate 3 marks such columns
// sensitive).
func SensitiveByScope(p *plan.Plan, column string) bool {
	if p.Scope == nil {
		return false
	}
	c := strings.ToLower(column)
	for _, pat := range p.Scope.SensitiveColumns {
		if ok, _ := path.Match(strings.ToLower(pat), c); ok {
			return true
		}
	}
	return false
}
