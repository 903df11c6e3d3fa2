package migrate_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lima-lake/lima/engine/migrate"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/sink/hivesink"
	"github.com/lima-lake/lima/engine/sink/icesink"
)

// TestMigrateLimaHiveOutput: a table Lima wrote with pattern hive
// (load_date=…/site=… folders, _lima/ manifests skipped) is a folder
// source: rewritten, its rows per site and load date are what was loaded.
func TestMigrateLimaHiveOutput(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	day := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	hs, err := hivesink.Open(ctx, hivesink.Options{Warehouse: filepath.Join(dir, "hive"), Now: func() time.Time { return day }})
	if err != nil {
		t.Fatal(err)
	}
	spec := sink.TableSpec{Name: "visits", Namespace: "lake",
		Columns:   []plan.Column{{Name: "id", Type: "long"}, {Name: "site", Type: "string"}, {Name: "cost", Type: "decimal(10,2)"}},
		Types:     []plan.Type{{Kind: plan.Long}, {Kind: plan.String}, {Kind: plan.Decimal, Precision: 10, Scale: 2}},
		Required:  []bool{false, false, false},
		Partition: []plan.PartitionField{{Column: "site", Transform: plan.TransformIdentity}},
	}
	tbl, err := hs.OpenTable(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	sc := tbl.Schema()
	batches := func(yield func(arrow.RecordBatch, error) bool) {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		defer b.Release()
		for i := int64(1); i <= 300; i++ {
			site := []string{"a", "b", "c"}[i%3]
			want["load_date=2026-11-30/site="+site]++
			b.Field(0).(*array.Int64Builder).Append(i)
			b.Field(1).(*array.StringBuilder).Append(site)
			b.Field(2).AppendNull()
		}
		yield(b.NewRecordBatch(), nil)
	}
	st, err := tbl.Stage(ctx, batches)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Commit(ctx, st, sink.CommitProps{LoadID: "l1"}); err != nil {
		t.Fatal(err)
	}
	src, err := migrate.FromFolder(ctx, filepath.Join(dir, "hive", "lake", "visits"))
	if err != nil {
		t.Fatal(err)
	}
	files, fp, err := src.Files(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l, err := migrate.Resolve(ctx, src, files)
	if err != nil {
		t.Fatal(err)
	}
	sk, err := icesink.Open(ctx, icesink.Options{CatalogPath: filepath.Join(dir, ".lima", "catalog.db"), Warehouse: filepath.Join(dir, "lake")})
	if err != nil {
		t.Fatal(err)
	}
	defer sk.Close()
	b, err := migrate.BuildRewrite(ctx, src, l, files, migrate.Target{Sink: sk, Namespace: "migrated", Name: "visits"}, nil, "m1", nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := migrate.Validate(ctx, src, l, files, fp, b.Table, nil)
	if err != nil || !v.OK {
		t.Fatalf("validation: %v %+v", err, v)
	}
	got := map[string]int64{}
	for _, p := range v.Partitions {
		got[p.Partition] = p.IcebergRows
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows per partition %v, loaded %v", got, want)
	}
}
