package icesink

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
)

// TestCommitFailureKeepsItsCause: a commit that fails on every attempt is
// sink.ErrCommitFailed and still carries the catalog's own error for
// errors.Is/As (the cause was formatted away with %v).
func TestCommitFailureKeepsItsCause(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fc := &failingCatalog{}
	fc.n.Store(100)
	sk, err := Open(ctx, Options{CatalogPath: filepath.Join(dir, "catalog.db"), Warehouse: filepath.Join(dir, "lake"), MaxAttempts: 3,
		BaseBackoff: time.Millisecond, WrapCatalog: func(c table.CatalogIO) table.CatalogIO { fc.inner = c; return fc }})
	if err != nil {
		t.Fatal(err)
	}
	defer sk.Close()
	long, _ := plan.ParseType("long")
	tbl, err := sk.OpenTable(ctx, sink.TableSpec{Name: "t", Namespace: "ns", Columns: []plan.Column{{Name: "id", Type: "long"}},
		Types: []plan.Type{long}, Required: []bool{true}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := tbl.Stage(ctx, func(yield func(arrow.RecordBatch, error) bool) {
		b := array.NewInt64Builder(memory.DefaultAllocator)
		defer b.Release()
		b.AppendValues([]int64{1, 2}, nil)
		yield(array.NewRecordBatch(tbl.Schema(), []arrow.Array{b.NewArray()}, 2), nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = tbl.Commit(ctx, st, sink.CommitProps{LoadID: "l1", RunID: "r1"})
	if !errors.Is(err, sink.ErrCommitFailed) || !errors.Is(err, table.ErrCommitFailed) {
		t.Fatalf("commit error %v: want sink.ErrCommitFailed wrapping the catalog's table.ErrCommitFailed", err)
	}
}
