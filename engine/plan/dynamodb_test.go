package plan

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateDynamoDB(t *testing.T) {
	const head = "schema_version: 1\nplatform: {prefix: ddb}\nsources:\n"
	for _, tc := range []struct {
		name, src, table string
		want             []string // substrings of the problems; nil: valid
	}{
		{"table", "ddb: {kind: dynamodb}", "source: {name: ddb, table: Orders}\n    load: {keys: [pk]}", nil},
		{"export", "ddb: {kind: dynamodb, dynamodb: {read_percent: 50, max_rcu: 100, consistent_read: true}}", "source: {name: ddb, export: s3://b/p/AWSDynamoDB/01/}", nil},
		{"neither", "ddb: {kind: dynamodb}", "source: {name: ddb}", []string{"tables.orders.source.table: required for a dynamodb source"}},
		{"both", "ddb: {kind: dynamodb}", "source: {name: ddb, table: T1x, export: s3://b/p/}", []string{"give table or export, not both"}},
		{"export not s3", "ddb: {kind: dynamodb}", "source: {name: ddb, export: /tmp/x}", []string{"is not an s3:// URI"}},
		{"files", "ddb: {kind: dynamodb}", `source: {name: ddb, table: T1x, files: ["*.csv"]}`, []string{"do not apply to a dynamodb source"}},
		{"mode incremental", "ddb: {kind: dynamodb}", "source: {name: ddb, table: T1x}\n    load: {mode: incremental, watermark: sk}", []string{"tables.orders.load.mode: mode incremental is not available for a dynamodb source"}},
		{"read_percent", "ddb: {kind: dynamodb, dynamodb: {read_percent: 150}}", "source: {name: ddb, table: T1x}", []string{"sources.ddb.dynamodb.read_percent: 150 is not a share"}},
		{"max_rcu", "ddb: {kind: dynamodb, dynamodb: {max_rcu: -1}}", "source: {name: ddb, table: T1x}", []string{"sources.ddb.dynamodb.max_rcu: -1 is negative"}},
		{"dsn_env", "ddb: {kind: dynamodb, dsn_env: X_DSN}", "source: {name: ddb, table: T1x}", []string{"sources.ddb.dsn_env: not used with kind dynamodb"}},
		{"export on files", "ddb: {kind: dynamodb}\n  in: {kind: files, path: in}", `source: {name: in, files: ["*.csv"], export: s3://b/p/}`, []string{"export applies to a dynamodb source"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			y := head + "  " + tc.src + "\ntables:\n  orders:\n    " + tc.table + "\n"
			p, err := Parse([]byte(y), "platform.yaml")
			if err == nil {
				err = p.Validate()
			}
			if tc.want == nil {
				if err != nil {
					t.Fatalf("valid plan refused: %v\n%s", err, y)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrInvalidPlan) {
				t.Fatalf("plan accepted (%v), want %q\n%s", err, tc.want, y)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("problems %q lack %q", err.Error(), w)
				}
			}
		})
	}
}
