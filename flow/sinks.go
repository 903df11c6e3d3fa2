package flow

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/sink/hivesink"
	"github.com/lima-lake/lima/engine/sink/icesink"
	"github.com/lima-lake/lima/internal/fsx"
)

// OpenPlanSink opens the sink the plan names: pattern hive writes
// Hive-style Parquet (registered in the Glue Data Catalog with catalog
// glue); pattern iceberg writes Iceberg tables through the embedded SQLite
// catalog (default), AWS Glue (catalog glue) or S3 Tables (catalog
// s3tables). tweak adjusts the Iceberg sink's options (tests).
func OpenPlanSink(ctx context.Context, ws Workspace, p *plan.Plan, tweak func(*icesink.Options)) (sink.Sink, error) {
	if p.Pattern() == plan.PatternHive {
		o := hivesink.Options{Warehouse: ws.Warehouse(p), IOProps: awsIOProps(p)}
		if p.Catalog() == plan.CatalogGlue {
			client, err := hivesink.NewGlueClient(ctx, hivesink.GlueConfig{Region: p.Platform.Region, Endpoint: p.Storage.GlueEndpoint})
			if err != nil {
				return nil, err
			}
			o.Registrar = &hivesink.GlueRegistrar{Client: client}
		}
		return hivesink.Open(ctx, o)
	}
	switch p.Catalog() {
	case plan.CatalogGlue, plan.CatalogS3Tables:
		if err := fsx.MkdirPrivate(ws.StateDir()); err != nil {
			return nil, err
		}
		o := icesink.Options{Warehouse: ws.Warehouse(p)}
		if tweak != nil {
			tweak(&o)
		}
		if p.Catalog() == plan.CatalogS3Tables {
			return icesink.OpenS3Tables(ctx, o, icesink.S3TablesOf(p))
		}
		return icesink.OpenGlue(ctx, o, icesink.AWSOptions{Region: p.Platform.Region, GlueEndpoint: p.Storage.GlueEndpoint,
			Warehouse: ws.Warehouse(p), IOProps: awsIOProps(p)})
	}
	return OpenSink(ctx, ws, p, tweak)
}

// awsIOProps are the file IO settings of an AWS lake: the region and an
// S3 endpoint override from the environment (credentials never: the AWS
// default chain supplies them).
func awsIOProps(p *plan.Plan) map[string]string {
	props := map[string]string{}
	if p.Platform.Region != "" && p.Platform.Region != "local" {
		props["s3.region"] = p.Platform.Region
	}
	for _, k := range []string{"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"} {
		if v := os.Getenv(k); v != "" {
			props["s3.endpoint"] = v
			break
		}
	}
	return props
}

// hasLoad reports whether the table holds a commit carrying loadID,
// whatever the sink.
func hasLoad(ctx context.Context, sk sink.Sink, namespace, name, loadID string) (bool, error) {
	switch s := sk.(type) {
	case interface {
		HasLoad(ctx context.Context, namespace, name, loadID string) (bool, error)
	}:
		return s.HasLoad(ctx, namespace, name, loadID)
	case *icesink.Sink:
		tbl, err := s.Catalog().LoadTable(ctx, table.Identifier{namespace, name})
		switch {
		case errors.Is(err, catalog.ErrNoSuchTable):
			return false, nil
		case err != nil:
			return false, err
		}
		for _, snap := range tbl.Metadata().Snapshots() {
			if snap.Summary != nil && snap.Summary.Properties[sink.PropLoadID] == loadID {
				return true, nil
			}
		}
		// Expired by lima-tui maintain: carried forward in the table.
		r, err := sink.ParseRetired(tbl.Properties()[sink.PropRetired])
		if err != nil {
			return false, err
		}
		_, ok := r.Commit(loadID)
		return ok, nil
	}
	return false, fmt.Errorf("the sink %T cannot look up a load", sk)
}
