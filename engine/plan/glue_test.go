package plan

import (
	"errors"
	"strings"
	"testing"
	"time"
)

const gluePlan = `schema_version: 1
platform: {prefix: acme, region: eu-central-1, catalog: glue}
storage: {warehouse: "s3://lake-bucket/acme"}
sources:
  landing: {kind: files, path: "s3://in-bucket/landing"}
tables:
  orders:
    source: {name: landing, files: ["orders/*.csv"]}
    engine: glue
    glue:
      role_arn: arn:aws:iam::111122223333:role/lima-glue
      script_location: s3://code-bucket/lima/
      worker_type: G.2X
      workers: 10
      timeout: 90m
      max_retries: 1
`

func TestGluePlanValid(t *testing.T) {
	p, err := Parse([]byte(gluePlan), "platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	o := p.Tables["orders"]
	if o.EngineOf() != EngineGlue || o.Glue.GlueTimeout() != 90*time.Minute || o.Glue.ShardBytes() != 256<<20 {
		t.Fatalf("engine %q timeout %s shard %d", o.EngineOf(), o.Glue.GlueTimeout(), o.Glue.ShardBytes())
	}
	if got := p.GlueJobName("orders"); got != "lima-acme-orders" {
		t.Fatalf("job name %q", got)
	}
	if got := p.GlueTables(); len(got) != 1 || got[0] != "orders" {
		t.Fatalf("glue tables %v", got)
	}
	// Written and read again, the plan keeps the glue: section.
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	q, err := Parse(b, "again.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if *q.Tables["orders"].Glue != *o.Glue || q.Tables["orders"].Engine != EngineGlue {
		t.Fatalf("round trip lost the glue section:\n%s", b)
	}
}

func TestGluePlanErrors(t *testing.T) {
	cases := []struct {
		name, from, to, want string
	}{
		{"no role", "      role_arn: arn:aws:iam::111122223333:role/lima-glue\n", "", "tables.orders.glue.role_arn: required"},
		{"bad role", "role/lima-glue", "user/lima-glue", "is not an IAM role ARN"},
		{"no slash", "s3://code-bucket/lima/", "s3://code-bucket/lima", "end the prefix with /"},
		{"not s3", "s3://code-bucket/lima/", "/tmp/lima/", "is not an S3 prefix"},
		{"worker type", "G.2X", "G2X", `did you mean "G.2X"?`},
		{"workers", "workers: 10", "workers: 1", "2 to 299 workers"},
		{"timeout", "90m", "30s", "1m to 168h"},
		{"timeout minutes", "90m", "90s", "whole minutes"},
		{"timeout text", "90m", "soon", "is not a duration"},
		{"retries", "max_retries: 1", "max_retries: 11", "use 0 to 10"},
		{"engine", "engine: glue", "engine: glu", `did you mean "glue"?`},
		{"local source", "s3://in-bucket/landing", "data/landing", "must be kind files with path s3://"},
		{"local warehouse", `"s3://lake-bucket/acme"`, "lake", "needs storage.warehouse on S3"},
		{"sqlite catalog", "catalog: glue", "catalog: sqlite", "needs platform.catalog glue or s3tables"},
		{"no glue section", "    glue:\n", "    glue_removed:\n", "unknown field"},
		{"glue without engine", "    engine: glue\n", "", "only used with engine: glue"},
		{"incremental", "    engine: glue\n", "    engine: glue\n    load: {mode: incremental, watermark: id}\n", "loads files in mode full"},
		{"history", "    engine: glue\n", "    engine: glue\n    history: true\n", "history table needs the local engine"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := strings.Replace(gluePlan, c.from, c.to, 1)
			if src == gluePlan {
				t.Fatalf("case does not change the plan")
			}
			p, err := Parse([]byte(src), "platform.yaml")
			if err == nil {
				err = p.Validate()
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want an error with %q, got %v", c.want, err)
			}
			if !errors.Is(err, ErrInvalidPlan) {
				t.Fatalf("not ErrInvalidPlan: %v", err)
			}
		})
	}
	// glue: missing entirely.
	src := strings.SplitN(gluePlan, "    glue:\n", 2)[0]
	p, err := Parse([]byte(src), "platform.yaml")
	if err == nil {
		err = p.Validate()
	}
	if err == nil || !strings.Contains(err.Error(), "tables.orders.glue: required with engine: glue") {
		t.Fatalf("no glue section: %v", err)
	}
}
