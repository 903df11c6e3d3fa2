package icesink

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	gluecat "github.com/apache/iceberg-go/catalog/glue"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/lima-lake/lima/internal/fileuri"
)

// OpenCatalog opens the sink on an iceberg-go catalog that is not the
// embedded SQL one (Glue, REST). Closing the sink does not close cat.
func OpenCatalog(ctx context.Context, o Options, cat catalog.Catalog) (*Sink, error) {
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 6
	}
	if o.BaseBackoff <= 0 {
		o.BaseBackoff = 50 * time.Millisecond
	}
	if o.TargetFileSize <= 0 {
		o.TargetFileSize = 128 << 20
	}
	if cat == nil {
		return nil, fmt.Errorf("icesink: no catalog")
	}
	return &Sink{opts: o, cat: cat}, nil
}

// AWSOptions say how to reach the AWS catalogs. Credentials never appear
// here: they come from the AWS default chain (environment, profile, SSO,
// instance or task role).
type AWSOptions struct {
	Region string
	// GlueEndpoint overrides the Glue endpoint; empty: AWS_ENDPOINT_URL_GLUE,
	// then AWS_ENDPOINT_URL.
	GlueEndpoint string
	// S3Endpoint overrides the S3 endpoint; empty: AWS_ENDPOINT_URL_S3,
	// then AWS_ENDPOINT_URL.
	S3Endpoint string
	// CatalogID is the Glue Data Catalog's account (default: the caller's).
	CatalogID string
	// Warehouse is where new tables go: s3://bucket/prefix or a local folder.
	Warehouse string
	// IOProps are added to the catalog properties (s3.* settings).
	IOProps map[string]string
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// GlueProperties are the iceberg-go properties of a Glue catalog. iceberg-go
// hands the Glue client's AWS configuration to its S3 file IO, so an
// overridden Glue endpoint would also receive the S3 calls: whenever
// either endpoint is overridden, both glue.endpoint and s3.endpoint are
// set, the missing one to AWS's regional endpoint.
func GlueProperties(a AWSOptions) (iceberg.Properties, error) {
	props := iceberg.Properties{}
	for k, v := range a.IOProps {
		props[k] = v
	}
	if a.Region != "" {
		props[gluecat.Region] = a.Region
		props[icebergio.S3Region] = a.Region
	}
	if a.CatalogID != "" {
		props[gluecat.CatalogIdKey] = a.CatalogID
	}
	wh, err := warehouseURI(a.Warehouse)
	if err != nil {
		return nil, err
	}
	if wh != "" {
		props["warehouse"] = wh
	}
	glueEP := firstNonEmpty(a.GlueEndpoint, os.Getenv("AWS_ENDPOINT_URL_GLUE"), os.Getenv("AWS_ENDPOINT_URL"))
	s3EP := firstNonEmpty(a.S3Endpoint, props[icebergio.S3EndpointURL], os.Getenv("AWS_ENDPOINT_URL_S3"), os.Getenv("AWS_ENDPOINT_URL"))
	if glueEP != "" || s3EP != "" {
		if a.Region == "" && (glueEP == "" || s3EP == "") {
			return nil, fmt.Errorf("icesink: an endpoint is overridden, so the other one must be set too, and without a region Lima cannot name AWS's own; set platform.region")
		}
		if glueEP == "" {
			glueEP = "https://glue." + a.Region + ".amazonaws.com"
		}
		if s3EP == "" {
			s3EP = "https://s3." + a.Region + ".amazonaws.com"
		}
		props[gluecat.Endpoint] = glueEP
		props[icebergio.S3EndpointURL] = s3EP
	}
	return props, nil
}

func warehouseURI(w string) (string, error) {
	if w == "" || strings.Contains(w, "://") {
		return w, nil
	}
	abs, err := filepath.Abs(w)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", fmt.Errorf("warehouse: %w", err)
	}
	return fileuri.FromPath(abs)
}

// OpenGlue opens the sink on iceberg-go's Glue catalog: tables Athena,
// Redshift Spectrum and Trino read with their snapshots.
func OpenGlue(ctx context.Context, o Options, a AWSOptions) (*Sink, error) {
	props, err := GlueProperties(a)
	if err != nil {
		return nil, err
	}
	var lo []func(*config.LoadOptions) error
	if a.Region != "" {
		lo = append(lo, config.WithRegion(a.Region))
	}
	if ep := props[gluecat.Endpoint]; ep != "" {
		lo = append(lo, config.WithBaseEndpoint(ep))
	}
	cfg, err := config.LoadDefaultConfig(ctx, lo...)
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	cat, err := gluecat.NewCatalog(gluecat.WithAwsConfig(cfg), gluecat.WithAwsProperties(gluecat.AwsProperties(props)))
	if err != nil {
		return nil, fmt.Errorf("glue catalog: %w", err)
	}
	if o.Warehouse == "" {
		o.Warehouse = props["warehouse"]
	}
	return OpenCatalog(ctx, o, cat)
}
