package plan

import (
	"regexp"
	"strings"
)

// CatalogS3Tables is Amazon S3 Tables, reached through its Iceberg REST
// endpoint with SigV4.
const CatalogS3Tables = "s3tables"

var (
	tableBucketARNRE = regexp.MustCompile(`^arn:aws[a-z-]*:s3tables:[a-z0-9-]+:[0-9]{12}:bucket/[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$`)
	// S3 Tables names: lower-case letters, digits and _, starting with a
	// letter or digit, at most 255 characters.
	s3TablesNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_]{0,254}$`)
)

// S3TablesName reports whether s is a valid S3 Tables namespace or table
// name (lower case only).
func S3TablesName(s string) bool { return s3TablesNameRE.MatchString(s) }

// TableBucketRegion is the region of a table bucket ARN ("" if not an ARN).
func TableBucketRegion(arn string) string {
	parts := strings.Split(arn, ":")
	if len(parts) < 6 {
		return ""
	}
	return parts[3]
}

// awsCatalog checks the settings of the AWS catalogs: S3 Tables needs a
// table bucket ARN and Iceberg tables; Hive-style tables register in Glue
// or nowhere; endpoints are URLs without credentials.
func (v *validator) awsCatalog() {
	p := v.p
	st := p.Storage
	switch p.Platform.Catalog {
	case CatalogS3Tables:
		switch {
		case st.TableBucketARN == "":
			v.add("storage.table_bucket_arn", "required for catalog s3tables: the table bucket's ARN, e.g. arn:aws:s3tables:eu-central-1:111122223333:bucket/sales-lake")
		case !tableBucketARNRE.MatchString(st.TableBucketARN):
			v.add("storage.table_bucket_arn", "%q is not a table bucket ARN; write arn:aws:s3tables:REGION:ACCOUNT:bucket/NAME (lower-case name)", st.TableBucketARN)
		}
		if p.Platform.Pattern == PatternHive {
			v.add("platform.pattern", "S3 Tables holds Iceberg tables only; use pattern iceberg, or catalog glue for Hive-style Parquet")
		}
	case CatalogREST:
		if p.Platform.Pattern == PatternHive {
			v.add("platform.pattern", "an Iceberg REST catalog holds Iceberg tables only; use pattern iceberg, or catalog glue (or sqlite: no catalog) for Hive-style Parquet")
		}
	}
	if p.Platform.Pattern == PatternHive {
		// Hive folders carry the value (or its year/month/day/hour, or a
		// truncation) in the path; bucket numbers need Iceberg's hash.
		for _, name := range p.TableNames() {
			t := p.Tables[name]
			if t == nil {
				continue
			}
			for i, s := range t.Partition {
				if f, err := ParsePartition(s); err == nil && f.Transform == TransformBucket {
					v.add(joinIndex(joinKey(joinKey("tables", name), "partition"), i), "%s: Hive-style tables cannot be partitioned by bucket (it needs Iceberg's hash); partition by the column, a time unit or truncate(W, col), or use pattern iceberg", f)
				}
			}
		}
	}
	if st.TableBucketARN != "" && p.Platform.Catalog != CatalogS3Tables {
		v.add("storage.table_bucket_arn", "only used with catalog s3tables")
	}
	if e := st.GlueEndpoint; e != "" {
		switch {
		case !strings.HasPrefix(e, "http://") && !strings.HasPrefix(e, "https://"):
			v.add("storage.glue_endpoint", "%q is not an http(s) URL", e)
		case strings.Contains(strings.SplitN(strings.SplitN(e, "://", 2)[1], "/", 2)[0], "@"):
			v.add("storage.glue_endpoint", "carries credentials; secrets never go into platform.yaml: use the AWS credential chain (environment, profile, role)")
		}
		if p.Platform.Catalog != CatalogGlue {
			v.add("storage.glue_endpoint", "only used with catalog glue")
		}
	}
}
