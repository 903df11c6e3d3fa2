package flow

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/sink/icesink"
)

// TestCompactionKeepsSharedDeleteFiles: a position delete file written for
// two data files (iceberg-go's own Delete, which Lima used before) is
// dropped by iceberg-go's rewrite when either file is rewritten. Rewriting
// only one of them brought the other's deleted rows back; closeOverDeletes
// pulls the other file into the rewrite. The rows are counted by hand.
func TestCompactionKeepsSharedDeleteFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	sk, err := icesink.Open(ctx, icesink.Options{CatalogPath: filepath.Join(dir, "catalog.db"), Warehouse: filepath.Join(dir, "lake")})
	if err != nil {
		t.Fatal(err)
	}
	defer sk.Close()
	long, _ := plan.ParseType("long")
	st, err := sk.OpenTable(ctx, sink.TableSpec{Name: "t", Namespace: "ns", Columns: []plan.Column{{Name: "id", Type: "long"}},
		Types: []plan.Type{long}, Required: []bool{true}})
	if err != nil {
		t.Fatal(err)
	}
	load := func(n int, ids ...int64) {
		b := array.NewInt64Builder(memory.DefaultAllocator)
		b.AppendValues(ids, nil)
		col := b.NewArray()
		rec := array.NewRecordBatch(st.Schema(), []arrow.Array{col}, int64(len(ids)))
		staged, err := st.Stage(ctx, func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) })
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Commit(ctx, staged, sink.CommitProps{LoadID: "l" + string(rune('0'+n))}); err != nil {
			t.Fatal(err)
		}
	}
	load(1, 1, 2, 3)
	load(2, 4, 5, 6)
	tbl, err := st.(*icesink.Table).Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// One merge-on-read delete over both files: iceberg-go writes ONE
	// position delete file for the two (unpartitioned table).
	tx := tbl.NewTransaction()
	if err := tx.SetProperties(iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Delete(ctx, iceberg.SetPredicate(iceberg.OpIn, iceberg.Reference("id"), []iceberg.Literal{iceberg.NewLiteral(int64(2)), iceberg.NewLiteral(int64(5))}), nil); err != nil {
		t.Fatal(err)
	}
	if tbl, err = tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 2 || len(tasks[0].DeleteFiles) != 1 || len(tasks[1].DeleteFiles) != 1 || tasks[0].DeleteFiles[0].FilePath() != tasks[1].DeleteFiles[0].FilePath() {
		t.Fatalf("scenario: want 2 data files sharing one delete file, got %d tasks", len(tasks))
	}
	ids := func(tb *table.Table) []int64 {
		_, it, err := tb.Scan().ToArrowRecords(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for rec, err := range it {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, rec.Column(0).(*array.Int64).Int64Values()...)
		}
		slices.Sort(out)
		return out
	}
	want := []int64{1, 3, 4, 6}
	if got := ids(tbl); !slices.Equal(got, want) {
		t.Fatalf("scenario: %v", got)
	}
	// A plan that rewrites the first file only.
	groups := []table.CompactionTaskGroup{{Tasks: []table.FileScanTask{tasks[0]}, TotalSizeBytes: tasks[0].File.FileSizeBytes()}}
	removing := map[string]struct{}{tasks[0].File.FilePath(): {}}
	if err := closeOverDeletes(ctx, tbl, tasks, groups, removing); err != nil {
		t.Fatal(err)
	}
	res, err := tbl.RewriteDataFiles(ctx, groups, table.RewriteDataFilesOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(res.Table); !slices.Equal(got, want) {
		t.Fatalf("after compaction the table holds %v, want %v", got, want)
	}
	if len(groups[0].Tasks) != 2 || len(removing) != 2 {
		t.Fatalf("the second file sharing the delete file was not pulled into the rewrite: %d tasks", len(groups[0].Tasks))
	}
}
