package hivesink

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"

	"github.com/lima-lake/lima/internal/fileuri"
)

// Hive Parquet formats, as Athena and Glue crawlers write them.
const (
	ParquetInputFormat  = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"
	ParquetOutputFormat = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
	ParquetSerDe        = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
)

// GlueAPI is the part of the Glue client Lima uses.
type GlueAPI interface {
	GetDatabase(ctx context.Context, in *glue.GetDatabaseInput, optFns ...func(*glue.Options)) (*glue.GetDatabaseOutput, error)
	CreateDatabase(ctx context.Context, in *glue.CreateDatabaseInput, optFns ...func(*glue.Options)) (*glue.CreateDatabaseOutput, error)
	GetTable(ctx context.Context, in *glue.GetTableInput, optFns ...func(*glue.Options)) (*glue.GetTableOutput, error)
	CreateTable(ctx context.Context, in *glue.CreateTableInput, optFns ...func(*glue.Options)) (*glue.CreateTableOutput, error)
	UpdateTable(ctx context.Context, in *glue.UpdateTableInput, optFns ...func(*glue.Options)) (*glue.UpdateTableOutput, error)
	BatchCreatePartition(ctx context.Context, in *glue.BatchCreatePartitionInput, optFns ...func(*glue.Options)) (*glue.BatchCreatePartitionOutput, error)
}

// GlueConfig says how to reach Glue. Credentials come from the default
// chain (environment, profile, SSO, instance role), never from the plan.
type GlueConfig struct {
	Region string
	// Endpoint overrides the Glue endpoint; empty: GlueEndpoint("").
	Endpoint string
	// CatalogID is the account of the Data Catalog (default: the caller's).
	CatalogID string
}

// GlueEndpoint is the Glue endpoint override: the plan's value, else
// AWS_ENDPOINT_URL_GLUE, else AWS_ENDPOINT_URL; empty means AWS's own.
func GlueEndpoint(planValue string) string {
	for _, v := range []string{planValue, os.Getenv("AWS_ENDPOINT_URL_GLUE"), os.Getenv("AWS_ENDPOINT_URL")} {
		if v != "" {
			return v
		}
	}
	return ""
}

