package flow

import (
	"context"
	"fmt"
	"time"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink/rawland"
	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/internal/s3x"
)

// RawTarget is the warehouse as a raw/ landing target: its folder, or its
// S3 bucket and prefix with a client configured from the environment.
func RawTarget(ctx context.Context, ws Workspace, p *plan.Plan) (rawland.Target, error) {
	wh := ws.Warehouse(p)
	if !s3x.IsURI(wh) {
		if hasScheme(wh) {
			return rawland.Target{}, fmt.Errorf("raw/: warehouse %s: only folders and s3:// are supported", wh)
		}
		return rawland.Target{Dir: wh}, nil
	}
	u, err := s3x.ParseURI(wh)
	if err != nil {
		return rawland.Target{}, err
	}
	cl, err := s3x.New(ctx, s3x.FromEnv())
	if err != nil {
		return rawland.Target{}, err
	}
	return rawland.Target{S3: u, Client: cl}, nil
}

// rawLander is the run's Land hook when the plan lands raw/ files
// (plan.RawEnabled), nil otherwise. The load date is the run's start (UTC).
func rawLander(ctx context.Context, ws Workspace, p *plan.Plan, started time.Time) (func(ctx context.Context, table, loadID string, src source.Source, units []source.Unit) error, error) {
	if !p.RawEnabled() {
		return nil, nil
	}
	tgt, err := RawTarget(ctx, ws, p)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, table, loadID string, src source.Source, units []source.Unit) error {
		t := p.Tables[table]
		if t == nil || t.Source == nil {
			return nil
		}
		_, err := tgt.Land(ctx, src, t.Source.Name, table, loadID, started, units)
		return err
	}, nil
}

// rawExtractLander is the run's LandExtract hook when the plan lands raw/
// (plan.RawEnabled): a database table's extract lands as
// raw/<source>/<table>/load_date=…/<load-id>/extract.csv.gz with its
// manifest. The load date is the run's start (UTC).
func rawExtractLander(ctx context.Context, ws Workspace, p *plan.Plan, started time.Time) (func(ctx context.Context, table, loadID, path string, ex rawland.Extract) error, error) {
	if !p.RawEnabled() {
		return nil, nil
	}
	tgt, err := RawTarget(ctx, ws, p)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, table, loadID, path string, ex rawland.Extract) error {
		t := p.Tables[table]
		if t == nil || t.Source == nil {
			return nil
		}
		_, err := tgt.LandExtract(ctx, t.Source.Name, table, loadID, started, path, ex)
		return err
	}, nil
}
