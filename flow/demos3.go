package flow

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/lima-lake/lima/engine/demo"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/internal/s3x"
)

// CreateDemoS3 builds the demo workspace in dir with its sample files
// uploaded below root (s3://bucket/prefix/data/erp/) and its warehouse on S3
// (root/lake), raw/ landing on. The bucket is created when missing. The
// recorded demo answers are re-recorded for the changed plan. It returns
// false when the workspace already existed (its plan is kept; the files are
// uploaded again, byte for byte the same).
func CreateDemoS3(ctx context.Context, dir, root string, now time.Time) (bool, error) {
	u, err := s3x.ParseURI(root)
	if err != nil {
		return false, err
	}
	created, err := demo.Create(dir, now)
	if err != nil {
		return false, err
	}
	cl, err := s3x.New(ctx, s3x.FromEnv())
	if err != nil {
		return false, err
	}
	if ok, err := cl.BucketExists(ctx, u.Bucket); err != nil {
		return false, err
	} else if !ok {
		if err := cl.CreateBucket(ctx, u.Bucket); err != nil {
			return false, err
		}
	}
	data := filepath.Join(dir, "data", "erp")
	ents, err := os.ReadDir(data)
	if err != nil {
		return false, err
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		f, err := os.Open(filepath.Join(data, e.Name()))
		if err != nil {
			return false, err
		}
		key := u.Join("data", "erp", e.Name())
		err = cl.Put(ctx, key.Bucket, key.Key, f, nil)
		f.Close()
		if err != nil {
			return false, fmt.Errorf("upload the demo files: %w", err)
		}
	}
	if !created {
		return false, nil
	}
	pp := filepath.Join(dir, "platform.yaml")
	p, err := plan.Load(pp)
	if err != nil {
		return false, err
	}
	p.Sources["erp"].Path = u.Join("data", "erp").String()
	p.Storage.Warehouse = u.Join("lake").String()
	on := true
	p.Storage.Raw = &on
	ts := now.UTC().Format(time.RFC3339)
	p.Gates.Scope = &plan.Approval{ApprovedBy: demo.DemoApprover, ApprovedAt: ts, PlanHash: p.Hash()}
	p.Gates.DataModel = &plan.Approval{ApprovedBy: demo.DemoApprover, ApprovedAt: ts, PlanHash: p.Hash()}
	return true, p.Write(pp)
}
