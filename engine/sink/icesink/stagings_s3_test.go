package icesink_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/sink/icesink"
	"github.com/lima-lake/lima/engine/sink/sinktest"
	"github.com/lima-lake/lima/internal/s3test"
)

// TestStagingInventoryS3: on S3 the files of a staging that was never
// committed are removed too (the object store lists objects as irregular
// files, not regular ones), and committed files stay.
func TestStagingInventoryS3(t *testing.T) {
	ctx := context.Background()
	cl := s3test.Client(t)
	bucket := s3test.Bucket(t, cl)
	cfg := s3test.Config()
	inv := &memInventory{open: map[string]string{}}
	sk, err := icesink.Open(ctx, icesink.Options{CatalogPath: filepath.Join(t.TempDir(), "catalog.db"), Warehouse: "s3://" + bucket + "/wh", S3: &cfg, Inventory: inv})
	if err != nil {
		t.Fatal(err)
	}
	defer sk.Close()
	tbl, err := sk.OpenTable(ctx, sinktest.Spec("staged"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := tbl.Stage(ctx, sinktest.Batches(tbl.Schema(), 1, 2, 3))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Commit(ctx, st, sink.CommitProps{LoadID: "load-1", RunID: "r1"}); err != nil {
		t.Fatal(err)
	}
	if _, err = tbl.Stage(ctx, sinktest.Batches(tbl.Schema(), 5, 6)); err != nil {
		t.Fatal(err)
	}
	killedID := inv.begun[len(inv.begun)-1]
	count := func(id string) (n int) {
		objs, err := cl.List(ctx, bucket, "wh/")
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if strings.Contains(o.Key, id) && strings.HasSuffix(o.Key, ".parquet") {
				n++
			}
		}
		return n
	}
	staged := count(killedID)
	if staged == 0 {
		t.Fatal("the uncommitted staging wrote no object")
	}
	n, err := any(sk).(sink.StagingRemover).RemoveStaged(ctx, "conformance.staged", killedID)
	if err != nil || n != staged || count(killedID) != 0 {
		t.Fatalf("RemoveStaged = %d, %v; want %d objects removed, %d left", n, err, staged, count(killedID))
	}
	if c := sinktest.Count(t, tbl); c != 3 {
		t.Fatalf("table rows %d after the removal, want 3", c)
	}
}
