// Package gluejob generates what an AWS Glue (Spark) job needs to load one
// table of the plan (engine: glue): the PySpark driver, the job and trigger
// definitions in the shape of Glue's CreateJob/CreateTrigger requests, and
// the IAM policy the job's role needs. It is pure: nothing here talks to
// AWS (flow/deployglue.go uploads and creates).
//
// The driver lists the table's files below the source prefix, groups them
// into shards of glue.shard_mb, gives each Spark task its shards with the
// task's attempt id, pipes them through `lima-tui worker`, collects the
// manifests and runs `lima-tui commit` once on the driver, failing the job
// when the commit fails; the commit's report is uploaded to
// <script_location>reports/<load id>/.
package gluejob

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"text/template"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/source/files"
	"github.com/lima-lake/lima/reports"
)

// GlueVersion is the Glue version of the generated job.
const GlueVersion = "5.1"

// Names of the objects below glue.script_location.
const (
	BinaryName = "lima-tui"
	PlanName   = "platform.yaml"
	ReportsDir = "reports/"
	// LoadIDArg is the job argument carrying the load id ("auto": the
	// driver uses glue-<job run id>, for runs a trigger starts).
	LoadIDArg = "--load_id"
	AutoLoad  = "auto"
)

// Sizing rule: one worker per GiBPerWorker of source files plus the
// driver, at least plan.MinGlueWorkers, at most MaxAutoWorkers.
const (
	GiBPerWorker   = 8
	MaxAutoWorkers = 100
	DefaultWorker  = "G.1X"
)

//go:embed driver.py.tmpl
var driverTemplate string

var driverTmpl = template.Must(template.New("driver.py").Funcs(template.FuncMap{"py": pyLiteral}).Parse(driverTemplate))

// Job is the job definition: the fields of Glue's CreateJob request (the
// file is `aws glue create-job --cli-input-json file://job.json`).
type Job struct {
	Name              string            `json:"Name"`
	Description       string            `json:"Description"`
	Role              string            `json:"Role"`
	Command           Command           `json:"Command"`
	GlueVersion       string            `json:"GlueVersion"`
	WorkerType        string            `json:"WorkerType"`
	NumberOfWorkers   int32             `json:"NumberOfWorkers"`
	Timeout           int32             `json:"Timeout"` // minutes
	MaxRetries        int32             `json:"MaxRetries"`
	ExecutionProperty ExecutionProperty `json:"ExecutionProperty"`
	DefaultArguments  map[string]string `json:"DefaultArguments"`
}

// Command is the job's script.
type Command struct {
	Name           string `json:"Name"`
	ScriptLocation string `json:"ScriptLocation"`
	PythonVersion  string `json:"PythonVersion"`
}

// ExecutionProperty bounds concurrent runs.
type ExecutionProperty struct {
	MaxConcurrentRuns int32 `json:"MaxConcurrentRuns"`
}

// Trigger is the schedule: the fields of Glue's CreateTrigger request.
type Trigger struct {
	Name            string   `json:"Name"`
	Type            string   `json:"Type"`
	Schedule        string   `json:"Schedule"`
	Actions         []Action `json:"Actions"`
	StartOnCreation bool     `json:"StartOnCreation"`
	Description     string   `json:"Description"`
}

// Action is a trigger's job.
type Action struct {
	JobName string `json:"JobName"`
}

// Bundle is what deploy writes and applies for one table.
type Bundle struct {
	Table string
	// Driver is the PySpark script.
	Driver []byte
	Job    Job
	// Trigger is nil when the plan has no schedule.cron or Glue cannot
	// express it (TriggerNote says why).
	Trigger     *Trigger
	TriggerNote string
	// Policy is the IAM policy document the job's role needs (JSON).
	Policy []byte
	// SizingRule says how the worker type and count were chosen.
	SizingRule string
	// Where the uploads go.
	ScriptLocation, DriverURI, BinaryURI, PlanURI, ReportsURI string
}

// Options carry what the plan does not say.
type Options struct {
	// SourceBytes is the size of the table's input files (-1: unknown;
	// the scope's volume is used).
	SourceBytes int64
}