// NewGlueClient builds a Glue client from the default credential chain.
func NewGlueClient(ctx context.Context, c GlueConfig) (*glue.Client, error) {
	var opts []func(*config.LoadOptions) error
	if c.Region != "" {
		opts = append(opts, config.WithRegion(c.Region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	ep := GlueEndpoint(c.Endpoint)
	return glue.NewFromConfig(cfg, func(o *glue.Options) {
		if ep != "" {
			o.BaseEndpoint = aws.String(ep)
		}
	}), nil
}

// GlueRegistrar registers Hive-style tables and partitions in the Glue
// Data Catalog.
type GlueRegistrar struct {
	Client    GlueAPI
	CatalogID string
}

var _ Registrar = (*GlueRegistrar)(nil)

func (g *GlueRegistrar) catalogID() *string {
	if g.CatalogID == "" {
		return nil
	}
	return aws.String(g.CatalogID)
}

func glueColumns(cs []HiveColumn) []types.Column {
	out := make([]types.Column, len(cs))
	for i, c := range cs {
		out[i] = types.Column{Name: aws.String(c.Name), Type: aws.String(c.Type)}
		if c.Comment != "" {
			out[i].Comment = aws.String(c.Comment)
		}
	}
	return out
}

func storage(location string, cols []HiveColumn) *types.StorageDescriptor {
	return &types.StorageDescriptor{
		Columns:      glueColumns(cols),
		Location:     aws.String(location),
		InputFormat:  aws.String(ParquetInputFormat),
		OutputFormat: aws.String(ParquetOutputFormat),
		Compressed:   true,
		SerdeInfo: &types.SerDeInfo{SerializationLibrary: aws.String(ParquetSerDe),
			Parameters: map[string]string{"serialization.format": "1"}},
	}
}

// GlueLocation is the location Glue records: s3:// URIs as they are, a
// local folder (absolute: Open made it so) as an escaped file:// URI.
func GlueLocation(root string) string {
	if strings.Contains(root, "://") {
		return root
	}
	uri, err := fileuri.FromPath(root)
	if err != nil {
		return root // only a relative path whose base is unknown
	}
	return uri
}

func tableInput(def TableDef) *types.TableInput {
	ti := &types.TableInput{
		Name:              aws.String(def.Name),
		TableType:         aws.String("EXTERNAL_TABLE"),
		Parameters:        def.Parameters,
		PartitionKeys:     glueColumns(def.PartitionKeys),
		StorageDescriptor: storage(GlueLocation(def.Location), def.Columns),
	}
	if def.Description != "" {
		ti.Description = aws.String(def.Description)
	}
	return ti
}

// EnsureTable creates the database and the table when missing and updates
// a table whose columns, partition keys or location differ.
func (g *GlueRegistrar) EnsureTable(ctx context.Context, def TableDef) error {
	if _, err := g.Client.GetDatabase(ctx, &glue.GetDatabaseInput{CatalogId: g.catalogID(), Name: aws.String(def.Database)}); err != nil {
		var nf *types.EntityNotFoundException
		if !errors.As(err, &nf) {
			return fmt.Errorf("glue: get database %s: %w", def.Database, err)
		}
		_, err := g.Client.CreateDatabase(ctx, &glue.CreateDatabaseInput{CatalogId: g.catalogID(), DatabaseInput: &types.DatabaseInput{
			Name: aws.String(def.Database), Description: aws.String("created by Lima"), Parameters: map[string]string{"lima.managed": "true"}}})
		var ae *types.AlreadyExistsException
		if err != nil && !errors.As(err, &ae) {
			return fmt.Errorf("glue: create database %s: %w", def.Database, err)
		}
	}
	ti := tableInput(def)
	cur, err := g.Client.GetTable(ctx, &glue.GetTableInput{CatalogId: g.catalogID(), DatabaseName: aws.String(def.Database), Name: aws.String(def.Name)})
	if err != nil {
		var nf *types.EntityNotFoundException
		if !errors.As(err, &nf) {
			return fmt.Errorf("glue: get table %s.%s: %w", def.Database, def.Name, err)
		}
		_, err := g.Client.CreateTable(ctx, &glue.CreateTableInput{CatalogId: g.catalogID(), DatabaseName: aws.String(def.Database), TableInput: ti})
		var ae *types.AlreadyExistsException
		if err == nil || errors.As(err, &ae) {
			return nil
		}
		return fmt.Errorf("glue: create table %s.%s: %w", def.Database, def.Name, err)
	}
	if sameTable(cur.Table, ti) {
		return nil
	}
	if _, err := g.Client.UpdateTable(ctx, &glue.UpdateTableInput{CatalogId: g.catalogID(), DatabaseName: aws.String(def.Database), TableInput: ti,
		VersionId: cur.Table.VersionId}); err != nil {
		return fmt.Errorf("glue: update table %s.%s: %w", def.Database, def.Name, err)
	}
	return nil
}

func colsEqual(a []types.Column, b []types.Column) bool {
	return slices.EqualFunc(a, b, func(x, y types.Column) bool {
		return aws.ToString(x.Name) == aws.ToString(y.Name) && aws.ToString(x.Type) == aws.ToString(y.Type)
	})
}

func sameTable(t *types.Table, ti *types.TableInput) bool {
	if t == nil || t.StorageDescriptor == nil {
		return false
	}
	return colsEqual(t.StorageDescriptor.Columns, ti.StorageDescriptor.Columns) && colsEqual(t.PartitionKeys, ti.PartitionKeys) &&
		aws.ToString(t.StorageDescriptor.Location) == aws.ToString(ti.StorageDescriptor.Location) &&
		aws.ToString(t.StorageDescriptor.InputFormat) == ParquetInputFormat
}

// AddPartitions registers the partitions in batches of 100 (Glue's
// limit); partitions that exist already are fine.
func (g *GlueRegistrar) AddPartitions(ctx context.Context, def TableDef, parts []Partition) error {
	for start := 0; start < len(parts); start += 100 {
		chunk := parts[start:min(start+100, len(parts))]
		in := &glue.BatchCreatePartitionInput{CatalogId: g.catalogID(), DatabaseName: aws.String(def.Database), TableName: aws.String(def.Name)}
		for _, p := range chunk {
			in.PartitionInputList = append(in.PartitionInputList, types.PartitionInput{Values: p.Values, StorageDescriptor: storage(GlueLocation(p.Location), def.Columns)})
		}
		out, err := g.Client.BatchCreatePartition(ctx, in)
		if err != nil {
			return fmt.Errorf("glue: create partitions of %s.%s: %w", def.Database, def.Name, err)
		}
		var errs []string
		for _, e := range out.Errors {
			if e.ErrorDetail != nil && aws.ToString(e.ErrorDetail.ErrorCode) == "AlreadyExistsException" {
				continue
			}
			code, msg := "", ""
			if e.ErrorDetail != nil {
				code, msg = aws.ToString(e.ErrorDetail.ErrorCode), aws.ToString(e.ErrorDetail.ErrorMessage)
			}
			errs = append(errs, fmt.Sprintf("%v: %s %s", e.PartitionValues, code, msg))
		}
		if len(errs) > 0 {
			return fmt.Errorf("glue: %d partition(s) of %s.%s not created: %s", len(errs), def.Database, def.Name, strings.Join(errs, "; "))
		}
	}
	return nil
}
