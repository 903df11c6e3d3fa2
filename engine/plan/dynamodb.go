package plan

import (
	"strings"
)

// SourceDynamoDB is the kind of an Amazon DynamoDB source: each table of
// the plan reads one DynamoDB table by a parallel Scan within a read
// budget (source.table), or a DynamoDB export to S3 without touching the
// table (source.export). Region, endpoint and credentials come from the
// AWS default chain (AWS_REGION, AWS_PROFILE, AWS_ENDPOINT_URL_DYNAMODB,
// AWS_ENDPOINT_URL), never from the plan.
const SourceDynamoDB = "dynamodb"

// IsDynamoDB reports whether the source is a DynamoDB source.
func (s *Source) IsDynamoDB() bool { return s != nil && s.Kind == SourceDynamoDB }

// DynamoDB holds the options of a dynamodb source (zero values: defaults).
type DynamoDB struct {
	// ReadPercent is the share of a provisioned table's read capacity a
	// scan may use (default 25).
	ReadPercent float64 `yaml:"read_percent,omitempty"`
	// MaxRCU is the budget, in read capacity units a second, of a scan of
	// an on-demand table (default 1000), and a cap on a provisioned
	// table's.
	MaxRCU float64 `yaml:"max_rcu,omitempty"`
	// ConsistentRead asks for strongly consistent reads (twice the
	// capacity); default off.
	ConsistentRead bool `yaml:"consistent_read,omitempty"`
	// Tables are the DynamoDB tables gate 3 proposes a lake table for
	// (lima-tui init --source dynamodb:Orders records them); empty: every
	// table ListTables returns in the region.
	Tables []string `yaml:"tables,omitempty"`
}

// dynamoSource checks a dynamodb source.
func (v *validator) dynamoSource(sp string, s *Source) {
	if s.Path != "" {
		v.add(sp+".path", "not used with kind dynamodb: each table names its DynamoDB table (source.table) or export (source.export)")
	}
	if s.DSNEnv != "" {
		v.add(sp+".dsn_env", "not used with kind dynamodb: credentials come from the AWS default chain (AWS_PROFILE, the environment, the instance role)")
	}
	if s.Encoding != "" || s.Timezone != "" {
		v.add(sp, "encoding and timezone apply to files; DynamoDB values are typed")
	}
	if d := s.DynamoDB; d != nil {
		if d.ReadPercent < 0 || d.ReadPercent > 100 {
			v.add(sp+".dynamodb.read_percent", "%g is not a share of the read capacity; give 1 to 100 (default 25)", d.ReadPercent)
		}
		if d.MaxRCU < 0 {
			v.add(sp+".dynamodb.max_rcu", "%g is negative; give read capacity units a second (default 1000 for an on-demand table)", d.MaxRCU)
		}
	}
}

// dynamoTableSource checks a table's source of kind dynamodb.
func (v *validator) dynamoTableSource(tp string, t *Table) {
	sp, ts := tp+".source", t.Source
	switch {
	case ts.Table == "" && ts.Export == "":
		v.add(sp+".table", "required for a dynamodb source: the DynamoDB table to scan (table: Orders), or export: s3://bucket/prefix/AWSDynamoDB/<export-id>/ to load an export")
	case ts.Table != "" && ts.Export != "":
		v.add(sp+".export", "give table or export, not both")
	case ts.Export != "" && !strings.HasPrefix(strings.ToLower(ts.Export), "s3://"):
		v.add(sp+".export", "%q is not an s3:// URI of an export folder (s3://bucket/prefix/AWSDynamoDB/<export-id>/)", ts.Export)
	}
	if len(ts.Files) > 0 || ts.Format != "" || ts.CSV != (CSV{}) || ts.Encoding != "" || ts.NullTokens != nil || ts.Schema != "" || ts.SplitBy != "" {
		v.add(sp, "files, format, csv, encoding, null_tokens, schema and split_by do not apply to a dynamodb source (typed items; the scan is split in segments by etl.max_parallel_reads)")
	}
	if m := t.Mode(); m != ModeFull {
		v.add(tp+".load.mode", "mode %s is not available for a dynamodb source: a Scan cannot read only what changed; use mode full (each run replaces the table with the scan)", m)
	}
}
