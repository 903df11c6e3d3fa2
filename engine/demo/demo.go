// Package demo bundles a small dirty ERP sample and the plan a workshop
// would end with, so `lima-tui demo` can build a lake with no setup.
package demo

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/lima-lake/lima/engine/plan"
)

//go:embed data platform.yaml
var bundle embed.FS

// DemoApprover is who the recorded demo answers are attributed to.
const DemoApprover = "lima demo (recorded answers)"

// Plan returns the demo plan.
func Plan() (*plan.Plan, error) {
	b, err := bundle.ReadFile("platform.yaml")
	if err != nil {
		return nil, err
	}
	return plan.Parse(b, "platform.yaml")
}

// Create lays out a demo workspace in dir: the sample data under data/ and
// platform.yaml with the demo answers approved. Existing files are left as
// they are (so a second `demo` run finds the same input and the same plan);
// it returns whether a new plan was written.
func Create(dir string, now time.Time) (bool, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	err := fs.WalkDir(bundle, "data", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(path))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if _, err := os.Stat(target); err == nil {
			return nil
		}
		b, err := bundle.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		return false, fmt.Errorf("demo data: %w", err)
	}
	pp := filepath.Join(dir, "platform.yaml")
	if _, err := os.Stat(pp); err == nil {
		return false, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	p, err := Plan()
	if err != nil {
		return false, err
	}
	ts := now.UTC().Format(time.RFC3339)
	p.Platform.Created, p.Platform.Updated = ts, ts
	p.Gates.Scope = &plan.Approval{ApprovedBy: DemoApprover, ApprovedAt: ts, PlanHash: p.Hash()}
	p.Gates.DataModel = &plan.Approval{ApprovedBy: DemoApprover, ApprovedAt: ts, PlanHash: p.Hash()}
	return true, p.Write(pp)
}
