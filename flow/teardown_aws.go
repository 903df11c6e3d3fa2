package flow

// Gate 5 on AWS: the S3 warehouse (objects listed and deleted in batches
// through internal/s3x) and the Glue Data Catalog of Hive-style tables.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	gluetypes "github.com/aws/aws-sdk-go-v2/service/glue/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink/hivesink"
	"github.com/lima-lake/lima/engine/sink/icesink"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/internal/fileuri"
	"github.com/lima-lake/lima/internal/s3x"
)

// s3Objects is gates.TeardownObjects over an s3x client.
type s3Objects struct{ c *s3x.Client }

func (o s3Objects) List(ctx context.Context, bucket, prefix string) ([]gates.StoreObject, error) {
	objs, err := o.c.List(ctx, bucket, prefix)
	if err != nil {
		return nil, err
	}
	out := make([]gates.StoreObject, len(objs))
	for i, ob := range objs {
		out[i] = gates.StoreObject{Key: ob.Key, Size: ob.Size}
	}
	return out, nil
}

func (o s3Objects) DeleteObjects(ctx context.Context, bucket string, keys []string) error {
	ids := make([]s3types.ObjectIdentifier, len(keys))
	for i, k := range keys {
		ids[i] = s3types.ObjectIdentifier{Key: aws.String(k)}
	}
	out, err := o.c.S3.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(bucket), Delete: &s3types.Delete{Objects: ids, Quiet: aws.Bool(true)}})
	if err != nil {
		return fmt.Errorf("s3: delete %d object(s) of %s: %w", len(keys), bucket, err)
	}
	if len(out.Errors) > 0 {
		var msgs []string
		for _, e := range out.Errors {
			msgs = append(msgs, aws.ToString(e.Key)+": "+aws.ToString(e.Code)+" "+aws.ToString(e.Message))
		}
		return fmt.Errorf("s3: %d object(s) of %s not deleted: %s", len(out.Errors), bucket, strings.Join(msgs, "; "))
	}
	return nil
}

// glueTeardown is gates.TeardownGlue over a Glue client.
type glueTeardown struct {
	c *glue.Client
}

func (g glueTeardown) Database(ctx context.Context, name string) (bool, bool, error) {
	out, err := g.c.GetDatabase(ctx, &glue.GetDatabaseInput{Name: aws.String(name)})
	var nf *gluetypes.EntityNotFoundException
	switch {
	case errors.As(err, &nf):
		return false, false, nil
	case err != nil:
		return false, false, err
	}
	return true, out.Database != nil && out.Database.Parameters["lima.managed"] == "true", nil
}

func (g glueTeardown) Tables(ctx context.Context, db string) ([]gates.GlueTable, error) {
	var out []gates.GlueTable
	p := glue.NewGetTablesPaginator(g.c, &glue.GetTablesInput{DatabaseName: aws.String(db)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, t := range page.TableList {
			gt := gates.GlueTable{Name: aws.ToString(t.Name), Managed: t.Parameters["lima.managed"] == "true"}
			if t.StorageDescriptor != nil {
				gt.Location = aws.ToString(t.StorageDescriptor.Location)
			}
			n, err := g.partitions(ctx, db, gt.Name)
			if err != nil {
				return nil, err
			}
			gt.Partitions = n
			out = append(out, gt)
		}
	}
	return out, nil
}

func (g glueTeardown) partitions(ctx context.Context, db, table string) (int, error) {
	n := 0
	p := glue.NewGetPartitionsPaginator(g.c, &glue.GetPartitionsInput{DatabaseName: aws.String(db), TableName: aws.String(table)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return 0, err
		}
		n += len(page.Partitions)
	}
	return n, nil
}

func (g glueTeardown) DeleteTable(ctx context.Context, db, name string) error {
	_, err := g.c.DeleteTable(ctx, &glue.DeleteTableInput{DatabaseName: aws.String(db), Name: aws.String(name)})
	var nf *gluetypes.EntityNotFoundException
	if errors.As(err, &nf) {
		return nil
	}
	return err
}

func (g glueTeardown) DeleteDatabase(ctx context.Context, db string) error {
	_, err := g.c.DeleteDatabase(ctx, &glue.DeleteDatabaseInput{Name: aws.String(db)})
	var nf *gluetypes.EntityNotFoundException
	if errors.As(err, &nf) {
		return nil
	}
	return err
}

// awsTeardownScope adds the AWS parts of the plan to the scope: the
// Hive layout, its Glue catalog and an S3 warehouse. It reports whether
// the catalog is handled here (so the SQLite-only refusal does not apply).
func awsTeardownScope(ctx context.Context, p *plan.Plan, s *gates.TeardownScope) bool {
	handled := false
	if p.Pattern() == plan.PatternHive {
		s.Layout = gates.LayoutHive
		switch p.Catalog() {
		case plan.CatalogGlue:
			handled = true
			s.CatalogKind = "glue"
			c, err := hivesink.NewGlueClient(ctx, hivesink.GlueConfig{Region: p.Platform.Region, Endpoint: p.Storage.GlueEndpoint})
			if err != nil {
				s.CatalogErr = err
			} else {
				s.Glue = glueTeardown{c: c}
			}
		case plan.CatalogSQLite:
			s.CatalogKind = "none (Hive-style folders)"
		}
	}
	if p.Pattern() != plan.PatternHive && p.Catalog() == plan.CatalogGlue {
		// Iceberg tables in Glue: iceberg-go's Glue catalog, opened as icesink
		// opens it (the warehouse as a URI, so no folder is created).
		handled = true
		s.CatalogKind = "glue"
		wh := s.Warehouse
		if !hasScheme(wh) {
			if uri, err := fileuri.FromPath(wh); err == nil {
				wh = uri
			}
		}
		sk, err := icesink.OpenGlue(ctx, icesink.Options{Warehouse: wh}, icesink.AWSOptions{Region: p.Platform.Region, GlueEndpoint: p.Storage.GlueEndpoint,
			Warehouse: wh, IOProps: awsIOProps(p)})
		if err != nil {
			s.CatalogErr = err
		} else {
			s.Catalog = sk.Catalog()
		}
	}
	if s3x.IsURI(s.Warehouse) {
		cfg := s3x.FromEnv()
		if cfg.Region == "" && p.Platform.Region != "" && p.Platform.Region != "local" {
			cfg.Region = p.Platform.Region
		}
		c, err := s3x.New(ctx, cfg)
		if err != nil {
			s.ObjectsErr = err
		} else {
			s.Objects = s3Objects{c: c}
		}
	}
	return handled
}
