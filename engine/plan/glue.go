package plan

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Engines a table's load runs on (tables.<name>.engine).
const (
	// EngineLocal loads the table in the lima-tui process (default).
	EngineLocal = "local"
	// EngineGlue loads it in an AWS Glue (Spark) job that lima-tui deploy
	// glue generates: each Spark task pipes its shard of the input files
	// through lima-tui worker, and the driver makes the one commit with
	// lima-tui commit.
	EngineGlue = "glue"
)

// Engines lists the engines; the first is the default.
var Engines = []string{EngineLocal, EngineGlue}

// GlueWorkerTypes are the Glue worker types a job may use.
var GlueWorkerTypes = []string{"G.1X", "G.2X", "G.4X", "G.8X"}

// Bounds of the glue: section.
const (
	MinGlueWorkers    = 2   // Glue's minimum for a Spark job (one driver, one executor)
	MaxGlueWorkers    = 299 // a bound against typos; Glue's own quota may be lower
	MaxGlueRetries    = 10
	MaxGlueTimeout    = 7 * 24 * time.Hour // Glue's limit for a batch job
	DefaultGlueTimout = 2 * time.Hour
	// DefaultShardMB is the input size grouped into one shard (one Spark task).
	DefaultShardMB = 256
	MaxShardMB     = 64 << 10
)

// GlueJob is a table's glue: section (engine: glue).
type GlueJob struct {
	// RoleARN is the IAM role the job runs as
	// (arn:aws:iam::ACCOUNT:role/NAME); the policy it needs is written by
	// lima-tui deploy glue.
	RoleARN string `yaml:"role_arn,omitempty"`
	// ScriptLocation is the S3 prefix (s3://bucket/prefix/) that holds the
	// driver, the lima-tui binary, the approved plan and the reports the
	// commit writes.
	ScriptLocation string `yaml:"script_location,omitempty"`
	// JobName; default lima-<prefix>-<table>.
	JobName string `yaml:"job_name,omitempty"`
	// WorkerType (G.1X, G.2X, G.4X, G.8X) and Workers override the size
	// derived from the source's bytes (see the generator's rule).
	WorkerType string `yaml:"worker_type,omitempty"`
	Workers    int    `yaml:"workers,omitempty"`
	// Timeout of one job run (a duration, 30m, 2h); default 2h.
	Timeout string `yaml:"timeout,omitempty"`
	// MaxRetries of a failed job run (default 0: a failed run is looked at
	// before it is run again; a retry is safe, the load id is the same).
	MaxRetries int `yaml:"max_retries,omitempty"`
	// ShardMB is how many MiB of input files one shard (one Spark task)
	// gets; default 256.
	ShardMB int `yaml:"shard_mb,omitempty"`
}

// EngineOf is the table's engine (EngineLocal when empty).
func (t *Table) EngineOf() string {
	if t == nil || t.Engine == "" {
		return EngineLocal
	}
	return t.Engine
}

// GlueTimeout is glue.timeout parsed (DefaultGlueTimout when empty or
// invalid; Validate reports an invalid one).
func (g *GlueJob) GlueTimeout() time.Duration {
	if g == nil || g.Timeout == "" {
		return DefaultGlueTimout
	}
	d, err := time.ParseDuration(g.Timeout)
	if err != nil || d <= 0 {
		return DefaultGlueTimout
	}
	return d
}

// ShardBytes is glue.shard_mb in bytes (DefaultShardMB when 0).
func (g *GlueJob) ShardBytes() int64 {
	if g == nil || g.ShardMB <= 0 {
		return DefaultShardMB << 20
	}
	return int64(g.ShardMB) << 20
}

// GlueJobName is glue.job_name or lima-<prefix>-<table> (Glue allows
// letters, digits, _ and -, which prefix and table names are made of).
func (p *Plan) GlueJobName(table string) string {
	if t := p.Tables[table]; t != nil && t.Glue != nil && t.Glue.JobName != "" {
		return t.Glue.JobName
	}
	return "lima-" + p.Platform.Prefix + "-" + table
}

// GlueTables lists the tables with engine glue, sorted.
func (p *Plan) GlueTables() []string {
	var out []string
	for _, n := range p.TableNames() {
		if p.Tables[n].EngineOf() == EngineGlue {
			out = append(out, n)
		}
	}
	return out
}

