package hivesink

import (
	"context"
	"fmt"
	"iter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Scan reads the files of commit snapshotID (0: the newest) back, as the
// committed manifests list them; files in partition folders that no
// manifest lists (an interrupted publish) are never read.
func (t *Table) Scan(ctx context.Context, snapshotID int64, columns []string) (iter.Seq2[arrow.RecordBatch, error], error) {
	ms, err := t.Manifests(ctx)
	if err != nil {
		return nil, err
	}
	files, found := liveFiles(ms, snapshotID)
	if !found {
		return nil, fmt.Errorf("hivesink: %s has no commit %d", t.spec.Name, snapshotID)
	}
	var idx []int
	if len(columns) > 0 {
		for _, c := range columns {
			i := t.schema.FieldIndices(c)
			if len(i) != 1 {
				return nil, fmt.Errorf("hivesink: %s has no column %s", t.spec.Name, c)
			}
			idx = append(idx, i[0])
		}
	}
	return func(yield func(arrow.RecordBatch, error) bool) {
		for _, f := range files {
			if !t.scanFile(ctx, f, idx, yield) {
				return
			}
		}
	}, nil
}

// scanFile yields the batches of one file; false when the caller stopped
// or an error was yielded.
func (t *Table) scanFile(ctx context.Context, f DataFile, idx []int, yield func(arrow.RecordBatch, error) bool) bool {
	if !validRel(f.Path) {
		return yield(nil, fmt.Errorf("hivesink: manifest path %q leaves the table folder", f.Path))
	}
	src, err := t.s.fs.Open(t.root + "/" + f.Path)
	if err != nil {
		return yield(nil, fmt.Errorf("hivesink: open %s: %w", f.Path, err))
	}
	defer src.Close()
	pr, err := file.NewParquetReader(src)
	if err != nil {
		return yield(nil, fmt.Errorf("hivesink: read %s: %w", f.Path, err))
	}
	defer pr.Close()
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: 8192}, t.s.opts.Allocator)
	if err != nil {
		return yield(nil, fmt.Errorf("hivesink: read %s: %w", f.Path, err))
	}
	rr, err := fr.GetRecordReader(ctx, idx, nil)
	if err != nil {
		return yield(nil, fmt.Errorf("hivesink: read %s: %w", f.Path, err))
	}
	defer rr.Release()
	var rows int64
	for rr.Next() {
		rec := rr.RecordBatch()
		rec.Retain()
		rows += rec.NumRows()
		if !yield(rec, nil) {
			return false
		}
	}
	if err := rr.Err(); err != nil {
		return yield(nil, fmt.Errorf("hivesink: read %s: %w", f.Path, err))
	}
	if rows != f.Rows {
		return yield(nil, fmt.Errorf("hivesink: %s holds %d rows, its manifest says %d", f.Path, rows, f.Rows))
	}
	return true
}