// Generate builds the bundle of a table with engine glue. The plan must be
// valid.
func Generate(p *plan.Plan, table string, o Options) (*Bundle, error) {
	t := p.Tables[table]
	if t == nil {
		return nil, fmt.Errorf("gluejob: no table %q in the plan", table)
	}
	if t.EngineOf() != plan.EngineGlue || t.Glue == nil || t.Source == nil {
		return nil, fmt.Errorf("gluejob: table %s does not say engine: glue with a glue: section", table)
	}
	src := p.Sources[t.Source.Name]
	if src == nil {
		return nil, fmt.Errorf("gluejob: table %s: no source %q", table, t.Source.Name)
	}
	g := t.Glue
	loc := g.ScriptLocation
	name := p.GlueJobName(table)
	b := &Bundle{Table: table, ScriptLocation: loc, DriverURI: loc + name + ".py", BinaryURI: loc + BinaryName, PlanURI: loc + PlanName, ReportsURI: loc + ReportsDir}
	var globs []string
	for _, gl := range t.Source.Files {
		re, err := GlobRegexp(gl)
		if err != nil {
			return nil, fmt.Errorf("gluejob: table %s: %w", table, err)
		}
		globs = append(globs, re)
	}
	var drv bytes.Buffer
	if err := driverTmpl.Execute(&drv, map[string]any{"Table": table, "SourceURI": src.Path, "Globs": globs,
		"ShardBytes": g.ShardBytes(), "BinaryURI": b.BinaryURI, "PlanURI": b.PlanURI, "ReportsURI": b.ReportsURI}); err != nil {
		return nil, err
	}
	b.Driver = drv.Bytes()

	wt, workers, rule := Size(o.SourceBytes, p.Scope)
	if g.WorkerType != "" {
		wt, rule = g.WorkerType, rule+"; worker type from glue.worker_type"
	}
	if g.Workers != 0 {
		workers, rule = g.Workers, rule+fmt.Sprintf("; %d workers from glue.workers", g.Workers)
	}
	b.SizingRule = rule
	b.Job = Job{
		Name:        name,
		Description: fmt.Sprintf("Lima: loads table %s of platform %s (lima-tui deploy glue)", table, p.Platform.Prefix),
		Role:        g.RoleARN,
		Command:     Command{Name: "glueetl", ScriptLocation: b.DriverURI, PythonVersion: "3"},
		GlueVersion: GlueVersion, WorkerType: wt, NumberOfWorkers: int32(workers),
		Timeout:           int32(g.GlueTimeout() / time.Minute),
		MaxRetries:        int32(g.MaxRetries),
		ExecutionProperty: ExecutionProperty{MaxConcurrentRuns: 1},
		DefaultArguments: map[string]string{
			"--datalake-formats":    "iceberg",
			"--conf":                SparkConf(p),
			"--job-bookmark-option": "job-bookmark-disable",
			"--job-language":        "python",
			LoadIDArg:               AutoLoad,
		},
	}
	if sc := p.Schedule; sc.Cron != "" {
		tz := time.UTC
		var err error
		if sc.Timezone != "" {
			tz, err = time.LoadLocation(sc.Timezone)
		}
		var cron, note string
		if err == nil {
			cron, note, err = reports.GlueCron(sc.Cron, tz)
		}
		if err != nil {
			b.TriggerNote = "no Glue trigger: " + err.Error()
		} else {
			b.TriggerNote = note
			b.Trigger = &Trigger{Name: name + "-schedule", Type: "SCHEDULED", Schedule: cron, Actions: []Action{{JobName: name}}, StartOnCreation: true,
				Description: fmt.Sprintf("Lima: schedule.cron %q in %s", sc.Cron, tz)}
		}
	}
	pol, err := Policy(p, table)
	if err != nil {
		return nil, err
	}
	b.Policy = pol
	return b, nil
}

// Size is the rule for a job's workers: one DefaultWorker (4 vCPU, 16 GB)
// per GiBPerWorker GiB of source files, plus one for the driver, at least
// plan.MinGlueWorkers and at most MaxAutoWorkers; with the size unknown,
// from the scope's volume (small 2, medium 5, large 20).
func Size(sourceBytes int64, scope *plan.Scope) (workerType string, workers int, rule string) {
	if sourceBytes < 0 {
		vol := "small"
		if scope != nil && scope.Volume != "" {
			vol = scope.Volume
		}
		n := map[string]int{"small": 2, "medium": 5, "large": 20}[vol]
		if n == 0 {
			n = 2
		}
		return DefaultWorker, n, fmt.Sprintf("source size unknown: %d %s workers for scope volume %s", n, DefaultWorker, vol)
	}
	const per = GiBPerWorker << 30
	n := 1 + int((sourceBytes+per-1)/per)
	n = max(plan.MinGlueWorkers, min(MaxAutoWorkers, n))
	return DefaultWorker, n, fmt.Sprintf("%d %s workers: one per %d GiB of the %d bytes of source files, plus the driver (at least %d, at most %d)",
		n, DefaultWorker, GiBPerWorker, sourceBytes, plan.MinGlueWorkers, MaxAutoWorkers)
}

