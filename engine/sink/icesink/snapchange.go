package icesink

// What one snapshot changed, from the manifests of it and of its parent,
// and reads of just those files: gate 4 proves a delta commit (an upsert)
// from them instead of re-reading the whole table.

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/sink"
)

var _ sink.DeltaReader = (*Table)(nil)

func (t *Table) snapshot(ctx context.Context, snapshotID int64) (*table.Table, *table.Snapshot, error) {
	tbl, err := t.load(ctx)
	if err != nil {
		return nil, nil, err
	}
	snap := tbl.CurrentSnapshot()
	if snapshotID != 0 {
		snap = tbl.SnapshotByID(snapshotID)
	}
	if snap == nil {
		return nil, nil, fmt.Errorf("no snapshot %d in %s", snapshotID, strings.Join(t.ident, "."))
	}
	return tbl, snap, nil
}

// SnapshotChange compares the live files of a snapshot (0: current) with
// its parent's.
func (t *Table) SnapshotChange(ctx context.Context, snapshotID int64) (sink.SnapshotChange, error) {
	tbl, snap, err := t.snapshot(ctx, snapshotID)
	if err != nil {
		return sink.SnapshotChange{}, err
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return sink.SnapshotChange{}, err
	}
	ch := sink.SnapshotChange{SnapshotID: snap.SnapshotID}
	if snap.Summary != nil {
		ch.Replace = snap.Summary.Properties[sink.PropReplace] == "true"
	}
	if ch.Current, err = metaRows(fs, snap); err != nil {
		return ch, err
	}
	data, dels, err := liveFiles(fs, snap)
	if err != nil {
		return ch, err
	}
	var parent *table.Snapshot
	if snap.ParentSnapshotID != nil {
		parent = tbl.SnapshotByID(*snap.ParentSnapshotID)
	}
	if parent == nil {
		return ch, nil
	}
	ch.HasParent, ch.ParentID = true, parent.SnapshotID
	if ch.Parent, err = metaRows(fs, parent); err != nil {
		return ch, err
	}
	pdata, pdels, err := liveFiles(fs, parent)
	if err != nil {
		return ch, err
	}
	ref := func(df iceberg.DataFile) sink.ChangedFile {
		c := sink.ChangedFile{Path: df.FilePath(), Records: df.Count(), Bytes: df.FileSizeBytes()}
		if r, ok := fileScopedTarget(df); ok {
			c.Target = r
		}
		return c
	}
	diff := func(cur, prev []iceberg.DataFile) (added, removed, changed []sink.ChangedFile, kept int) {
		old := map[string]iceberg.DataFile{}
		for _, df := range prev {
			old[df.FilePath()] = df
		}
		now := map[string]bool{}
		for _, df := range cur {
			now[df.FilePath()] = true
			o, ok := old[df.FilePath()]
			switch {
			case !ok:
				added = append(added, ref(df))
			case o.Count() != df.Count() || o.FileSizeBytes() != df.FileSizeBytes():
				changed = append(changed, ref(df))
			default:
				kept++
			}
		}
		for _, df := range prev {
			if !now[df.FilePath()] {
				removed = append(removed, ref(df))
			}
		}
		return
	}
	ch.AddedData, ch.RemovedData, ch.ChangedData, ch.KeptData = diff(data, pdata)
	var changedDel []sink.ChangedFile
	ch.AddedDeletes, ch.RemovedDeletes, changedDel, _ = diff(dels, pdels)
	ch.ChangedData = append(ch.ChangedData, changedDel...)
	return ch, nil
}

// ScanFiles reads the named data files of a snapshot (0: current) whole,
// their deletes applied; columns nil reads every column.
func (t *Table) ScanFiles(ctx context.Context, snapshotID int64, paths, columns []string) (iter.Seq2[arrow.RecordBatch, error], error) {
	tbl, snap, err := t.snapshot(ctx, snapshotID)
	if err != nil {
		return nil, err
	}
	opts := []table.ScanOption{table.WithSnapshotID(snap.SnapshotID)}
	if len(columns) > 0 {
		opts = append(opts, table.WithSelectedFields(columns...))
	}
	sc := tbl.Scan(opts...)
	tasks, err := sc.PlanFiles(ctx)
	if err != nil {
		return nil, err
	}
	tasks = slices.DeleteFunc(tasks, func(ft table.FileScanTask) bool { return !slices.Contains(paths, ft.File.FilePath()) })
	if len(tasks) != len(paths) {
		return nil, fmt.Errorf("icesink: %d of the %d files asked for are live in snapshot %d", len(tasks), len(paths), snap.SnapshotID)
	}
	_, it, err := sc.ReadTasks(ctx, tasks)
	return it, err
}

