package plan

import (
	"slices"
	"testing"
)

func TestValidateAWSCatalogs(t *testing.T) {
	const arn = "arn:aws:s3tables:eu-central-1:111122223333:bucket/sales-lake"
	cases := []struct {
		name   string
		mutate func(p *Plan)
		want   []string
	}{
		{"s3tables with an ARN", func(p *Plan) { p.Platform.Catalog = CatalogS3Tables; p.Storage.TableBucketARN = arn }, nil},
		{"s3tables without an ARN", func(p *Plan) { p.Platform.Catalog = CatalogS3Tables },
			[]string{"storage.table_bucket_arn: required for catalog s3tables: the table bucket's ARN, e.g. arn:aws:s3tables:eu-central-1:111122223333:bucket/sales-lake"}},
		{"s3tables bucket name upper case", func(p *Plan) {
			p.Platform.Catalog = CatalogS3Tables
			p.Storage.TableBucketARN = "arn:aws:s3tables:eu-central-1:111122223333:bucket/Sales"
		}, []string{`storage.table_bucket_arn: "arn:aws:s3tables:eu-central-1:111122223333:bucket/Sales" is not a table bucket ARN; write arn:aws:s3tables:REGION:ACCOUNT:bucket/NAME (lower-case name)`}},
		{"s3tables with hive", func(p *Plan) {
			p.Platform.Catalog, p.Platform.Pattern, p.Storage.TableBucketARN = CatalogS3Tables, PatternHive, arn
			p.Tables["inspections"].Partition = nil
		}, []string{"platform.pattern: S3 Tables holds Iceberg tables only; use pattern iceberg, or catalog glue for Hive-style Parquet"}},
		{"ARN without s3tables", func(p *Plan) { p.Storage.TableBucketARN = arn }, []string{"storage.table_bucket_arn: only used with catalog s3tables"}},
		{"hive on glue", func(p *Plan) {
			p.Platform.Catalog, p.Platform.Pattern = CatalogGlue, PatternHive
			p.Tables["inspections"].Partition = []string{"month(inspected_at)", "truncate(2, site_code)"}
		}, nil},
		{"hive with bucket", func(p *Plan) { p.Platform.Pattern = PatternHive },
			[]string{"tables.inspections.partition[1]: bucket(8, site_code): Hive-style tables cannot be partitioned by bucket (it needs Iceberg's hash); partition by the column, a time unit or truncate(W, col), or use pattern iceberg"}},
		{"glue endpoint", func(p *Plan) { p.Platform.Catalog, p.Storage.GlueEndpoint = CatalogGlue, "http://127.0.0.1:4566" }, nil},
		{"glue endpoint with credentials", func(p *Plan) {
			p.Platform.Catalog, p.Storage.GlueEndpoint = CatalogGlue, "https://AKID:secret@glue.example"
		},
			[]string{"storage.glue_endpoint: carries credentials; secrets never go into platform.yaml: use the AWS credential chain (environment, profile, role)"}},
		{"glue endpoint without glue", func(p *Plan) { p.Storage.GlueEndpoint = "http://127.0.0.1:4566" },
			[]string{"storage.glue_endpoint: only used with catalog glue"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := loadFixture(t)
			c.mutate(p)
			got := problems(t, p.Validate())
			if !slices.Equal(got, c.want) {
				t.Fatalf("got  %q\nwant %q", got, c.want)
			}
		})
	}
	if !S3TablesName("sales_2026") || S3TablesName("Sales") || S3TablesName("_x") || S3TablesName("") {
		t.Fatal("S3TablesName")
	}
	if r := TableBucketRegion(arn); r != "eu-central-1" {
		t.Fatalf("region %q", r)
	}
}
