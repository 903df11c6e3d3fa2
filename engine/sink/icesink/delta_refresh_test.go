package icesink

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
)

// failingCatalog fails the next n commits, after applying them when apply
// is set (a timeout after the catalog accepted the write).
type failingCatalog struct {
	inner table.CatalogIO
	n     atomic.Int32
	apply bool
}

func (f *failingCatalog) LoadTable(ctx context.Context, id table.Identifier) (*table.Table, error) {
	return f.inner.LoadTable(ctx, id)
}

func (f *failingCatalog) CommitTable(ctx context.Context, id table.Identifier, reqs []table.Requirement, ups []table.Update) (table.Metadata, string, error) {
	if f.n.Add(-1) >= 0 {
		if f.apply {
			if _, _, err := f.inner.CommitTable(ctx, id, reqs, ups); err != nil {
				return nil, "", err
			}
			return nil, "", errors.New("i/o timeout (injected after the commit was applied)")
		}
		return nil, "", table.ErrCommitFailed
	}
	return f.inner.CommitTable(ctx, id, reqs, ups)
}

// TestCommitDeltaRetriesWithoutOrphansOrDoubles: a delta commit that fails
// is retried with fresh delete files and the failed attempt's files are
// removed; a commit applied but reported failed is found by its load id
// and its delete files are kept. Either way: one snapshot, the rows the
// test expects, and every delete file on disk is in the table.
func TestCommitDeltaRetriesWithoutOrphansOrDoubles(t *testing.T) {
	for _, apply := range []bool{false, true} {
		t.Run(map[bool]string{false: "rejected", true: "applied"}[apply], func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			fc := &failingCatalog{apply: apply}
			sk, err := Open(ctx, Options{CatalogPath: filepath.Join(dir, "catalog.db"), Warehouse: filepath.Join(dir, "lake"),
				BaseBackoff: time.Millisecond, WrapCatalog: func(c table.CatalogIO) table.CatalogIO { fc.inner = c; return fc }})
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
			tb := st.(*Table)
			batch := func(ids ...int64) []arrow.RecordBatch {
				b := array.NewInt64Builder(memory.DefaultAllocator)
				b.AppendValues(ids, nil)
				return []arrow.RecordBatch{array.NewRecordBatch(tb.Schema(), []arrow.Array{b.NewArray()}, int64(len(ids)))}
			}
			stage := func(ids ...int64) sink.Staged {
				s, err := tb.Stage(ctx, func(yield func(arrow.RecordBatch, error) bool) { yield(batch(ids...)[0], nil) })
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			if _, err := tb.Commit(ctx, stage(1, 2, 3, 4), sink.CommitProps{LoadID: "l1"}); err != nil {
				t.Fatal(err)
			}
			keys := sink.Keys{Columns: []string{"id"}, Batches: batch(2, 3, 99)}
			fc.n.Store(1)
			c, err := tb.CommitDelta(ctx, stage(3), sink.CommitProps{LoadID: "l2", Watermark: "w2"}, keys)
			if err != nil {
				t.Fatal(err)
			}
			if c.Deleted != 2 || c.AlreadyCommitted != apply || c.Attempts != 2 {
				t.Fatalf("commit: deleted %d, already %v, attempts %d", c.Deleted, c.AlreadyCommitted, c.Attempts)
			}
			tbl, err := tb.Load(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(tbl.Metadata().Snapshots()); n != 2 {
				t.Fatalf("%d snapshots, want 2 (load, delta)", n)
			}
			_, it, err := tbl.Scan().ToArrowRecords(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for rec, err := range it {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, rec.Column(0).(*array.Int64).Int64Values()...)
			}
			slices.Sort(got)
			if !slices.Equal(got, []int64{1, 3, 4}) {
				t.Fatalf("rows %v, want [1 3 4]", got)
			}
			io, err := tbl.FS(ctx)
			if err != nil {
				t.Fatal(err)
			}
			_, dels, err := liveFiles(io, tbl.CurrentSnapshot())
			if err != nil {
				t.Fatal(err)
			}
			var onDisk []string
			filepath.WalkDir(filepath.Join(dir, "lake"), func(p string, d fs.DirEntry, err error) error {
				if err == nil && strings.HasSuffix(p, "-deletes.parquet") {
					onDisk = append(onDisk, p)
				}
				return nil
			})
			if len(dels) != 1 || len(onDisk) != 1 || !strings.HasSuffix(dels[0].FilePath(), onDisk[0]) {
				t.Fatalf("delete files: %d in the table, on disk %v", len(dels), onDisk)
			}
			m, err := tb.MetaRows(ctx, 0)
			if err != nil || m.Live() != 3 || m.DanglingDeleteFiles != 0 {
				t.Fatalf("metadata: %+v (%v)", m, err)
			}
		})
	}
}