var (
	roleARNRE = regexp.MustCompile(`^arn:aws[a-z-]*:iam::[0-9]{12}:role/[\w+=,.@/-]{1,512}$`)
	jobNameRE = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,254}$`)
)

// glueTables checks every table's engine and glue: section.
func (v *validator) glueTables() {
	for _, name := range v.p.TableNames() {
		t := v.p.Tables[name]
		if t == nil {
			continue
		}
		tp := joinKey("tables", name)
		v.enum(tp+".engine", t.Engine, "engine", Engines, withDefault(Engines...))
		if t.EngineOf() != EngineGlue {
			if t.Glue != nil {
				v.add(tp+".glue", "only used with engine: glue (add engine: glue to the table, or remove glue:)")
			}
			continue
		}
		v.glueTable(tp, t)
	}
}

func (v *validator) glueTable(tp string, t *Table) {
	p := v.p
	if t.IsMart() {
		v.add(tp+".engine", "a mart is built from its base tables after they load; engine glue is for base tables read from S3 files")
		return
	}
	if t.Source != nil {
		src := p.Sources[t.Source.Name]
		switch {
		case src == nil:
			// tableSource reports the unknown source.
		case src.Kind != SourceFiles || !strings.HasPrefix(src.Path, "s3://"):
			v.add(tp+".engine", "engine glue reads files below an S3 prefix: source %s must be kind files with path s3://bucket/prefix (the Glue workers cannot reach a local folder or, in this build, a database)", t.Source.Name)
		case len(t.Source.Files) == 0:
			v.add(tp+".source.files", "required with engine glue: the globs of the files the job shards")
		}
	}
	if !strings.HasPrefix(p.Warehouse(), "s3://") {
		v.add(tp+".engine", "engine glue needs storage.warehouse on S3 (s3://bucket/prefix): the Glue workers write the data files there")
	}
	if c := p.Catalog(); c != CatalogGlue && c != CatalogS3Tables {
		v.add(tp+".engine", "engine glue needs platform.catalog glue or s3tables: the commit runs on the Glue driver, which cannot reach this workspace's %s catalog", c)
	}
	// The same rule as the worker's (engine/run ShardSupported): a shard
	// is a full load of its files, without a history table.
	if m := t.Load.Mode; m != "" && m != ModeFull {
		v.add(tp+".load.mode", "engine glue loads files in mode full; %s needs the local engine in this build", m)
	}
	if t.History {
		v.add(tp+".history", "a history table needs the local engine in this build (engine glue shards full loads only)")
	}
	g := t.Glue
	gp := tp + ".glue"
	if g == nil {
		v.add(gp, "required with engine: glue: role_arn and script_location, e.g. glue: {role_arn: arn:aws:iam::111122223333:role/lima-glue, script_location: s3://bucket/lima/}")
		return
	}
	switch {
	case g.RoleARN == "":
		v.add(gp+".role_arn", "required: the IAM role the Glue job runs as, e.g. arn:aws:iam::111122223333:role/lima-glue (lima-tui deploy glue writes the policy it needs)")
	case !roleARNRE.MatchString(g.RoleARN):
		v.add(gp+".role_arn", "%q is not an IAM role ARN; write arn:aws:iam::ACCOUNT:role/NAME", g.RoleARN)
	}
	switch loc := g.ScriptLocation; {
	case loc == "":
		v.add(gp+".script_location", "required: an S3 prefix for the driver, the binary, the plan and the reports, e.g. s3://bucket/lima/")
	case !strings.HasPrefix(loc, "s3://") || len(strings.TrimPrefix(loc, "s3://")) == 0 || strings.HasPrefix(strings.TrimPrefix(loc, "s3://"), "/"):
		v.add(gp+".script_location", "%q is not an S3 prefix; write s3://bucket/prefix/", loc)
	case !strings.HasSuffix(loc, "/"):
		v.add(gp+".script_location", "%q: end the prefix with / (s3://bucket/prefix/), so the uploads land below it", loc)
	case strings.Contains(loc, "@") || strings.Contains(loc, "?"):
		v.add(gp+".script_location", "%q: an S3 prefix carries no credentials or query", loc)
	}
	if g.JobName != "" && !jobNameRE.MatchString(g.JobName) {
		v.add(gp+".job_name", "%q is not a Glue job name; use letters, digits, _, - and . (at most 255)", g.JobName)
	}
	if g.WorkerType != "" && !slices.Contains(GlueWorkerTypes, g.WorkerType) {
		sug := ""
		if x, ok := suggest(g.WorkerType, GlueWorkerTypes); ok {
			sug = fmt.Sprintf("did you mean %q? ", x)
		}
		v.add(gp+".worker_type", "%q is not a Glue worker type; %suse %s", g.WorkerType, sug, oneOf(GlueWorkerTypes...))
	}
	if g.Workers != 0 && (g.Workers < MinGlueWorkers || g.Workers > MaxGlueWorkers) {
		v.add(gp+".workers", "%d: a Glue Spark job has %d to %d workers (one is the driver)", g.Workers, MinGlueWorkers, MaxGlueWorkers)
	}
	if g.Timeout != "" {
		d, err := time.ParseDuration(g.Timeout)
		switch {
		case err != nil:
			v.add(gp+".timeout", "%q is not a duration; write e.g. 30m or 2h", g.Timeout)
		case d < time.Minute || d > MaxGlueTimeout:
			v.add(gp+".timeout", "%s: a Glue job run's timeout is 1m to 168h", g.Timeout)
		case d%time.Minute != 0:
			v.add(gp+".timeout", "%s: Glue counts the timeout in whole minutes", g.Timeout)
		}
	}
	if g.MaxRetries < 0 || g.MaxRetries > MaxGlueRetries {
		v.add(gp+".max_retries", "%d: use 0 to %d", g.MaxRetries, MaxGlueRetries)
	}
	if g.ShardMB < 0 || g.ShardMB > MaxShardMB {
		v.add(gp+".shard_mb", "%d: use 1 to %d MiB of input per shard (0: %d)", g.ShardMB, MaxShardMB, DefaultShardMB)
	}
}
