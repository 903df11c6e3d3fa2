package hivesink

import (
	"context"

	_ "github.com/apache/iceberg-go/io/gocloud/s3" // s3:// warehouses
	"github.com/apache/iceberg-go/utils"

	"github.com/lima-lake/lima/internal/s3x"
)

// s3Context hands iceberg-go's S3 FileIO the AWS configuration of
// internal/s3x — its bounded retryer (AWS_MAX_ATTEMPTS, default
// s3x.DefaultMaxAttempts, with backoff) and named profile — through the
// context, where the FileIO looks first. The IO properties still set the
// endpoint, region and addressing. A caller's own configuration wins.
func s3Context(ctx context.Context, root string) context.Context {
	if !s3x.IsURI(root) || utils.GetAwsConfig(ctx) != nil {
		return ctx
	}
	cfg, err := s3x.FromEnv().AWSConfig(ctx)
	if err != nil {
		return ctx // iceberg-go loads the default configuration itself
	}
	return utils.WithAwsConfig(ctx, &cfg)
}

// s3Props are the FileIO properties of an S3 warehouse: those of the
// environment (s3x.FromEnv: endpoint, region, addressing — the same ones
// icesink uses, so both sinks reach the same server the same way), then
// the caller's for what the environment leaves unset (the plan's region).
func s3Props(root string, given map[string]string) map[string]string {
	if !s3x.IsURI(root) {
		return given
	}
	props := s3x.FromEnv().IcebergProps()
	for k, v := range given {
		if _, ok := props[k]; !ok {
			props[k] = v
		}
	}
	return props
}