// SparkConf is the --conf argument with the Iceberg catalog settings: Glue
// takes one --conf, so the others follow inside its value, each after
// " --conf ". The catalog is named lima.
func SparkConf(p *plan.Plan) string {
	c := []string{"spark.sql.extensions=org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
		"spark.sql.catalog.lima=org.apache.iceberg.spark.SparkCatalog"}
	switch p.Catalog() {
	case plan.CatalogS3Tables:
		region := plan.TableBucketRegion(p.Storage.TableBucketARN)
		c = append(c, "spark.sql.catalog.lima.type=rest",
			"spark.sql.catalog.lima.uri=https://s3tables."+region+".amazonaws.com/iceberg",
			"spark.sql.catalog.lima.warehouse="+p.Storage.TableBucketARN,
			"spark.sql.catalog.lima.rest.sigv4-enabled=true",
			"spark.sql.catalog.lima.rest.signing-name=s3tables",
			"spark.sql.catalog.lima.rest.signing-region="+region)
	default:
		c = append(c, "spark.sql.catalog.lima.catalog-impl=org.apache.iceberg.aws.glue.GlueCatalog",
			"spark.sql.catalog.lima.warehouse="+p.Warehouse(),
			"spark.sql.catalog.lima.io-impl=org.apache.iceberg.aws.s3.S3FileIO")
	}
	return strings.Join(c, " --conf ")
}

// pyLiteral writes v as a Python literal: JSON strings and lists of
// strings are valid Python.
func pyLiteral(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// GlobRegexp is a regular expression (Python re and Go regexp alike) that
// matches the names (relative to the source root, forward slashes, NFC) the
// glob matches under Lima's rules (files.ParseGlob: * and ? within one
// segment, ** any number of segments).
func GlobRegexp(g string) (string, error) {
	if strings.Contains(g, "#") {
		return "", fmt.Errorf("glob %q names a workbook sheet; the Glue driver shards whole files", g)
	}
	pg, err := files.ParseGlob(g)
	if err != nil || pg == nil {
		if err == nil {
			err = fmt.Errorf("glob %q matches nothing", g)
		}
		return "", err
	}
	var segs []string
	for _, s := range strings.Split(norm.NFC.String(g), "/") {
		if s == "" || s == "." || (s == "**" && len(segs) > 0 && segs[len(segs)-1] == "**") {
			continue
		}
		segs = append(segs, s)
	}
	var b strings.Builder
	needSlash := false
	for i, s := range segs {
		if s == "**" {
			if i == len(segs)-1 {
				if i == 0 {
					b.WriteString(".*")
				} else {
					b.WriteString("(?:/.*)?")
				}
				break
			}
			if needSlash {
				b.WriteString("/")
			}
			b.WriteString("(?:[^/]*/)*")
			needSlash = false
			continue
		}
		if needSlash {
			b.WriteString("/")
		}
		seg, err := segRegexp(s)
		if err != nil {
			return "", fmt.Errorf("glob %q: %w", g, err)
		}
		b.WriteString(seg)
		needSlash = true
	}
	out := b.String()
	if _, err := regexp.Compile(out); err != nil {
		return "", fmt.Errorf("glob %q: %w", g, err)
	}
	return out, nil
}

// segRegexp translates one path.Match pattern.
func segRegexp(s string) (string, error) {
	var b strings.Builder
	r := []rune(s)
	for i := 0; i < len(r); i++ {
		switch c := r[i]; c {
		case '*':
			b.WriteString("[^/]*")
		case '?':
			b.WriteString("[^/]")
		case '\\':
			if i+1 < len(r) {
				i++
			}
			b.WriteString(regexp.QuoteMeta(string(r[i])))
		case '[':
			j := i + 1
			b.WriteString("[")
			if j < len(r) && r[j] == '^' {
				b.WriteString("^/")
				j++
			}
			for first := true; ; first = false {
				if j >= len(r) {
					return "", fmt.Errorf("unclosed [ in %q", s)
				}
				if r[j] == ']' && !first {
					break
				}
				var lo, hi rune
				lo, j = classRune(r, j)
				b.WriteString(classChar(lo))
				if j < len(r) && r[j] == '-' {
					hi, j = classRune(r, j+1)
					b.WriteString("-" + classChar(hi))
				}
			}
			b.WriteString("]")
			i = j
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return b.String(), nil
}

// classRune reads one (possibly escaped) character of a class at j and
// returns it and the index after it.
func classRune(r []rune, j int) (rune, int) {
	if j < len(r) && r[j] == '\\' && j+1 < len(r) {
		return r[j+1], j + 2
	}
	if j >= len(r) {
		return 0, j
	}
	return r[j], j + 1
}

func classChar(c rune) string {
	if strings.ContainsRune(`\]^-[`, c) {
		return `\` + string(c)
	}
	return string(c)
}
