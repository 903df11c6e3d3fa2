package icesink

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/lima-lake/lima/engine/plan"
)

// S3Tables says how to reach an S3 Tables table bucket through its Iceberg
// REST endpoint. Credentials come from the AWS default chain.
type S3Tables struct {
	Region string
	// TableBucketARN is the warehouse: arn:aws:s3tables:REGION:ACCOUNT:bucket/NAME.
	TableBucketARN string
	// Endpoint overrides the REST endpoint (default
	// https://s3tables.REGION.amazonaws.com/iceberg).
	Endpoint string
}

// S3TablesSigningName is the SigV4 service name of S3 Tables.
const S3TablesSigningName = "s3tables"

// URI is the REST endpoint.
func (s S3Tables) URI() string {
	if s.Endpoint != "" {
		return strings.TrimRight(s.Endpoint, "/")
	}
	return "https://s3tables." + s.Region + ".amazonaws.com/iceberg"
}

// Properties are the iceberg-go REST catalog properties: SigV4 signing as
// s3tables in the region, the table bucket as the warehouse. No location
// is ever set: S3 Tables places the tables itself.
func (s S3Tables) Properties() (iceberg.Properties, error) {
	if s.Region == "" {
		return nil, fmt.Errorf("s3tables: no region (set platform.region)")
	}
	if !strings.HasPrefix(s.TableBucketARN, "arn:") || !strings.Contains(s.TableBucketARN, ":s3tables:") {
		return nil, fmt.Errorf("s3tables: %q is not a table bucket ARN", s.TableBucketARN)
	}
	return iceberg.Properties{
		"type":                "rest",
		"uri":                 s.URI(),
		"warehouse":           s.TableBucketARN,
		"rest.sigv4-enabled":  "true",
		"rest.signing-name":   S3TablesSigningName,
		"rest.signing-region": s.Region,
	}, nil
}

// OpenS3Tables opens the sink on S3 Tables through iceberg-go's REST
// catalog with SigV4. Opening asks the endpoint for its configuration, so
// an unreachable endpoint or refused credentials fail here.
func OpenS3Tables(ctx context.Context, o Options, s S3Tables) (*Sink, error) {
	props, err := s.Properties()
	if err != nil {
		return nil, err
	}
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion(s.Region))
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	cat, err := rest.NewCatalog(ctx, "s3tables", props["uri"],
		rest.WithSigV4RegionSvc(props["rest.signing-region"], props["rest.signing-name"]),
		rest.WithWarehouseLocation(props["warehouse"]),
		rest.WithAwsConfig(cfg))
	if err != nil {
		return nil, fmt.Errorf("s3tables catalog %s: %w", props["uri"], err)
	}
	return OpenCatalog(ctx, o, cat)
}

// S3TablesOf is the S3 Tables setting of a plan: the table bucket ARN, its
// region (else platform.region), and the endpoint override from
// storage.catalog_uri or AWS_ENDPOINT_URL_S3TABLES.
func S3TablesOf(p *plan.Plan) S3Tables {
	s := S3Tables{Region: plan.TableBucketRegion(p.Storage.TableBucketARN), TableBucketARN: p.Storage.TableBucketARN, Endpoint: p.Storage.CatalogURI}
	if s.Region == "" {
		s.Region = p.Platform.Region
	}
	if s.Endpoint == "" {
		s.Endpoint = os.Getenv("AWS_ENDPOINT_URL_S3TABLES")
	}
	return s
}