// DeletedRows reads the named position delete files of a snapshot (0:
// current) and, from the data files they point at, the columns of the
// rows at the positions they delete (only the row groups holding them).
// again counts the positions they delete that another live delete file
// of the snapshot deletes too (a row deleted twice: the manifests' count
// then drifts below the rows a reader reads).
func (t *Table) DeletedRows(ctx context.Context, snapshotID int64, deleteFiles, columns []string, fn func(sink.FoundRows) error) (int64, error) {
	tbl, snap, err := t.snapshot(ctx, snapshotID)
	if err != nil {
		return 0, err
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return 0, err
	}
	_, dels, err := liveFiles(fs, snap)
	if err != nil {
		return 0, err
	}
	byFile := map[string][]int64{}
	found := 0
	var others []iceberg.DataFile
	for _, d := range dels {
		if !slices.Contains(deleteFiles, d.FilePath()) {
			others = append(others, d)
			continue
		}
		found++
		m, err := readPositionDeletes(ctx, fs, d)
		if err != nil {
			return 0, err
		}
		for p, ps := range m {
			byFile[p] = append(byFile[p], ps...)
		}
	}
	if found != len(deleteFiles) {
		return 0, fmt.Errorf("icesink: %d of the %d delete files asked for are live in snapshot %d", found, len(deleteFiles), snap.SnapshotID)
	}
	var again int64
	for _, d := range others {
		if ref, ok := fileScopedTarget(d); ok && byFile[ref] == nil {
			continue
		}
		m, err := readPositionDeletes(ctx, fs, d)
		if err != nil {
			return 0, err
		}
		for p, ps := range m {
			if mine := byFile[p]; mine != nil {
				for _, x := range ps {
					if slices.Contains(mine, x) {
						again++
					}
				}
			}
		}
	}
	sch := tbl.Schema()
	ids := make([]int32, len(columns))
	for i, n := range columns {
		f, ok := sch.FindFieldByName(n)
		if !ok {
			return 0, fmt.Errorf("icesink: no column %s", n)
		}
		ids[i] = int32(f.ID)
	}
	for _, path := range slices.Sorted(func(yield func(string) bool) {
		for p := range byFile {
			if !yield(p) {
				return
			}
		}
	}) {
		pos := byFile[path]
		slices.Sort(pos)
		if err := rowsAt(ctx, fs, path, ids, columns, pos, fn); err != nil {
			return 0, err
		}
	}
	return again, nil
}

// rowsAt reads the columns of the rows at positions pos (ascending) of a
// data file, reading only the row groups that hold them.
func rowsAt(ctx context.Context, fs icebergio.IO, path string, ids []int32, names []string, pos []int64, fn func(sink.FoundRows) error) error {
	f, err := fs.Open(path)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	pr, err := file.NewParquetReader(f)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	defer pr.Close()
	md := pr.MetaData()
	leaf := make([]int, len(ids))
	for i, id := range ids {
		leaf[i] = -1
		for c := 0; c < md.Schema.NumColumns(); c++ {
			if md.Schema.Column(c).SchemaNode().FieldID() == id {
				leaf[i] = c
			}
		}
		if leaf[i] < 0 {
			leaf[i] = md.Schema.ColumnIndexByName(names[i])
		}
		if leaf[i] < 0 {
			return fmt.Errorf("read %s: no column %s", path, names[i])
		}
	}
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	var start int64
	k := 0
	for g := 0; g < md.NumRowGroups() && k < len(pos); g++ {
		n := md.RowGroup(g).NumRows()
		if pos[k] >= start+n {
			start += n
			continue
		}
		rr, err := fr.GetRecordReader(ctx, leaf, []int{g})
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
		at := start
		for rr.Next() && k < len(pos) {
			rec := rr.RecordBatch()
			var rows []int
			var ps []int64
			for k < len(pos) && pos[k] < at+rec.NumRows() {
				rows = append(rows, int(pos[k]-at))
				ps = append(ps, pos[k])
				k++
			}
			at += rec.NumRows()
			if len(rows) > 0 {
				if err := fn(sink.FoundRows{File: path, Rec: rec, Rows: rows, Pos: ps}); err != nil {
					rr.Release()
					return err
				}
			}
		}
		err = rr.Err()
		rr.Release()
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
		start += n
	}
	if k < len(pos) {
		return fmt.Errorf("read %s: a delete points at position %d, beyond its %d rows", path, pos[k], start)
	}
	return nil
}
