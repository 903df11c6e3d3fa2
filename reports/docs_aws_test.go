package reports_test

import (
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/reports"
)

// TestWriteDocsDescribeTheAWSLayouts: the generated README and
// ARCHITECTURE describe the pattern and catalog of the plan — the hive
// commit (staging, manifest, load id), Glue registration, S3 Tables — and
// never claim that hive has no atomic commit.
func TestWriteDocsDescribeTheAWSLayouts(t *testing.T) {
	cases := []struct {
		pattern, catalog string
		want, not        []string
	}{
		{plan.PatternHive, plan.CatalogSQLite,
			[]string{"_staging/", "_lima/commits/", "load id", "no catalog (Hive-style folders"},
			[]string{"no atomic commit", "BatchCreatePartition", "embedded SQLite"}},
		{plan.PatternHive, plan.CatalogGlue,
			[]string{"_lima/commits/", "AWS Glue Data Catalog", "BatchCreatePartition"},
			[]string{"no atomic commit"}},
		{plan.PatternIceberg, plan.CatalogS3Tables,
			[]string{"Amazon S3 Tables", "SigV4", "one atomic snapshot per table per run"},
			[]string{"_lima/commits/", "BatchCreatePartition", "embedded SQLite"}},
		{plan.PatternIceberg, plan.CatalogSQLite,
			[]string{"one atomic snapshot per table per run", "embedded SQLite"},
			[]string{"_lima/commits/", "S3 Tables", "SigV4"}},
	}
	for _, c := range cases {
		t.Run(c.pattern+"/"+c.catalog, func(t *testing.T) {
			dir := t.TempDir()
			p := shopPlan()
			p.Platform.Pattern, p.Platform.Catalog = c.pattern, c.catalog
			if err := reports.WriteDocs(dir, p, shopReport("r1", 5, 3), ordersLake); err != nil {
				t.Fatal(err)
			}
			readme, arch := readDocs(t, dir)
			both := readme + arch
			for _, w := range c.want {
				if !strings.Contains(both, w) {
					t.Errorf("the docs lack %q", w)
				}
			}
			for _, n := range c.not {
				if strings.Contains(both, n) {
					t.Errorf("the docs say %q", n)
				}
			}
		})
	}
}
